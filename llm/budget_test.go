package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/grammar/gbnf"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
	"github.com/toolgate/toolgate/llm/scripted"
)

func TestTokenBudget(t *testing.T) {
	tool := func(schema string) []llm.ToolSpec {
		return []llm.ToolSpec{{Name: "t", Parameters: json.RawMessage(schema)}}
	}
	cases := []struct {
		name     string
		tools    []llm.ToolSpec
		min, max int
	}{
		{"no tools: an answer", nil, llm.AnswerTokens, llm.AnswerTokens},
		{"small tool: still an answer's budget", tool(`{"type":"object","properties":{"id":{"type":"integer"}}}`), llm.AnswerTokens, llm.AnswerTokens},
		{"bounded string", tool(`{"type":"object","properties":{"s":{"type":"string","maxLength":3000}}}`), 1000, 1100},
		{"bounded array of bounded strings", tool(`{"type":"object","properties":{"a":{"type":"array","maxItems":100,"items":{"type":"string","maxLength":9}}}}`), 500, 700},
		{"$ref resolved", tool(`{"type":"object","properties":{"x":{"$ref":"#/$defs/big"}},"$defs":{"big":{"type":"string","maxLength":2400}}}`), 800, 900},
		{"recursive $ref ends", tool(`{"type":"object","properties":{"n":{"$ref":"#"}}}`), llm.AnswerTokens, 4000},
		{"anyOf takes the largest", tool(`{"type":"object","properties":{"v":{"anyOf":[{"type":"integer"},{"type":"string","maxLength":1500}]}}}`), 500, 560},
		{"not JSON", tool(`{`), llm.AnswerTokens, llm.AnswerTokens},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := llm.TokenBudget(&llm.Request{Tools: tc.tools})
			if got < tc.min || got > tc.max {
				t.Errorf("%s: TokenBudget = %d, want in [%d, %d]", tc.name, got, tc.min, tc.max)
			}
		})
	}
}

func TestCheckedSetsTokenBudget(t *testing.T) {
	big := llm.ToolSpec{Name: "note", Parameters: json.RawMessage(`{"type":"object","properties":{"s":{"type":"string","maxLength":30000}}}`)}
	cases := []struct {
		name    string
		opts    llm.Options
		tools   []llm.ToolSpec
		reqMax  int
		wantMax int
	}{
		{"sized to the constraint", llm.Options{}, nil, 0, llm.AnswerTokens},
		{"bounded by DefaultMaxTokens", llm.Options{}, []llm.ToolSpec{big}, 0, llm.DefaultMaxTokens},
		{"bounded by Options.MaxTokens", llm.Options{MaxTokens: 100}, nil, 0, 100},
		{"the request's own kept", llm.Options{MaxTokens: 100}, nil, 4000, 4000},
		{"negative: none set", llm.Options{MaxTokens: -1}, nil, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := scripted.New([]scripted.Reply{scripted.Answer("ok")}, nil)
			req := backendtest.Request(llm.ModeEnvelope)
			req.MaxTokens = tc.reqMax
			if tc.tools != nil {
				req.Tools = tc.tools
				req.Constraint.EnvelopeSchema = backendtest.EnvelopeSchemaFor(tc.tools)
			}
			if _, err := checked(t, b, &tc.opts).Chat(context.Background(), req); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if got := b.Requests()[0].MaxTokens; got != tc.wantMax {
				t.Errorf("%s: sent MaxTokens = %d, want %d", tc.name, got, tc.wantMax)
			}
			if req.MaxTokens != tc.reqMax {
				t.Errorf("%s: the caller's request was changed: MaxTokens %d", tc.name, req.MaxTokens)
			}
		})
	}
}

