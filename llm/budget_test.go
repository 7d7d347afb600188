package llm_test

import (
	"context"
	"encoding/json"
	"testing"

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
		got := llm.TokenBudget(&llm.Request{Tools: tc.tools})
		if got < tc.min || got > tc.max {
			t.Errorf("%s: TokenBudget = %d, want in [%d, %d]", tc.name, got, tc.min, tc.max)
		}
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
	}
}
