package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/runtime/gateway"
)

func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestSpans pins the execute_tool span of each outcome: its name carries
// the tool's ID only for an admitted call, the outcome is the error type,
// and no argument or result is recorded unless TraceContent is on.
func TestSpans(t *testing.T) {
	for row, content := range []bool{false, true} {
		t.Run(fmt.Sprint(row), func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			e := newEnv(t, func(o *gateway.Options) { o.TracerProvider = tp; o.TraceContent = content })
			ctx := context.Background()
			call := transferCall(alice, "s-trace", 1, okArgs)
			if _, err := e.Gateway.Execute(ctx, call); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Gateway.Execute(ctx, call); err != nil {
				t.Fatal(err)
			}
			_, _ = e.Gateway.Execute(ctx, gateway.Call{Principal: alice, SessionID: "s-trace", Step: 2, Tool: "admin/delete_all", Arguments: []byte(`{}`)})
			_, _ = e.Gateway.Execute(ctx, transferCall(alice, "s-trace", 3, `{"source_account":"ACC-1"}`))

			spans := rec.Ended()
			if len(spans) != 4 {
				t.Fatalf("content=%v: %d spans, want 4", content, len(spans))
			}
			want := []struct {
				name, outcome string
				cached        bool
				status        codes.Code
			}{
				{"execute_tool bank/transfer_funds", "ok", false, codes.Unset},
				{"execute_tool bank/transfer_funds", "cached", true, codes.Unset},
				{"execute_tool", string(gateway.PermissionDenied), false, codes.Error},
				{"execute_tool bank/transfer_funds", string(gateway.ValidationError), false, codes.Error},
			}
			for i, w := range want {
				t.Run(w.name, func(t *testing.T) {
					s := spans[i]
					a := spanAttrs(s)
					if s.Name() != w.name || a["toolgate.outcome"].AsString() != w.outcome || s.Status().Code != w.status {
						t.Errorf("content=%v span %d = %q outcome %q status %v, want %q %q %v", content, i, s.Name(),
							a["toolgate.outcome"].AsString(), s.Status().Code, w.name, w.outcome, w.status)
					}
					if a["gen_ai.operation.name"].AsString() != "execute_tool" || a["gen_ai.conversation.id"].AsString() != "s-trace" {
						t.Errorf("span %d attributes = %v, want the GenAI operation and the session", i, a)
					}
					if w.outcome == "ok" || w.outcome == "cached" {
						if a["toolgate.cached"].AsBool() != w.cached || a["gen_ai.tool.name"].AsString() != "transfer_funds" {
							t.Errorf("span %d attributes = %v, want cached=%v and the tool's name", i, a, w.cached)
						}
					}
					_, hasArgs := a["gen_ai.tool.call.arguments"]
					if hasArgs != content {
						t.Errorf("content=%v span %d has arguments: %v", content, i, hasArgs)
					}
					for _, kv := range s.Attributes() {
						if !content && strings.Contains(kv.Value.Emit(), "ACC-0000") {
							t.Errorf("span %d carries an argument value in %s without TraceContent", i, kv.Key)
						}
					}
					if strings.Contains(s.Status().Description, "delete_all") {
						t.Errorf("span %d status %q carries the refused tool", i, s.Status().Description)
					}
				})
			}
		})
	}
}