// TestTokenBudgetHoldsTheAnswerBound: where the constraint reports the
// answer's and the query's bounds, the budget holds the longest reply the
// compiled grammar admits (every whitespace gap at its longest, the text
// at its bound) at a token per character, so the grammar closes a
// rambling reply before the budget cuts it off.
func TestTokenBudgetHoldsTheAnswerBound(t *testing.T) {
	for i, bd := range []llm.Bounds{llm.DefaultBounds(), {Answer: 37, Query: 11}, llm.DefaultBounds().Tighter().Tighter()} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			res, err := grammar.Envelope(nil, &grammar.Options{MaxAnswerLength: bd.Answer, MaxQueryLength: bd.Query})
			if err != nil {
				t.Fatal(err)
			}
			g, err := gbnf.Parse(res.GBNF)
			if err != nil {
				t.Fatal(err)
			}
			gap := "\n" + strings.Repeat(" ", 20)
			longest := func(action, key string, n int) string {
				return "{" + gap + `"action"` + gap + ":" + gap + `"` + action + `"` + gap + "," + gap + `"` + key + `"` + gap + ":" + gap +
					`"` + strings.Repeat("a", n) + `"` + gap + "}"
			}
			budget := llm.TokenBudget(&llm.Request{Constraint: llm.Constraint{Mode: llm.ModeGrammar, GBNF: res.GBNF, Bounds: bd}})
			for _, c := range []struct {
				action, key string
				n           int
			}{{"answer", "text", bd.Answer}, {"find_tools", "query", bd.Query}} {
				t.Run(c.action, func(t *testing.T) {
					reply := longest(c.action, c.key, c.n)
					if ok, _ := g.Match([]byte(reply)); !ok {
						t.Fatalf("%v: the grammar rejects the longest %s reply %q", bd, c.action, reply)
					}
					if ok, _ := g.Match([]byte(longest(c.action, c.key, c.n+1))); ok {
						t.Fatalf("%v: the grammar admits a %s text of %d characters, above its bound", bd, c.action, c.n+1)
					}
					if len(reply) > budget {
						t.Errorf("%v: the longest %s reply is %d characters, above the budget of %d tokens", bd, c.action, len(reply), budget)
					}
				})
			}
			if bd == llm.DefaultBounds() && budget > llm.DefaultMaxTokens {
				t.Errorf("default bounds: budget %d above DefaultMaxTokens %d", budget, llm.DefaultMaxTokens)
			}
		})
	}
	if got := llm.TokenBudget(&llm.Request{}); got != llm.AnswerTokens {
		t.Errorf("no bounds reported: TokenBudget = %d, want AnswerTokens", got)
	}
}

// TestTokenBudgetUsesStringAndItemBounds: a string or array the schema
// leaves free is counted at the constraint's bound when it reports one;
// the schema's own sizes, a format or a pattern are kept.
func TestTokenBudgetUsesStringAndItemBounds(t *testing.T) {
	req := func(schema string, bd llm.Bounds) *llm.Request {
		return &llm.Request{Tools: []llm.ToolSpec{{Name: "t", Parameters: json.RawMessage(schema)}}, Constraint: llm.Constraint{Bounds: bd}}
	}
	free := `{"type":"object","properties":{"s":{"type":"string"}}}`
	if a, b := llm.TokenBudget(req(free, llm.Bounds{String: 300})), llm.TokenBudget(req(free, llm.Bounds{String: 150})); a < 300 || b >= a {
		t.Errorf("free string: budget %d at a 300 bound, %d at 150: want at least the bound, smaller when tighter", a, b)
	}
	for _, schema := range []string{
		`{"type":"object","properties":{"s":{"type":"string","maxLength":30}}}`,
		`{"type":"object","properties":{"s":{"type":"string","pattern":"^ACC-[0-9]{5}$"}}}`,
		`{"type":"object","properties":{"s":{"type":"string","format":"date"}}}`,
	} {
		t.Run(schema, func(t *testing.T) {
			if got, want := llm.TokenBudget(req(schema, llm.Bounds{String: 900})), llm.TokenBudget(req(schema, llm.Bounds{})); got != want {
				t.Errorf("%s: budget %d with a string bound, %d without: the schema's own size must decide", schema, got, want)
			}
		})
	}
	arr := `{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}}}`
	if a, b := llm.TokenBudget(req(arr, llm.Bounds{Items: 200})), llm.TokenBudget(req(arr, llm.Bounds{Items: 100})); a <= b || a < 200*7 {
		t.Errorf("free array: budget %d at 200 items, %d at 100", a, b)
	}
}

