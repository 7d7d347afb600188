package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/runtime/internal/runtimetest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// countingReformulator records the requests it was asked to rewrite and
// rewrites none.
type countingReformulator struct{ queries []string }

func (r *countingReformulator) Reformulate(_ context.Context, q string) (string, error) {
	r.queries = append(r.queries, q)
	return "", nil
}

// TestTurnMatchingNoTool: a request that matches no tool still gets its
// reformulation, and the step's constraint compiles with no tool in it,
// offering the model only answer and find_tools (in native mode, the
// find_tools tool alone).
func TestTurnMatchingNoTool(t *testing.T) {
	for _, mode := range []llm.Mode{llm.ModeEnvelope, llm.ModeGrammar, llm.ModeNative} {
		t.Run(mode.String(), func(t *testing.T) {
			reg := catalogtest.Registry(t, realMCPTools(t)...)
			gw, _ := runtimetest.Stack(t, reg, nil)
			ref := &countingReformulator{}
			disc, err := discovery.New(&discovery.Options{Reformulator: ref})
			if err != nil {
				t.Fatal(err)
			}
			model := scripted.New([]scripted.Reply{scripted.Answer("Which tool do you need? Say what you want done.")}, nil)
			agent, err := runtime.New(reg, disc, gw, model, &runtime.Options{Logger: quiet, Mode: mode, Strategy: runtime.StrategyProgressive})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := agent.NewSession(tools.Principal{ID: "alice", Tenant: "acme"}, "s-1", nil).Run(t.Context(), "😀😀")
			if err != nil {
				t.Fatal(err)
			}
			if turn.Answer == "" || len(turn.Calls) != 0 {
				t.Errorf("turn = %+v, want the model's answer and no call", turn)
			}
			if len(ref.queries) != 1 || ref.queries[0] != "😀😀" {
				t.Errorf("reformulated %q, want the request once", ref.queries)
			}
			req := model.Requests()[0]
			switch got := shownTools(req); {
			case mode == llm.ModeNative && (len(got) != 1 || got[0] != runtime.FindToolsName):
				t.Errorf("tools shown = %v, want only %s", got, runtime.FindToolsName)
			case mode != llm.ModeNative && len(got) != 0:
				t.Errorf("tools shown = %v, want none (find_tools is an action of the envelope)", got)
			}
			switch mode {
			case llm.ModeEnvelope:
				s := string(req.Constraint.EnvelopeSchema)
				if !strings.Contains(s, `"answer"`) || !strings.Contains(s, `"find_tools"`) || strings.Contains(s, `"call"`) {
					t.Errorf("envelope schema = %s, want answer and find_tools only", s)
				}
			case llm.ModeGrammar:
				g, err := gbnf.Parse(req.Constraint.GBNF)
				if err != nil {
					t.Fatalf("grammar: %v\n%s", err, req.Constraint.GBNF)
				}
				for _, tc := range []struct {
					text string
					ok   bool
				}{
					{`{"action":"answer","text":"hi"}`, true},
					{`{"action":"find_tools","query":"send an email"}`, true},
					{`{"action":"call","tool":"find_tools","arguments":{}}`, false},
				} {
					t.Run(tc.text, func(t *testing.T) {
						if ok := accepts(t, g, tc.text); ok != tc.ok {
							t.Errorf("grammar accepts %s = %v, want %v", tc.text, ok, tc.ok)
						}
					})
				}
			}
		})
	}
}

// accepts reports whether text is a whole sentence of g.
func accepts(t *testing.T, g *gbnf.Grammar, text string) bool {
	t.Helper()
	m, err := gbnf.NewMatcher(g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Write([]byte(text)); err != nil {
		return false
	}
	return m.End() == nil
}
