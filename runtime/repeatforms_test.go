package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/internal/runtimetest"
	"github.com/toolgate/toolgate/tools"
)

// paymentForms are the forms in which a looping model really repeats a
// payment, {"to":"ACC-00002","amount":100,"memo":"café"}, and whether each
// is the same call: equal RFC 8785 canonical arguments (docs/security.md,
// "A model that loops"). Canonical JSON orders members, drops whitespace
// and escapes, and writes a number as the shortest double (100, 100.0 and
// 1e2 are one number); it keeps a string's code points as sent and never
// adds a member, so a string in another Unicode normalization or with a
// trailing space, or a member added with its default value, is other
// arguments: the handler would receive other bytes.
var paymentForms = []struct {
	name string
	args string
	same bool
}{
	{"members reordered", `{"memo":"café","amount":100,"to":"ACC-00002"}`, true},
	{"other whitespace", "{ \"to\" : \"ACC-00002\",\n\t\"amount\" : 100 , \"memo\" : \"café\" }", true},
	{"100.0", `{"to":"ACC-00002","amount":100.0,"memo":"café"}`, true},
	{"1e2", `{"to":"ACC-00002","amount":1e2,"memo":"café"}`, true},
	{"1.00E+2", `{"to":"ACC-00002","amount":1.00E+2,"memo":"café"}`, true},
	{"a string escaped", `{"to":"ACC-00002","amount":100,"memo":"caf\u00e9"}`, true},
	{"a string in NFD", `{"to":"ACC-00002","amount":100,"memo":"cafe\u0301"}`, false},
	{"a trailing space", `{"to":"ACC-00002","amount":100,"memo":"café "}`, false},
	{"an optional member with its default", `{"to":"ACC-00002","amount":100,"memo":"café","currency":"USD"}`, false},
}

const firstPayment = `{"to":"ACC-00002","amount":100,"memo":"café"}`

// payTool is bank/pay: {"to","amount","memo"?,"currency"? (default
// "USD")}, an effect, counting its runs.
func payTool(t *testing.T, runs *atomic.Int32) tools.Tool {
	t.Helper()
	return tools.Tool{ID: "bank/pay", Card: tools.Card{Name: "pay", Summary: "Pay an amount to an account"},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string","pattern":"^ACC-[0-9]{5}$"},` +
			`"amount":{"type":"number","exclusiveMinimum":0},"memo":{"type":"string"},"currency":{"type":"string","default":"USD"}},` +
			`"required":["to","amount"],"additionalProperties":false}`),
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			runs.Add(1)
			return json.RawMessage(`{"paid":true}`), nil
		}}
}

// TestLoopingPaymentForms: a model pays, then pays again in another form
// at the next step of the turn; the repeat is refused (the payment runs
// once) exactly when the form is the same call; the first payment's step
// re-sent in that form is replayed or refused, never run again.
func TestLoopingPaymentForms(t *testing.T) {
	carol := tools.Principal{ID: "carol", Tenant: "acme"}
	for _, tc := range paymentForms {
		t.Run(tc.name, func(t *testing.T) {
			var runs atomic.Int32
			reg := tools.NewRegistry()
			if err := reg.Add(payTool(t, &runs)); err != nil {
				t.Fatal(err)
			}
			gw, disc := runtimetest.Stack(t, reg, &gateway.Options{Logger: quiet})
			model := scripted.New([]scripted.Reply{scripted.Call("pay", firstPayment), scripted.Call("pay", tc.args), scripted.Answer("Paid.")}, nil)
			agent, err := runtime.New(reg, disc, gw, model, &runtime.Options{Logger: quiet,
				Sleep: func(context.Context, time.Duration) error { return nil }})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := agent.NewSession(carol, "s-pay", nil).Run(t.Context(), "pay 100 to ACC-00002")
			if err != nil {
				t.Fatal(err)
			}
			want := int32(2)
			if tc.same {
				want = 1
			}
			if got := runs.Load(); got != want {
				t.Errorf("pay(%s) then pay(%s): the payment ran %d times, want %d (same call: %v)", firstPayment, tc.args, got, want, tc.same)
			}
			if len(turn.Calls) != 2 {
				t.Fatalf("calls = %+v, want two", turn.Calls)
			}
			var re *runtime.RepeatedCallError
			if refused := errors.As(turn.Calls[1].Err, &re); refused != tc.same {
				t.Errorf("the second payment's error = %v; refused as a repeat: %v, want %v", turn.Calls[1].Err, refused, tc.same)
			}

			// A client re-sending the first payment's step in this form (a
			// retry) gets the replay when it is the same call, and
			// IDEMPOTENCY_MISMATCH otherwise; the payment never runs again.
			res, err := gw.Execute(t.Context(), gateway.Call{Principal: carol, SessionID: "s-pay", Step: turn.Calls[0].Step,
				Tool: "bank/pay", Arguments: json.RawMessage(tc.args)})
			var ge *gateway.Error
			switch {
			case tc.same && (err != nil || !res.Cached):
				t.Errorf("step %d re-sent as %s = %+v, %v; want the cached replay", turn.Calls[0].Step, tc.args, res, err)
			case !tc.same && (!errors.As(err, &ge) || ge.Type != gateway.IdempotencyMismatch):
				t.Errorf("step %d re-sent as %s = %+v, %v; want IDEMPOTENCY_MISMATCH", turn.Calls[0].Step, tc.args, res, err)
			}
			if got := runs.Load(); got != want {
				t.Errorf("after the step was re-sent, the payment ran %d times, want %d", got, want)
			}
		})
	}
}