func TestBoundsTighter(t *testing.T) {
	got := llm.Bounds{Answer: 600, Query: 1, String: 0, Items: 3}.Tighter()
	if want := (llm.Bounds{Answer: 300, Query: 1, String: 0, Items: 1}); got != want {
		t.Errorf("Tighter = %+v, want %+v", got, want)
	}
}

// TestCheckedTightensAfterTruncation: a reply cut off at the budget is
// repaired under the constraint recompiled with halved bounds and a budget
// sized to them; a failing Tighten leaves the constraint as it was.
func TestCheckedTightensAfterTruncation(t *testing.T) {
	var asked []llm.Bounds
	var tighten func(bd llm.Bounds) (llm.Constraint, error)
	tighten = func(bd llm.Bounds) (llm.Constraint, error) {
		asked = append(asked, bd)
		return llm.Constraint{Mode: llm.ModeEnvelope, EnvelopeSchema: backendtest.EnvelopeSchemaFor(nil), Bounds: bd, Tighten: tighten}, nil
	}
	b := scripted.New([]scripted.Reply{scripted.Answer("The bal").Truncated(), scripted.Answer("The").Truncated(), scripted.Answer("ok")}, nil)
	envelope := llm.Bounds{Answer: llm.DefaultAnswerLength, Query: llm.DefaultQueryLength}
	req := backendtest.Request(llm.ModeEnvelope)
	req.MaxTokens = 0
	req.Constraint.Bounds = envelope
	req.Constraint.Tighten = tighten
	if _, err := checked(t, b, nil).Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	want := []llm.Bounds{envelope.Tighter(), envelope.Tighter().Tighter()}
	if len(asked) != 2 || asked[0] != want[0] || asked[1] != want[1] {
		t.Fatalf("Tighten called with %+v, want %+v", asked, want)
	}
	sent := b.Requests()
	for i := 1; i < len(sent); i++ {
		if sent[i].Constraint.Bounds != want[i-1] {
			t.Errorf("request %d: bounds %+v, want %+v", i, sent[i].Constraint.Bounds, want[i-1])
		}
		if sent[i].MaxTokens >= sent[i-1].MaxTokens || sent[i].MaxTokens != llm.TokenBudget(sent[i]) {
			t.Errorf("request %d: MaxTokens %d after %d, want the smaller budget of the tighter bounds (%d)", i, sent[i].MaxTokens, sent[i-1].MaxTokens, llm.TokenBudget(sent[i]))
		}
	}
	if req.Constraint.Bounds != envelope {
		t.Errorf("the caller's request was changed: bounds %+v", req.Constraint.Bounds)
	}

	failing := scripted.New([]scripted.Reply{scripted.Answer("The bal").Truncated(), scripted.Answer("ok")}, nil)
	req = backendtest.Request(llm.ModeEnvelope)
	req.Constraint.Bounds = llm.DefaultBounds()
	req.Constraint.Tighten = func(llm.Bounds) (llm.Constraint, error) { return llm.Constraint{}, errors.New("no") }
	if _, err := checked(t, failing, nil).Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if s := failing.Requests(); s[1].Constraint.Bounds != llm.DefaultBounds() || string(s[1].Constraint.EnvelopeSchema) != string(req.Constraint.EnvelopeSchema) {
		t.Errorf("a failing Tighten changed the constraint: %+v", s[1].Constraint.Bounds)
	}
}
