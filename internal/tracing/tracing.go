// Package tracing holds what the runtime and the gateway share to emit
// OpenTelemetry spans: the tracer lookup with a no-op default and the
// attribute keys, those of the GenAI semantic conventions (gen_ai.*) and
// toolgate's own (toolgate.*).
//
// Spans carry names, counts and outcomes. They never carry a user's text,
// a model's reply or a tool's arguments or result unless the caller opts
// in (the Content flag of the runtime's and the gateway's options).
package tracing

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope is the instrumentation scope name of toolgate's tracers.
const Scope = "github.com/toolgate/toolgate"

// Tracer returns tp's tracer for toolgate, or a no-op one when tp is nil.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(Scope)
}

// The GenAI semantic conventions' attribute keys and operation names used
// here (https://opentelemetry.io/docs/specs/semconv/gen-ai/).
const (
	OperationName  = attribute.Key("gen_ai.operation.name")
	ProviderName   = attribute.Key("gen_ai.provider.name")
	RequestModel   = attribute.Key("gen_ai.request.model")
	RequestTemp    = attribute.Key("gen_ai.request.temperature")
	RequestMaxTok  = attribute.Key("gen_ai.request.max_tokens")
	InputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	OutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	FinishReasons  = attribute.Key("gen_ai.response.finish_reasons")
	ConversationID = attribute.Key("gen_ai.conversation.id")
	AgentName      = attribute.Key("gen_ai.agent.name")
	ToolName       = attribute.Key("gen_ai.tool.name")
	ToolCallID     = attribute.Key("gen_ai.tool.call.id")
	ToolType       = attribute.Key("gen_ai.tool.type")
	ToolArguments  = attribute.Key("gen_ai.tool.call.arguments")
	ToolResult     = attribute.Key("gen_ai.tool.call.result")
	InputMessages  = attribute.Key("gen_ai.input.messages")
	OutputMessages = attribute.Key("gen_ai.output.messages")
	ErrorType      = attribute.Key("error.type")
)

// Operation is a GenAI operation name: the value of [OperationName] and
// the first word of the span's name.
type Operation string

// The operations toolgate's spans are.
const (
	OpInvokeAgent Operation = "invoke_agent" // a turn of the agent (the runtime's Session.Run)
	OpChat        Operation = "chat"         // a request to the model
	OpExecuteTool Operation = "execute_tool" // a call through the gateway
)

// Attribute is the [OperationName] attribute naming o.
func (o Operation) Attribute() attribute.KeyValue { return OperationName.String(string(o)) }

// SpanName is the conventions' span name of o on target ("chat gpt-4o",
// "execute_tool bank/pay"): o and target with a space between, or o
// alone when target is empty.
func (o Operation) SpanName(target string) string {
	if target == "" {
		return string(o)
	}
	return string(o) + " " + target
}

// toolgate's own attribute keys.
const (
	ToolID             = attribute.Key("toolgate.tool.id")
	Step               = attribute.Key("toolgate.step")
	Mode               = attribute.Key("toolgate.mode")
	Outcome            = attribute.Key("toolgate.outcome")
	Cached             = attribute.Key("toolgate.cached")
	Attempts           = attribute.Key("toolgate.attempts")
	Authorized         = attribute.Key("toolgate.discovery.authorized")
	Candidates         = attribute.Key("toolgate.discovery.candidates")
	Reformulated       = attribute.Key("toolgate.discovery.reformulated")
	Confidence         = attribute.Key("toolgate.discovery.confidence")
	ToolDefTokens      = attribute.Key("toolgate.usage.tool_definition_tokens")
	CatalogTokens      = attribute.Key("toolgate.usage.catalog_tokens")
	CachedInputTokens  = attribute.Key("toolgate.usage.cached_input_tokens")
	SharedPrefixBytes  = attribute.Key("toolgate.prompt.shared_prefix_bytes")
	Query              = attribute.Key("toolgate.discovery.query")
	DiscoverySpanName  = "toolgate.discover"
	ErrorTypeOtherName = "_OTHER"
)

// End ends span, recording err (when not nil) as the span's error status
// with errType as error.type.
func End(span trace.Span, err error, errType string) {
	if err != nil {
		if errType == "" {
			errType = ErrorTypeOtherName
		}
		span.SetAttributes(ErrorType.String(errType))
		span.SetStatus(codes.Error, errType)
	}
	span.End()
}
