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

// TestEnvelopeBounds: a turn's envelope is compiled with [llm.DefaultBounds],
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
				t.Run(fmt.Sprint(i), func(t *testing.T) {
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
				})
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

// TestOptionsNameTheField: New checks the options in one place and its
// error names the field at fault.
func TestOptionsNameTheField(t *testing.T) {
	e := newEnv(t, nil, false, nil)
	tests := []struct {
		name  string
		opts  runtime.Options
		field string
	}{
		{"negative K", runtime.Options{K: -1}, "K"},
		{"negative MaxShown", runtime.Options{MaxShown: -2}, "MaxShown"},
		{"negative CallRetries", runtime.Options{CallRetries: -1}, "CallRetries"},
		{"negative ContextTokens", runtime.Options{ContextTokens: -1}, "ContextTokens"},
		{"share above one", runtime.Options{MaxToolShare: 1.5}, "MaxToolShare"},
		{"unknown strategy", runtime.Options{Strategy: 99}, "Strategy"},
		{"deferred without native", runtime.Options{Deferred: true}, "Deferred"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runtime.New(e.reg, e.disc, e.gw, e.model, &tc.opts)
			if !errors.Is(err, runtime.ErrOptions) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("New(%s) error = %v, want ErrOptions naming %s", tc.name, err, tc.field)
			}
		})
	}
	if _, err := runtime.New(e.reg, e.disc, e.gw, e.model, &runtime.Options{}); err != nil {
		t.Errorf("New with zero Options = %v, want the defaults", err)
	}
}

// quarter counts a token per four bytes: a stand-in for a model's
// tokenizer that the test can reason about.
func quarter(s string) int { return (len(s) + 3) / 4 }

// contentTokens is a lower bound of what the runtime counts for req: its
// messages' text alone, without their JSON rendering, the tool
// definitions or the per-message overhead.
func contentTokens(req *llm.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += quarter(m.Content)
	}
	return n
}

// turnInput is a user request of about 1,000 quarter-tokens, numbered.
func turnInput(i int) string {
	return fmt.Sprintf("turn %d: what is the balance of ACC-00001? %s", i, strings.Repeat("(some pasted context) ", 190))
}

func fitEnv(t *testing.T, mode llm.Mode, fit bool, contextTokens int, replies []scripted.Reply) *env {
	t.Helper()
	return newEnv(t, replies, false, &runtime.Options{Mode: mode, FitContext: fit, ContextTokens: contextTokens, CountTokens: quarter})
}

