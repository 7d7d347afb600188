package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/metricstest"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/internal/runtimetest"
	"github.com/toolgate/toolgate/tools"
)

// notices is a Go function tool that sends a notice (an effect: not read
// only) and one that reads a status (read only); both count their runs
// and record the idempotency keys they ran with.
type notices struct {
	mu   sync.Mutex
	runs map[string]int
	keys []string // send_notice's keys, in order
	// fail, when set, decides send_notice's outcome by its run (from 1).
	fail func(run int) error
}

type notice struct {
	To   string `json:"to"`
	Text string `json:"text"`
}

type sent struct {
	ID string `json:"id"`
}

func (n *notices) count(tool string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.runs[tool]
}

func (n *notices) tools(t *testing.T) []tools.Tool {
	t.Helper()
	send, err := tools.NewFunc("ops/send_notice", tools.Card{Summary: "Send a notice to a person"},
		func(ctx context.Context, in notice) (sent, error) {
			key, _ := tools.IdempotencyKey(ctx)
			n.mu.Lock()
			defer n.mu.Unlock()
			n.runs["send_notice"]++
			n.keys = append(n.keys, key)
			run := n.runs["send_notice"]
			if n.fail != nil {
				if err := n.fail(run); err != nil {
					return sent{}, err
				}
			}
			return sent{ID: fmt.Sprintf("n-%d", run)}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	status, err := tools.NewFunc("ops/read_status", tools.Card{Summary: "Read the status of a service", ReadOnly: true},
		func(_ context.Context, in struct {
			Service string `json:"service"`
		}) (map[string]string, error) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.runs["read_status"]++
			return map[string]string{"service": in.Service, "status": "up"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return []tools.Tool{send, status}
}

// repeatCount is the value of toolgate_runtime_repeated_calls_total for
// (tool, action) in reg.
func repeatCount(t *testing.T, reg *prometheus.Registry, tool string, action runtime.RepeatAction) float64 {
	t.Helper()
	return metricstest.Count(t, reg, "toolgate_runtime_repeated_calls_total", "tool", tool, "action", string(action))
}

// TestRepeatedCalls: within one turn, a call that already succeeded is not
// executed again when the tool has an effect; the model is told so, with
// the earlier result, and the event and the counter say what happened.
// Reads, other arguments, failed calls and later turns execute; a call
// whose outcome is unknown is re-sent under its own idempotency key.
func TestRepeatedCalls(t *testing.T) {
	const (
		hi      = `{"to":"ops","text":"disk full"}`
		hiAgain = `{ "text": "disk full", "to": "ops" }` // the same call in canonical form
		other   = `{"to":"ops","text":"disk ok"}`
		status  = `{"service":"db"}`
	)
	notify := func(args string) scripted.Reply { return scripted.Call("send_notice", args) }
	lost := errors.New("connection reset after the notice was sent")
	tests := []struct {
		name    string
		script  []scripted.Reply
		turns   int // Runs on the same session; 0 means 1
		opts    runtime.Options
		fail    func(run int) error
		wantErr error
		// wantSends and wantReads are the handlers' runs; wantActions the
		// EventRepeatedCall actions, in order.
		wantSends, wantReads int
		wantActions          []runtime.RepeatAction
		// sameKey: every send ran with one idempotency key.
		sameKey bool
	}{
		{name: "repeated until the step budget ends",
			script:    slices.Repeat([]scripted.Reply{notify(hi)}, 8),
			wantErr:   runtime.ErrStepBudget,
			wantSends: 1, wantActions: slices.Repeat([]runtime.RepeatAction{runtime.RepeatRefused}, 7)},
		{name: "repeated, then answered",
			script:    []scripted.Reply{notify(hi), notify(hi), notify(hi), scripted.Answer("Sent.")},
			wantSends: 1, wantActions: []runtime.RepeatAction{runtime.RepeatRefused, runtime.RepeatRefused}},
		{name: "same arguments in another order and spacing",
			script:    []scripted.Reply{notify(hi), notify(hiAgain), scripted.Answer("Sent.")},
			wantSends: 1, wantActions: []runtime.RepeatAction{runtime.RepeatRefused}},
		{name: "repeated after another call",
			script:    []scripted.Reply{notify(hi), scripted.Call("read_status", status), notify(hi), scripted.Answer("Sent.")},
			wantSends: 1, wantReads: 1, wantActions: []runtime.RepeatAction{runtime.RepeatRefused}},
		{name: "other arguments execute",
			script:    []scripted.Reply{notify(hi), notify(other), scripted.Answer("Sent both.")},
			wantSends: 2},
		{name: "a read-only tool repeats",
			script:    []scripted.Reply{scripted.Call("read_status", status), scripted.Call("read_status", status), scripted.Answer("Up.")},
			wantReads: 2, wantActions: []runtime.RepeatAction{runtime.RepeatReadOnly}},
		{name: "RepeatAllow executes repeats",
			script:    []scripted.Reply{notify(hi), notify(hi), scripted.Answer("Sent twice.")},
			opts:      runtime.Options{Repeats: runtime.RepeatAllow},
			wantSends: 2, wantActions: []runtime.RepeatAction{runtime.RepeatAllowed}},
		{name: "a domain error may be retried",
			script: []scripted.Reply{notify(hi), notify(hi), scripted.Answer("Refused twice.")},
			fail: func(int) error {
				return &tools.DomainError{Code: "MAILBOX_FULL", Message: "the ops mailbox is full"}
			},
			wantSends: 2},
		{name: "an unknown outcome is retried under its key",
			// Step 1 runs once and retries three times (Options.CallRetries),
			// all failing after the effect may have begun; the model's repeat
			// at step 2 is re-sent at step 1, so it runs a fifth time with
			// the same key, succeeds, and the next repeat is refused.
			script: []scripted.Reply{notify(hi), notify(hi), notify(hi), scripted.Answer("Sent.")},
			fail: func(run int) error {
				if run <= 4 {
					return lost
				}
				return nil
			},
			wantSends: 5, sameKey: true, wantActions: []runtime.RepeatAction{runtime.RepeatSameKey, runtime.RepeatRefused}},
		{name: "two identical calls in one reply",
			// More than one native call in a reply is refused and repaired
			// ([llm.ProblemTooManyCalls]): the pair never reaches the gateway.
			script: []scripted.Reply{scripted.NativeCalls(
				llm.ToolCall{ID: "c1", Name: "send_notice", Arguments: []byte(hi)},
				llm.ToolCall{ID: "c2", Name: "send_notice", Arguments: []byte(hi)}),
				notify(hi), scripted.Answer("Sent.")},
			opts:      runtime.Options{Mode: llm.ModeNative},
			wantSends: 1},
		{name: "the same request in a later turn executes",
			script:    []scripted.Reply{notify(hi), scripted.Answer("Sent."), notify(hi), notify(hi), scripted.Answer("Sent again.")},
			turns:     2,
			wantSends: 2, wantActions: []runtime.RepeatAction{runtime.RepeatRefused}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := &notices{runs: map[string]int{}, fail: tc.fail}
			reg := tools.NewRegistry()
			if err := reg.Add(n.tools(t)...); err != nil {
				t.Fatal(err)
			}
			gw, disc := runtimetest.Stack(t, reg, &gateway.Options{Logger: quiet})
			model := scripted.New(tc.script, nil)
			metrics := prometheus.NewRegistry()
			var events []runtime.Event
			o := tc.opts
			o.Logger, o.Registerer = quiet, metrics
			o.Observer = func(_ context.Context, e runtime.Event) { events = append(events, e) }
			o.Sleep = func(context.Context, time.Duration) error { return nil }
			agent, err := runtime.New(reg, disc, gw, model, &o)
			if err != nil {
				t.Fatal(err)
			}
			sess := agent.NewSession(tools.Principal{ID: "carol", Tenant: "acme"}, "s-repeat", nil)
			var turns []*runtime.Turn
			for i := range max(tc.turns, 1) {
				turn, err := sess.Run(t.Context(), fmt.Sprintf("tell ops the disk is full (%d)", i+1))
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Run %d: err = %v, want %v", i+1, err, tc.wantErr)
				}
				turns = append(turns, turn)
			}

			if got := n.count("send_notice"); got != tc.wantSends {
				t.Errorf("send_notice ran %d times, want %d", got, tc.wantSends)
			}
			if got := n.count("read_status"); got != tc.wantReads {
				t.Errorf("read_status ran %d times, want %d", got, tc.wantReads)
			}
			if tc.sameKey && (len(n.keys) == 0 || slices.ContainsFunc(n.keys, func(k string) bool { return k != n.keys[0] })) {
				t.Errorf("send_notice keys = %v, want one key throughout", n.keys)
			}

			var actions []runtime.RepeatAction
			for _, e := range events {
				if e.Kind == runtime.EventRepeatedCall {
					actions = append(actions, e.Repeat)
					if e.RepeatOf < 1 || e.RepeatOf >= e.Step {
						t.Errorf("step %d: RepeatOf = %d, want an earlier step of the turn", e.Step, e.RepeatOf)
					}
				}
			}
			if !slices.Equal(actions, tc.wantActions) {
				t.Errorf("repeat actions = %v, want %v", actions, tc.wantActions)
			}
			for i, action := range []runtime.RepeatAction{runtime.RepeatRefused, runtime.RepeatSameKey, runtime.RepeatReadOnly, runtime.RepeatAllowed} {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					tool := "ops/send_notice"
					if action == runtime.RepeatReadOnly {
						tool = "ops/read_status"
					}
					want := float64(countOf(tc.wantActions, action))
					if got := repeatCount(t, metrics, tool, action); got != want {
						t.Errorf("toolgate_runtime_repeated_calls_total{tool=%q,action=%q} = %v, want %v", tool, action, got, want)
					}
				})
			}

			// Each refusal is a call record the model read as its tool
			// result: "already succeeded", with the earlier result.
			var refused []runtime.CallRecord
			for _, turn := range turns {
				for _, c := range turn.Calls {
					if re := (*runtime.RepeatedCallError)(nil); errors.As(c.Err, &re) {
						refused = append(refused, c)
						if string(re.Result) != `{"id":"n-`+fmt.Sprint(tc.wantSends)+`"}` {
							t.Errorf("refusal at step %d carries result %s, want the successful send's", c.Step, re.Result)
						}
					}
				}
			}
			if want := countOf(tc.wantActions, runtime.RepeatRefused); len(refused) != want {
				t.Fatalf("%d refused call records, want %d", len(refused), want)
			}
			told := 0
			for _, req := range model.Requests() {
				last := req.Messages[len(req.Messages)-1].Content
				if strings.Contains(last, `"error_type":"REPEATED_CALL"`) && strings.Contains(last, "already succeeded") &&
					strings.Contains(last, `"result":{"id":"n-`) {
					told++
				}
			}
			// A refusal at the budget's last step has no request after it.
			wantTold := len(refused)
			if tc.wantErr != nil && wantTold > 0 {
				wantTold--
			}
			if told != wantTold {
				t.Errorf("the model was told %d times that the call already succeeded, with its result; want %d", told, wantTold)
			}
		})
	}
}

