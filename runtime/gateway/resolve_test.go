package gateway_test

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

// TestResolveBareNames: "tool" is an ID, or a bare name that exactly one
// tool the caller may use has; an ambiguous name is refused with the
// candidate IDs the caller may use, never with the others.
func TestResolveBareNames(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	echo := h.echo
	if err := h.reg.Add(
		tools.Tool{ID: "ledger/get_balance", Card: tools.Card{Name: "get_balance", Scopes: []string{"accounts:read"}}, Handler: echo},
		tools.Tool{ID: "vault/get_balance", Card: tools.Card{Name: "get_balance", Scopes: []string{"vault:read"}}, Handler: echo},
		tools.Tool{ID: "globex/get_balance", Card: tools.Card{Name: "get_balance"}, Tenants: []string{"globex"}, Handler: echo},
		tools.Tool{ID: "vault/transfer_funds", Card: tools.Card{Name: "transfer_funds", Scopes: []string{"vault:write"}}, Handler: echo},
		tools.Tool{ID: "docs/only", Card: tools.Card{Name: "only"}},
	); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, token, tool, args string
		status                  int
		typ                     gateway.ErrorType
		ran                     string // the tool ID that must have run
		candidates              []string
	}{
		{"ID", "tok-alice", "bank/transfer_funds", okArgs, 200, "", "bank/transfer_funds", nil},
		{"bare name, one usable tool", "tok-alice", "transfer_funds", okArgs, 200, "", "bank/transfer_funds", nil},
		{"bare name, ambiguous", "tok-alice", "get_balance", `{"account":"ACC-00001"}`, 422, gateway.ValidationError, "", []string{"bank/get_balance", "ledger/get_balance"}},
		{"bare name of a tool the caller may not use", "tok-mallory", "transfer_funds", okArgs, 404, gateway.UnknownTool, "", nil},
		{"bare name without a handler", "tok-alice", "only", `{}`, 404, gateway.UnknownTool, "", nil},
		{"unknown bare name", "tok-alice", "steal_funds", `{}`, 404, gateway.UnknownTool, "", nil},
		{"ID the caller may not use", "tok-alice", "vault/transfer_funds", `{}`, 403, gateway.PermissionDenied, "", nil},
	}
	for i, tc := range tests {
		before := h.runs.total()
		r := h.do(t, "POST", "/v1/tools/call", tc.token, callBody("r", i+1, tc.tool, tc.args))
		if tc.typ == "" {
			if r.status != tc.status || h.runs.total() != before+1 {
				t.Errorf("%s: %s = %d %s; want %d and one run", tc.name, tc.tool, r.status, r.raw, tc.status)
			}
			continue
		}
		wantError(t, tc.name, r, tc.status, tc.typ, tc.typ == gateway.ValidationError)
		var got []string
		for _, c := range asSlice(r.body["candidates"]) {
			got = append(got, c.(string))
		}
		if !slices.Equal(got, tc.candidates) {
			t.Errorf("%s: candidates = %v, want %v (%s)", tc.name, got, tc.candidates, r.raw)
		}
		if h.runs.total() != before {
			t.Errorf("%s: a refused call ran", tc.name)
		}
	}
	// The resolved call's key is the ID's key: the bare name and the ID
	// are the same call.
	a := h.do(t, "POST", "/v1/tools/call", "tok-alice", callBody("same", 1, "transfer_funds", okArgs))
	b := h.do(t, "POST", "/v1/tools/call", "tok-alice", callBody("same", 1, "bank/transfer_funds", okArgs))
	if a.body["idempotency_key"] != b.body["idempotency_key"] || b.body["cached"] != true {
		t.Errorf("bare name then ID = %s / %s; want the same key, the second cached", a.raw, b.raw)
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