// With FitContext, a long conversation's requests leave out its oldest
// whole turns: each request fits ContextTokens, starts with a user's
// input (never a tool result cut from its call), always holds the
// current turn, and the session's history keeps everything.
func TestFitContextLeavesTheOldestTurnsOut(t *testing.T) {
	for _, mode := range []llm.Mode{llm.ModeEnvelope, llm.ModeNative} {
		t.Run(mode.String(), func(t *testing.T) {
			var replies []scripted.Reply
			for i := range 5 {
				replies = append(replies, scripted.Call("get_balance", `{"account":"ACC-00001"}`), scripted.Answer(fmt.Sprintf("answer %d", i)))
			}
			const limit = 4000
			e := fitEnv(t, mode, true, limit, replies)
			s := e.agent.NewSession(teller, "fit-"+mode.String(), nil)
			for i := range 5 {
				turn, err := s.Run(t.Context(), turnInput(i))
				if err != nil {
					t.Fatalf("turn %d: %v", i, err)
				}
				if turn.Answer != fmt.Sprintf("answer %d", i) || len(turn.Calls) != 1 || turn.Calls[0].Err != nil {
					t.Fatalf("turn %d = %+v", i, turn)
				}
			}
			reqs := e.model.Requests()
			if len(reqs) != 10 {
				t.Fatalf("%d requests, want 10", len(reqs))
			}
			for i, req := range reqs {
				if n := contentTokens(req); n > limit {
					t.Errorf("request %d: its messages alone are %d tokens, over ContextTokens %d", i, n, limit)
				}
				first := req.Messages[1]
				if first.Role != llm.RoleUser || !strings.HasPrefix(first.Content, "turn ") {
					t.Errorf("request %d starts its conversation with %s %.40q, want a user's input", i, first.Role, first.Content)
				}
				current := turnInput(i / 2)
				if !strings.Contains(requestText(req), current[:8]) {
					t.Errorf("request %d lacks its own turn's input", i)
				}
			}
			last := requestText(reqs[len(reqs)-1])
			if strings.Contains(last, "turn 0:") {
				t.Error("the last request still holds the first turn: nothing was left out")
			}
			var trimmed []runtime.Event
			for _, ev := range e.events {
				if ev.Kind == runtime.EventTrimmed {
					trimmed = append(trimmed, ev)
				}
			}
			if len(trimmed) == 0 {
				t.Fatal("no EventTrimmed")
			}
			for _, ev := range trimmed {
				if ev.Omitted <= 0 || ev.PromptTokens <= 0 || ev.ReplyTokens <= 0 || ev.PromptTokens+ev.ReplyTokens > limit {
					t.Errorf("EventTrimmed %+v: want messages omitted and prompt + reply within %d", ev, limit)
				}
			}
			inputs := 0
			for _, m := range s.History() {
				if m.Role == llm.RoleUser && strings.HasPrefix(m.Content, "turn ") {
					inputs++
				}
			}
			if inputs != 5 {
				t.Errorf("History holds %d of the 5 inputs, want all", inputs)
			}
		})
	}
}

// Without FitContext (the default) nothing is left out, whatever
// ContextTokens says.
func TestFitContextOffSendsEverything(t *testing.T) {
	e := fitEnv(t, llm.ModeEnvelope, false, 4000, []scripted.Reply{scripted.Answer("a0"), scripted.Answer("a1"), scripted.Answer("a2"), scripted.Answer("a3"), scripted.Answer("a4")})
	s := e.agent.NewSession(teller, "nofit", nil)
	for i := range 5 {
		if _, err := s.Run(t.Context(), turnInput(i)); err != nil {
			t.Fatal(err)
		}
	}
	reqs := e.model.Requests()
	if last := requestText(reqs[len(reqs)-1]); !strings.Contains(last, "turn 0:") {
		t.Error("without FitContext the last request left the first turn out")
	}
}

// A current turn that alone does not fit fails before the model is
// called, with ErrContextOverflow and the sizes in the message.
func TestFitContextCurrentTurnTooLarge(t *testing.T) {
	e := fitEnv(t, llm.ModeEnvelope, true, 1200, []scripted.Reply{scripted.Answer("never")})
	_, err := e.agent.NewSession(teller, "toolarge", nil).Run(t.Context(), turnInput(0))
	if !errors.Is(err, runtime.ErrContextOverflow) {
		t.Fatalf("Run = %v, want ErrContextOverflow", err)
	}
	if !strings.Contains(err.Error(), "over ContextTokens 1200") {
		t.Errorf("error %q does not say the limit", err)
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Errorf("the model got %d requests, want none", n)
	}
}

// A session restored from a history longer than the window starts its
// first request at a turn of that history that fits.
func TestFitContextRestoredHistory(t *testing.T) {
	var history []llm.Message
	for i := range 4 {
		history = append(history, llm.Message{Role: llm.RoleUser, Content: turnInput(i)},
			llm.Message{Role: llm.RoleAssistant, Content: `{"action":"answer","text":"ok"}`})
	}
	e := fitEnv(t, llm.ModeEnvelope, true, 4000, []scripted.Reply{scripted.Answer("done")})
	s := e.agent.NewSession(teller, "restored", &runtime.SessionOptions{History: history, Step: 8})
	if _, err := s.Run(t.Context(), turnInput(4)); err != nil {
		t.Fatal(err)
	}
	req := e.model.Requests()[0]
	text := requestText(req)
	if strings.Contains(text, "turn 0:") || !strings.Contains(text, "turn 4:") {
		t.Errorf("restored session's request: want turn 0 left out and turn 4 in")
	}
	if first := req.Messages[1]; !strings.HasPrefix(first.Content, "turn ") {
		t.Errorf("restored session's request starts with %.40q, want a user's input", first.Content)
	}
}