func countOf[T comparable](s []T, v T) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// TestLoopingModelMovesMoneyOnce is issue 28's case on the runtime's bank:
// a model that answers every tool result with the same transfer, until
// the step budget ends, moves the money once.
func TestLoopingModelMovesMoneyOnce(t *testing.T) {
	transfer := scripted.Call("transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":25}`)
	metrics := prometheus.NewRegistry()
	e := newEnv(t, slices.Repeat([]scripted.Reply{transfer}, 8), true, &runtime.Options{Registerer: metrics})
	turn, err := e.agent.NewSession(teller, "s-loop", nil).Run(t.Context(), "send 25 dollars from ACC-00001 to ACC-00002")
	if !errors.Is(err, runtime.ErrStepBudget) {
		t.Fatalf("Run: err = %v, want ErrStepBudget (the model never answers)", err)
	}
	if got := e.bank.count("transfer_funds"); got != 1 {
		t.Errorf("transfer_funds ran %d times, want 1", got)
	}
	if e.bank.balances["ACC-00001"] != 500000-2500 || e.bank.balances["ACC-00002"] != 100000+2500 {
		t.Errorf("balances = %v, want 25.00 moved once", e.bank.balances)
	}
	if len(turn.Calls) != 8 || turn.Calls[0].Err != nil {
		t.Fatalf("calls = %+v, want the transfer and 7 refusals", turn.Calls)
	}
	for _, c := range turn.Calls[1:] {
		var re *runtime.RepeatedCallError
		if !errors.As(c.Err, &re) || re.Step != 1 || string(re.Result) != string(turn.Calls[0].Result) {
			t.Errorf("step %d: err = %v, want a refusal carrying step 1's result %s", c.Step, c.Err, turn.Calls[0].Result)
		}
	}
	if got := repeatCount(t, metrics, "bank/transfer_funds", runtime.RepeatRefused); got != 7 {
		t.Errorf("refused repeats counted %v, want 7", got)
	}
}
