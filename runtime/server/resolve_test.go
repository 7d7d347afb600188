package server_test

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

// TestResolveBareNames: "tool" is an ID, or a bare name that exactly one
// tool of the caller's tenant has (whatever its scopes; docs/design.md
// invariant 8). A bare name several tools of the tenant share is refused
// for every caller, even one who may use only one of them, with the
// candidate IDs the caller may use and never the others; a caller who may
// use none of them gets UNKNOWN_TOOL, as for a name that does not exist.
func TestResolveBareNames(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	echo := h.Echo
	if err := h.Registry.Add(
		tools.Tool{ID: "ledger/get_balance", Card: tools.Card{Name: "get_balance", Scopes: []string{"accounts:read"}}, Handler: echo},
		tools.Tool{ID: "vault/get_balance", Card: tools.Card{Name: "get_balance", Scopes: []string{"vault:read"}}, Handler: echo},
		tools.Tool{ID: "globex/get_balance", Card: tools.Card{Name: "get_balance"}, Tenants: []string{"globex"}, Handler: echo},
		tools.Tool{ID: "vault/transfer_funds", Card: tools.Card{Name: "transfer_funds", Scopes: []string{"vault:write"}}, Handler: echo},
		tools.Tool{ID: "acme/export", Card: tools.Card{Name: "export"}, Tenants: []string{"acme"}, Handler: echo},
	); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, token, tool, args string
		status                  int
		typ                     gateway.ErrorType
		candidates              []string
	}{
		{"ID", "tok-alice", "bank/transfer_funds", okArgs, 200, "", nil},
		{"bare name, one tool in the tenant", "tok-alice", "export", `{}`, 200, "", nil},
		{"bare name, ambiguous", "tok-alice", "get_balance", `{"account":"ACC-00001"}`, 422, gateway.ValidationError, []string{"bank/get_balance", "ledger/get_balance"}},
		{"bare name, ambiguous, the caller may use one", "tok-alice", "transfer_funds", okArgs, 422, gateway.ValidationError, []string{"bank/transfer_funds"}},
		{"bare name, ambiguous, the caller may use none", "tok-mallory", "transfer_funds", okArgs, 404, gateway.UnknownTool, nil},
		{"bare name, ambiguous, another caller", "tok-mallory", "get_balance", `{"account":"ACC-00001"}`, 422, gateway.ValidationError, []string{"bank/get_balance", "ledger/get_balance"}},
		{"bare name of a tool the caller may not use", "tok-mallory", "issue_full_refund", `{"transaction_id":"tx-1"}`, 404, gateway.UnknownTool, nil},
		{"bare name without a handler", "tok-alice", "only", `{}`, 404, gateway.UnknownTool, nil},
		{"unknown bare name", "tok-alice", "steal_funds", `{}`, 404, gateway.UnknownTool, nil},
		{"ID the caller may not use", "tok-alice", "vault/transfer_funds", `{}`, 403, gateway.PermissionDenied, nil},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := h.Runs.Total()
			r := h.do(t, "POST", "/v1/tools/call", tc.token, callBody("r", i+1, tc.tool, tc.args))
			if tc.typ == "" {
				if r.status != tc.status || h.Runs.Total() != before+1 {
					t.Errorf("call %s = %d %s; want %d and one run", tc.tool, r.status, r.raw, tc.status)
				}
				return
			}
			wantError(t, "call "+tc.tool, r, tc.status, tc.typ, tc.typ == gateway.ValidationError)
			var got []string
			for _, c := range asSlice(r.body["candidates"]) {
				got = append(got, c.(string))
			}
			if !slices.Equal(got, tc.candidates) {
				t.Errorf("call %s: candidates = %v, want %v (%s)", tc.tool, got, tc.candidates, r.raw)
			}
			if h.Runs.Total() != before {
				t.Errorf("call %s: a refused call ran", tc.tool)
			}
		})
	}
	// The resolved call's key is the ID's key: the bare name and the ID
	// are the same call.
	a := h.do(t, "POST", "/v1/tools/call", "tok-alice", callBody("same", 1, "export", `{}`))
	b := h.do(t, "POST", "/v1/tools/call", "tok-alice", callBody("same", 1, "acme/export", `{}`))
	if a.body["idempotency_key"] != b.body["idempotency_key"] || b.body["cached"] != true {
		t.Errorf("bare name then ID = %s / %s; want the same key, the second cached", a.raw, b.raw)
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