// In the envelope modes a tool found after the system prompt was written
// is introduced by a notice in the conversation; when FitContext leaves
// that notice's turn out, the system prompt lists the tool again, so every
// tool a request offers is described in what it sends.
func TestFitContextKeepsFoundToolsDescribed(t *testing.T) {
	replies := []scripted.Reply{
		scripted.FindTools("check how much money is in an account"),
		scripted.Call("get_balance", `{"account":"ACC-00002"}`),
		scripted.Answer("ACC-00002 holds 1000.00."),
	}
	for i := 1; i < 5; i++ {
		replies = append(replies, scripted.Answer(fmt.Sprintf("answer %d", i)))
	}
	e := newEnv(t, replies, true, &runtime.Options{Strategy: runtime.StrategyProgressive, K: 3,
		FitContext: true, ContextTokens: 4000, CountTokens: quarter})
	s := e.agent.NewSession(teller, "fit-found", nil)
	inputs := []string{"open the browser snapshot of the dashboard page"}
	for i := 1; i < 5; i++ {
		inputs = append(inputs, fmt.Sprintf("turn %d: tell me about the dashboard page %s", i, strings.Repeat("(some pasted context) ", 190)))
	}
	for _, in := range inputs {
		t.Run(in, func(t *testing.T) {
			if _, err := s.Run(t.Context(), in); err != nil {
				t.Fatal(err)
			}
		})
	}
	announced := false
	trimmedNotice := false
	for i, req := range e.model.Requests() {
		var notices strings.Builder
		for _, m := range req.Messages {
			if strings.HasPrefix(m.Content, "<tools-added>") {
				notices.WriteString(m.Content)
			}
		}
		announced = announced || notices.Len() > 0
		if announced && notices.Len() == 0 {
			trimmedNotice = true
		}
		for j, sp := range req.Tools {
			inPrompt := req.PromptTools == 0 || j < req.PromptTools
			if !inPrompt && !strings.Contains(notices.String(), `"`+sp.Name+`"`) {
				t.Errorf("request %d offers %s, described neither in the system prompt (first %d tools) nor in a notice it sends", i, sp.Name, req.PromptTools)
			}
		}
	}
	if !announced || !trimmedNotice {
		t.Fatalf("announced %v, notice later left out %v: the test needs both", announced, trimmedNotice)
	}
}

// BenchmarkFitContext is one turn (a call and an answer) with FitContext
// off and on (the o200k count, a 4,000-token window): in a session whose
// conversation keeps growing (on, the oldest turns are left out as it
// goes), and in a new session each turn (the guard's own cost).
func BenchmarkFitContext(b *testing.B) {
	input := "what is the balance of ACC-00001? " + strings.Repeat("(some pasted context) ", 40)
	for _, growing := range []bool{true, false} {
		for _, fit := range []bool{false, true} {
			b.Run(fmt.Sprintf("growing=%v/fit=%v", growing, fit), func(b *testing.B) {
				var replies []scripted.Reply
				for i := range b.N {
					replies = append(replies, scripted.Call("get_balance", `{"account":"ACC-00001"}`), scripted.Answer(fmt.Sprintf("answer %d", i)))
				}
				e := newEnv(b, replies, false, &runtime.Options{FitContext: fit, ContextTokens: 4000})
				s := e.agent.NewSession(teller, "bench-fit", nil)
				b.ResetTimer()
				for i := range b.N {
					if !growing {
						s = e.agent.NewSession(teller, fmt.Sprintf("bench-fit-%d", i), nil)
					}
					if _, err := s.Run(b.Context(), input); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
