package runtime

import (
	"context"
	"encoding/json"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/internal/tracing"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/tools/discovery"
)

// The runtime's spans ([Options.TracerProvider]): one "invoke_agent" span a
// turn ([Session.Run]), with a "toolgate.discover" span for each search and a
// "chat" span for each model request below it; the gateway adds an
// "execute_tool" span for each call. Attributes follow the GenAI semantic
// conventions; the user's text and the model's replies are recorded only
// with [Options.TraceContent].

func (a *Agent) startTurn(ctx context.Context, s *Session) (context.Context, trace.Span) {
	ctx, span := a.tracer.Start(ctx, tracing.OpInvokeAgent.SpanName("toolgate"), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(tracing.OpInvokeAgent.Attribute(), tracing.AgentName.String("toolgate"),
			tracing.ConversationID.String(s.id)))
	return ctx, span
}

func (a *Agent) endTurn(span trace.Span, turn *Turn, err error) {
	span.SetAttributes(tracing.InputTokens.Int(turn.Usage.PromptTokens), tracing.OutputTokens.Int(turn.Usage.CompletionTokens),
		attribute.Int("toolgate.turn.steps", turn.Steps), attribute.Int("toolgate.turn.calls", len(turn.Calls)))
	tracing.End(span, err, errorType(err))
}

func (a *Agent) startDiscovery(ctx context.Context, query string, authorized int) (context.Context, trace.Span) {
	ctx, span := a.tracer.Start(ctx, tracing.DiscoverySpanName, trace.WithAttributes(tracing.Authorized.Int(authorized)))
	if a.opts.TraceContent {
		span.SetAttributes(tracing.Query.String(query))
	}
	return ctx, span
}

func (a *Agent) endDiscovery(span trace.Span, sl *discovery.Shortlist, err error) {
	if sl != nil {
		names := make([]string, len(sl.Candidates))
		for i, c := range sl.Candidates {
			names[i] = c.Tool.ID
		}
		span.SetAttributes(tracing.Candidates.StringSlice(names), tracing.Reformulated.Bool(sl.Reformulated),
			tracing.Confidence.Float64(sl.Confidence))
	}
	tracing.End(span, err, errorType(err))
}

func (a *Agent) startChat(ctx context.Context, step int, req *llm.Request) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{tracing.OpChat.Attribute(), tracing.ProviderName.String(a.provider),
		tracing.Step.Int(step), tracing.Mode.String(req.Constraint.Mode.String())}
	if req.MaxTokens > 0 {
		attrs = append(attrs, tracing.RequestMaxTok.Int(req.MaxTokens))
	}
	if req.Temperature != nil {
		attrs = append(attrs, tracing.RequestTemp.Float64(*req.Temperature))
	}
	ctx, span := a.tracer.Start(ctx, tracing.OpChat.SpanName(a.provider), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if a.opts.TraceContent {
		if data, err := json.Marshal(req.Messages); err == nil {
			span.SetAttributes(tracing.InputMessages.String(string(data)))
		}
	}
	return ctx, span
}

func (a *Agent) endChat(span trace.Span, resp *llm.Response, err error) {
	if resp != nil {
		span.SetAttributes(tracing.InputTokens.Int(resp.Usage.PromptTokens), tracing.OutputTokens.Int(resp.Usage.CompletionTokens),
			tracing.CachedInputTokens.Int(resp.Usage.CachedPromptTokens), tracing.ToolDefTokens.Int(resp.Usage.ToolDefinitionTokens),
			tracing.CatalogTokens.Int(resp.Usage.CatalogTokens))
		if resp.FinishReason != "" {
			span.SetAttributes(tracing.FinishReasons.StringSlice([]string{string(resp.FinishReason)}))
		}
		if a.opts.TraceContent {
			span.SetAttributes(tracing.OutputMessages.String(resp.Raw))
		}
	}
	tracing.End(span, err, errorType(err))
}

// errorType is a bounded error.type for a span: the llm output problem,
// the kind of llm error, or the generic other.
func errorType(err error) string {
	if err == nil {
		return ""
	}
	var oe *llm.OutputError
	var se *llm.StatusError
	var ce *llm.ConstraintError
	switch {
	case errors.As(err, &oe):
		return "output_" + string(oe.Problem)
	case errors.As(err, &se):
		return "http_status"
	case errors.As(err, &ce):
		return "constraint_rejected"
	case errors.Is(err, ErrStepBudget):
		return "step_budget"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return tracing.ErrorTypeOtherName
}
