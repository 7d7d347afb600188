package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/internal/runtimetest"
	"github.com/toolgate/toolgate/tools"
)

// callerKey is a context key of the caller of Session.Run.
type callerKey struct{}

// TestSpanTree pins the spans of one turn: the model calls a tool through
// the gateway, then answers. invoke_agent is the root; each step has a
// discovery and a chat span, and the call an execute_tool span, all
// children of the turn, and the Observer's ctx carries the turn. Without TraceContent no span carries the user's
// words or the arguments.
func TestSpanTree(t *testing.T) {
	for i, content := range []bool{false, true} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			weather, err := tools.NewFunc("weather/get_weather", tools.Card{Summary: "Current weather for a city", ReadOnly: true},
				func(_ context.Context, in weatherIn) (weatherOut, error) {
					return weatherOut{City: in.City, Sky: "clear"}, nil
				})
			if err != nil {
				t.Fatal(err)
			}
			reg := tools.NewRegistry()
			if err := reg.Add(weather); err != nil {
				t.Fatal(err)
			}
			gw, disc := runtimetest.Stack(t, reg, &gateway.Options{TracerProvider: tp, TraceContent: content, Logger: quiet})
			model := scripted.New([]scripted.Reply{scripted.Call("get_weather", `{"city":"Paris"}`), scripted.Answer("It is clear in Paris.")}, nil)
			type observed struct {
				kind   runtime.EventKind
				span   trace.SpanID
				caller any
			}
			var events []observed
			observe := func(ctx context.Context, e runtime.Event) {
				events = append(events, observed{e.Kind, trace.SpanContextFromContext(ctx).SpanID(), ctx.Value(callerKey{})})
			}
			agent, err := runtime.New(reg, disc, gw, model, &runtime.Options{Logger: quiet, Strategy: runtime.StrategyProgressive,
				TracerProvider: tp, TraceContent: content, Observer: observe})
			if err != nil {
				t.Fatal(err)
			}
			sess := agent.NewSession(tools.Principal{ID: "u1", Tenant: "acme"}, "session-1", nil)
			ctx := context.WithValue(context.Background(), callerKey{}, "request-7")
			if _, err := sess.Run(ctx, "What is the weather in Paris?"); err != nil {
				t.Fatal(err)
			}

			spans := rec.Ended()
			var names []string
			var root sdktrace.ReadOnlySpan
			for _, s := range spans {
				names = append(names, s.Name())
				if !s.Parent().IsValid() {
					root = s
				}
			}
			want := []string{"toolgate.discover", "chat scripted", "execute_tool weather/get_weather", "toolgate.discover", "chat scripted", "invoke_agent toolgate"}
			if strings.Join(names, ",") != strings.Join(want, ",") {
				t.Fatalf("content=%v spans = %v, want %v", content, names, want)
			}
			if root == nil || root.Name() != "invoke_agent toolgate" {
				t.Fatalf("root span = %v, want invoke_agent", root)
			}
			for _, s := range spans[:len(spans)-1] {
				if s.Parent().SpanID() != root.SpanContext().SpanID() || s.SpanContext().TraceID() != root.SpanContext().TraceID() {
					t.Errorf("span %s is not a child of the turn", s.Name())
				}
			}
			attrs := func(s sdktrace.ReadOnlySpan) map[string]string {
				m := map[string]string{}
				for _, kv := range s.Attributes() {
					m[string(kv.Key)] = kv.Value.Emit()
				}
				return m
			}
			chat := attrs(spans[1])
			if chat["gen_ai.operation.name"] != "chat" || chat["gen_ai.provider.name"] != "scripted" || chat["toolgate.step"] != "1" {
				t.Errorf("chat span attributes = %v", chat)
			}
			if attrs(spans[0])["toolgate.discovery.candidates"] != `["weather/get_weather"]` {
				t.Errorf("discovery span attributes = %v, want the candidates", attrs(spans[0]))
			}
			exec := attrs(spans[2])
			if exec["toolgate.outcome"] != "ok" || exec["gen_ai.tool.name"] != "get_weather" || exec["gen_ai.conversation.id"] != "session-1" {
				t.Errorf("execute_tool span attributes = %v", exec)
			}
			// The observer's ctx is the step's: the caller's values and the
			// turn's span, so a log line or a span it starts joins the turn.
			if len(events) == 0 {
				t.Fatal("the observer saw no event")
			}
			for _, e := range events {
				if e.span != root.SpanContext().SpanID() || e.caller != "request-7" {
					t.Errorf("observer ctx of %s: span %v, value %v; want the turn's span %v and the caller's value",
						e.kind, e.span, e.caller, root.SpanContext().SpanID())
				}
			}
			if turn := attrs(root); turn["gen_ai.operation.name"] != "invoke_agent" || turn["toolgate.turn.calls"] != "1" {
				t.Errorf("turn span attributes = %v", turn)
			}
			leaked := false
			for _, s := range spans {
				for _, v := range attrs(s) {
					if strings.Contains(v, "Paris") {
						leaked = true
					}
				}
			}
			if leaked != content {
				t.Errorf("content=%v: a span carries the user's words or the arguments: %v", content, leaked)
			}
		})
	}
}
