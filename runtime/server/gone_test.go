package server_test

import (
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
)

// A call re-sent over HTTP after its tool has gone from the registry gets
// the call's outcome (200, "cached": true), not 404 UNKNOWN_TOOL, which
// tells the client that nothing ran. The record is reached by the tool's
// ID only: a bare name resolves to no tool once it has gone, and no
// record is keyed by one; another principal's same call finds nothing.
func TestHTTPGoneToolReplays(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	body := callBody("s1", 1, "bank/transfer_funds", okArgs)
	first := h.do(t, "POST", "/v1/tools/call", "tok-alice", body)
	if first.status != 200 {
		t.Fatalf("first call = %d %s", first.status, first.raw)
	}
	h.Registry.Remove("bank/transfer_funds")
	again := h.do(t, "POST", "/v1/tools/call", "tok-alice", body)
	if again.status != 200 || again.body["cached"] != true || again.body["idempotency_key"] != first.body["idempotency_key"] {
		t.Errorf("re-send after the tool went = %d %s; want 200, cached, key %v", again.status, again.raw, first.body["idempotency_key"])
	}
	bare := h.do(t, "POST", "/v1/tools/call", "tok-alice", callBody("s1", 1, "transfer_funds", okArgs))
	wantError(t, "re-send by bare name", bare, 404, gateway.UnknownTool, false)
	other := h.do(t, "POST", "/v1/tools/call", "tok-mallory", body)
	wantError(t, "another principal's same call", other, 404, gateway.UnknownTool, false)
	if n := h.Runs.Total(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
}
