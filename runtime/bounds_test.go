package runtime_test

import (
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
