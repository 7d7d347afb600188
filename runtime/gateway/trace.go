package gateway

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/internal/tracing"
	"github.com/toolgate/toolgate/tools"
)

// maxTracedContent bounds the arguments and result a span carries when
// [Options.TraceContent] is on.
const maxTracedContent = 4096

// startSpan starts the call's "execute_tool" span. Its name gets the
// tool's ID only once the tool is known: the client's raw tool string is
// never a span name (unbounded, and possibly a probe).
func (g *Gateway) startSpan(ctx context.Context, call Call) (context.Context, trace.Span) {
	ctx, span := g.tracer.Start(ctx, tracing.OpExecuteTool.SpanName(""), trace.WithAttributes(
		tracing.OpExecuteTool.Attribute(), tracing.ToolType.String("function"),
		tracing.ConversationID.String(call.SessionID), tracing.Step.Int(call.Step)))
	if g.opts.TraceContent && span.IsRecording() {
		span.SetAttributes(tracing.ToolArguments.String(textcut.Prefix(string(call.Arguments), maxTracedContent)))
	}
	return ctx, span
}

// endSpan records the outcome: ok or cached with the attempts, or the
// error type (never the error's message, which may name internals).
func (g *Gateway) endSpan(span trace.Span, tool *tools.Tool, res *Result, gerr *Error) {
	if !span.IsRecording() {
		span.End()
		return
	}
	if tool != nil {
		span.SetName(tracing.OpExecuteTool.SpanName(tool.ID))
		span.SetAttributes(tracing.ToolName.String(tool.Card.Name), tracing.ToolID.String(tool.ID))
	}
	if gerr != nil {
		span.SetAttributes(tracing.Outcome.String(string(gerr.Type)))
		tracing.End(span, gerr, string(gerr.Type))
		return
	}
	outcome := "ok"
	if res.Cached {
		outcome = "cached"
	}
	span.SetAttributes(tracing.Outcome.String(outcome), tracing.Cached.Bool(res.Cached), tracing.Attempts.Int(res.Attempts))
	if g.opts.TraceContent {
		span.SetAttributes(tracing.ToolResult.String(textcut.Prefix(string(res.Value), maxTracedContent)))
	}
	span.End()
}
