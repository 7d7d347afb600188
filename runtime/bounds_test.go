package runtime_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
)

// TestEnvelopeBounds: a turn's envelope is compiled with llm.DefaultBounds,
// which its constraint reports and its budget is sized to; a reply cut off
// at the budget is repaired under the same envelope compiled again with
// halved bounds: a shorter answer in the grammar or schema, and a smaller
// budget.
func TestEnvelopeBounds(t *testing.T) {
	for _, mode := range []llm.Mode{llm.ModeGrammar, llm.ModeEnvelope} {
		t.Run(mode.String(), func(t *testing.T) {
			e := newEnv(t, []scripted.Reply{scripted.Answer("The balance of").Truncated(), scripted.Answer("ok")}, false, &runtime.Options{Mode: mode})
			turn, err := e.agent.NewSession(teller, "s-1", nil).Run(t.Context(), "what is the balance of ACC-00001?")
			if err != nil || turn.Answer != "ok" {
				t.Fatalf("Run = %+v, %v", turn, err)
			}
			reqs := e.model.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want the truncated one and its repair", len(reqs))
			}
			want := llm.DefaultBounds()
			if mode == llm.ModeEnvelope {
				want = llm.Bounds{Answer: want.Answer} // the schema form bounds the answer only; no find_tools branch here
			} else {
				want.Query = 0
			}
			for i, bd := range []llm.Bounds{want, want.Tighter()} {
				c := reqs[i].Constraint
				if c.Bounds != bd {
					t.Errorf("request %d: bounds %+v, want %+v", i, c.Bounds, bd)
				}
				text := c.GBNF
				mark := fmt.Sprintf("{0,%d}", bd.Answer)
				if mode == llm.ModeEnvelope {
					text, mark = string(c.EnvelopeSchema), fmt.Sprintf(`"maxLength":%d`, bd.Answer)
				}
				if !strings.Contains(text, mark) {
					t.Errorf("request %d: the constraint does not bound the answer at %d (%s)", i, bd.Answer, mark)
				}
				if reqs[i].MaxTokens != min(llm.TokenBudget(reqs[i]), llm.DefaultMaxTokens) {
					t.Errorf("request %d: MaxTokens %d, want the budget of its bounds %d", i, reqs[i].MaxTokens, llm.TokenBudget(reqs[i]))
				}
			}
			if reqs[1].MaxTokens > reqs[0].MaxTokens {
				t.Errorf("the repair's budget %d is above the first request's %d", reqs[1].MaxTokens, reqs[0].MaxTokens)
			}
		})
	}
}

// TestOptionsBounds: Options.Bounds replaces the defaults field by field
// (a zero field keeps llm's default), the constraint and the budget follow
// them, and a negative bound is refused.
func TestOptionsBounds(t *testing.T) {
	e := newEnv(t, []scripted.Reply{scripted.Answer("ok")}, false,
		&runtime.Options{Mode: llm.ModeGrammar, Bounds: llm.Bounds{Answer: 120, Items: 7}})
	e.run(t, "s-1", "what is the balance of ACC-00001?")
	reqs := e.model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	want := llm.Bounds{Answer: 120, String: llm.DefaultStringLength, Items: 7}
	if c := reqs[0].Constraint; c.Bounds != want {
		t.Errorf("bounds %+v, want %+v", c.Bounds, want)
	}
	if !strings.Contains(reqs[0].Constraint.GBNF, "{0,120}") {
		t.Error("the grammar does not bound the answer at 120 code points")
	}
	if def := llm.TokenBudget(&llm.Request{Constraint: llm.Constraint{Bounds: llm.DefaultBounds()}}); reqs[0].MaxTokens >= def {
		t.Errorf("MaxTokens %d with a 120-point answer, want less than the default answer's budget %d", reqs[0].MaxTokens, def)
	}
	_, err := runtime.New(e.reg, e.disc, e.gw, e.model, &runtime.Options{Bounds: llm.Bounds{Query: -1}})
	if !errors.Is(err, runtime.ErrOptions) {
		t.Errorf("New with a negative bound: %v, want ErrOptions", err)
	}
}
