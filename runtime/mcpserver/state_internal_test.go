package mcpserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/tools"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func TestStateRoundTrip(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	digest, _ := argsDigest(json.RawMessage(`{"b":1,"a":"x"}`))
	st := heldState{Version: 1, Tenant: "acme", Principal: "alice", Tool: "bank/refund", Args: digest,
		SessionID: "mcp-X", Step: 3, Approval: "apr_1", Expires: now.Add(time.Minute).Unix()}
	sealed := sealState(testKey, st)
	alice := tools.Principal{ID: "alice", Tenant: "acme"}
	for _, tc := range []struct {
		name  string
		state string
		key   []byte
		at    time.Time
		p     tools.Principal
		tool  string
		args  string
		want  error // nil: accepted
	}{
		{"as issued", sealed, testKey, now, alice, "bank/refund", `{"a":"x","b":1}`, nil},
		{"arguments respaced and escaped", sealed, testKey, now, alice, "bank/refund", ` { "b" : 1.0e0 , "a" : "\u0078" } `, nil},
		{"another key", sealed, []byte("another-key-another-key-another!!"), now, alice, "bank/refund", `{"a":"x","b":1}`, ErrStateInvalid},
		{"truncated", sealed[:len(sealed)-2], testKey, now, alice, "bank/refund", `{"a":"x","b":1}`, ErrStateInvalid},
		{"no signature", strings.Split(sealed, ".")[0], testKey, now, alice, "bank/refund", `{"a":"x","b":1}`, ErrStateInvalid},
		{"at expiry", sealed, testKey, now.Add(time.Minute), alice, "bank/refund", `{"a":"x","b":1}`, ErrStateExpired},
		{"another tenant", sealed, testKey, now, tools.Principal{ID: "alice", Tenant: "other"}, "bank/refund", `{"a":"x","b":1}`, ErrStateMismatch},
		{"another tool", sealed, testKey, now, alice, "bank/refund_all", `{"a":"x","b":1}`, ErrStateMismatch},
		{"another value", sealed, testKey, now, alice, "bank/refund", `{"a":"x","b":2}`, ErrStateMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := openState(tc.key, tc.state, tc.at)
			if err == nil {
				err = got.matches(tc.p, tc.tool, json.RawMessage(tc.args))
			}
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("open(%s) = %v, want %v", tc.name, err, tc.want)
			}
		})
	}
}

// FuzzOpenState: any input is refused or accepted without panic, in
// bounded time; an accepted one is exactly the state sealed from what it
// holds (no two spellings of one state are accepted).
func FuzzOpenState(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	f.Add(sealState(testKey, heldState{Version: 1, Tenant: "t", Principal: "p", Tool: "x/y", Args: "00", SessionID: "s", Step: 1, Expires: now.Unix() + 60}))
	f.Add("e30.AAAA")
	f.Add(".")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := openState(testKey, s, now)
		if err != nil {
			return
		}
		if again := sealState(testKey, st); again != s {
			t.Errorf("accepted %q, which seals as %q", s, again)
		}
	})
}

// BenchmarkRequestState: sealing a held call's request state and opening
// it again (HMAC-SHA256 both ways, the arguments' JCS digest).
func BenchmarkRequestState(b *testing.B) {
	args := json.RawMessage(`{"transaction_id":"tx-1","amount":{"value":"12.50","currency":"EUR"},"note":"refund"}`)
	now := time.Unix(1_800_000_000, 0)
	p := tools.Principal{ID: "alice", Tenant: "acme"}
	for b.Loop() {
		digest, _ := argsDigest(args)
		s := sealState(testKey, heldState{Version: 1, Tenant: "acme", Principal: "alice", Tool: "bank/refund", Args: digest,
			SessionID: "mcp-ABCDEFGHIJKLMNOPQRSTUVWXYZ", Step: 3, Approval: "apr_0123456789abcdef", Expires: now.Unix() + 3600})
		st, err := openState(testKey, s, now)
		if err != nil || st.matches(p, "bank/refund", args) != nil {
			b.Fatal(err)
		}
	}
}
