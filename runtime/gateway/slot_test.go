package gateway_test

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

// TestSlotBelongsToPrincipal: a principal of the same tenant who knows (or
// guesses) another's session id can neither block that principal's step,
// nor replay its result, nor learn from an answer that someone else called.
func TestSlotBelongsToPrincipal(t *testing.T) {
	e := newEnv(t, nil)
	carol := tools.Principal{ID: "carol", Tenant: "acme", Scopes: []string{"payments:write"}}
	other := `{"source_account":"ACC-00001","target_account":"ACC-00003","amount":7}`
	tests := []struct {
		name   string
		who    tools.Principal
		args   string
		cached bool
		want   gateway.ErrorType
	}{
		{"carol occupies alice's next step first", carol, other, false, ""},
		{"alice's own call of that step runs", alice, okArgs, false, ""},
		{"alice retried: replayed", alice, okArgs, true, ""},
		{"carol sends alice's arguments: a mismatch with her own call, never alice's result", carol, okArgs, false, gateway.IdempotencyMismatch},
		{"carol's own first call replays for her", carol, other, true, ""},
		{"alice's other arguments: mismatch on her own slot", alice, other, false, gateway.IdempotencyMismatch},
	}
	keys := map[string]string{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.Gateway.Execute(ctx, transferCall(tc.who, "guessable-session", 1, tc.args))
			if tc.want != "" {
				ge := wantType(t, tc.name, err, tc.want)
				if strings.Contains(ge.Message, "carol") || strings.Contains(ge.Message, "another principal") {
					t.Errorf("%s: message %q tells of another principal", tc.name, ge.Message)
				}
				return
			}
			if err != nil || res.Cached != tc.cached {
				t.Fatalf("%s = %+v, %v; want success, cached %v", tc.name, res, err, tc.cached)
			}
			if k, seen := keys[tc.who.ID+tc.args]; seen && k != res.IdempotencyKey {
				t.Errorf("%s: key %s, want %s", tc.name, res.IdempotencyKey, k)
			}
			keys[tc.who.ID+tc.args] = res.IdempotencyKey
		})
	}
	if n := e.Runs.Total(); n != 2 {
		t.Errorf("handler ran %d times, want 2 (carol once, alice once)", n)
	}
}
