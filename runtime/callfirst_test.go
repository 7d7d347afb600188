package runtime_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
)

// TestCallFirst: with Options.CallFirst the first step of each turn
// cannot answer: its request requires a call and its constraint has no
// answer branch, an answer anyway is repaired, and the later steps may
// answer again.
func TestCallFirst(t *testing.T) {
	for _, mode := range []llm.Mode{llm.ModeEnvelope, llm.ModeGrammar, llm.ModeNative} {
		t.Run(mode.String(), func(t *testing.T) {
			balance := scripted.Call("get_balance", `{"account":"ACC-00001"}`)
			e := newEnv(t, []scripted.Reply{
				scripted.Answer("5,000.00 USD, I think."), // refused: step 1 must call
				balance,
				scripted.Answer("5,000.00 USD."),
				balance, // the next turn's first step
				scripted.Answer("Still 5,000.00 USD."),
			}, false, &runtime.Options{Mode: mode, CallFirst: true})
			sess := e.agent.NewSession(teller, "s-callfirst", nil)
			for _, input := range []string{"What is the balance of ACC-00001?", "And now?"} {
				t.Run(input, func(t *testing.T) {
					turn, err := sess.Run(t.Context(), input)
					if err != nil {
						t.Fatalf("Run(%q): %v", input, err)
					}
					if len(turn.Calls) != 1 || turn.Calls[0].Tool != "bank/get_balance" || turn.Calls[0].Err != nil {
						t.Fatalf("Run(%q) calls = %+v, want one get_balance call", input, turn.Calls)
					}
				})
			}
			reqs := e.model.Requests()
			if len(reqs) != 5 {
				t.Fatalf("%d requests, want 5 (step 1, its repair, step 2, then the second turn's two)", len(reqs))
			}
			for i, want := range []bool{true, true, false, true, false} {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					req := reqs[i]
					if req.RequireCall != want {
						t.Errorf("request %d: RequireCall = %v, want %v", i, req.RequireCall, want)
					}
					if hasAnswer := answerOffered(req); hasAnswer == want {
						t.Errorf("request %d (RequireCall %v): the constraint offers an answer: %v", i, want, hasAnswer)
					}
				})
			}
			if last := reqs[1].Messages[len(reqs[1].Messages)-1].Content; !strings.Contains(last, "must call") {
				t.Errorf("the repair said %q, want it to ask for a call", last)
			}
		})
	}
}

// answerOffered reports whether req's constraint (or, in ModeNative, the
// absence of a required call) lets the model answer.
func answerOffered(req *llm.Request) bool {
	switch req.Constraint.Mode {
	case llm.ModeEnvelope:
		return strings.Contains(string(req.Constraint.EnvelopeSchema), `"answer"`)
	case llm.ModeGrammar:
		return strings.Contains(req.Constraint.GBNF, `answer`)
	}
	return !req.RequireCall
}
