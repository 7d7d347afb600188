package mcpserver_test

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/internal/runtimetest"
	"github.com/toolgate/toolgate/runtime/mcpserver"
)

// TestTraceContextFromMeta: at every revision, a call whose _meta carries
// a W3C traceparent (SEP-414) is executed in that trace: the gateway's
// execute_tool span is a child of the client's span. A malformed
// traceparent is ignored, and the call still runs.
func TestTraceContextFromMeta(t *testing.T) {
	const (
		traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		spanID  = "00f067aa0ba902b7"
	)
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			f := newFixture(t)
			rec := tracetest.NewSpanRecorder()
			f.gw, f.disc = runtimetest.Stack(t, f.reg, &gateway.Options{Logger: quiet,
				TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
			_, ts := f.serveWith(t, mcpserver.Options{})
			cs := connectAt(t, ts.URL, "teller-token", rev, nil)
			for _, parent := range []string{"00-" + traceID + "-" + spanID + "-01", "not-a-traceparent"} {
				t.Run(parent, func(t *testing.T) {
					res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "call_tool",
						Meta:      sdk.Meta{"traceparent": parent, "tracestate": "vendor=1"},
						Arguments: map[string]any{"name": "bank/get_balance", "arguments": map[string]any{"account": "A"}}})
					if err != nil || res.IsError {
						t.Fatalf("call with traceparent %q = %v, %v", parent, res, err)
					}
				})
			}
			spans := rec.Ended()
			if len(spans) != 2 {
				t.Fatalf("%d spans ended, want 2 execute_tool spans", len(spans))
			}
			joined := spans[0]
			if got := joined.SpanContext().TraceID().String(); got != traceID || joined.Parent().SpanID().String() != spanID || !joined.Parent().IsRemote() {
				t.Errorf("span %q: trace %s parent %s (remote %v), want trace %s under the client's span %s",
					joined.Name(), got, joined.Parent().SpanID(), joined.Parent().IsRemote(), traceID, spanID)
			}
			if joined.SpanContext().TraceState().Get("vendor") != "1" {
				t.Errorf("tracestate %q, want vendor=1 carried", joined.SpanContext().TraceState())
			}
			if spans[1].Parent().IsValid() {
				t.Errorf("a malformed traceparent gave the span a parent %v", spans[1].Parent())
			}
		})
	}
}
