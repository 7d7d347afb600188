package backendtest

import (
	"testing"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/llm"
)

// LiveRequest is Request(mode) as the runtime would send it to a real
// engine: no MaxTokens, so that Checked sizes the budget to the
// constraint, and in ModeEnvelope the shortlist's envelope schema compiled
// by the grammar package with the answer and the query bounded at
// llm.DefaultAnswerLength and llm.DefaultQueryLength, reported in
// Constraint.Bounds. A weak model that rambles is then closed by the
// constraint before the budget cuts it off.
func LiveRequest(t testing.TB, mode llm.Mode) *llm.Request {
	t.Helper()
	req := Request(mode)
	req.MaxTokens = 0
	if mode != llm.ModeEnvelope {
		return req
	}
	bd := llm.Bounds{Answer: llm.DefaultAnswerLength, Query: llm.DefaultQueryLength}
	env := make([]grammar.EnvelopeTool, len(req.Tools))
	for i, tl := range req.Tools {
		env[i] = grammar.EnvelopeTool{Name: tl.Name, Schema: tl.Parameters}
	}
	schema, _, err := grammar.EnvelopeSchema(env, &grammar.Options{MaxAnswerLength: bd.Answer, MaxQueryLength: bd.Query})
	if err != nil {
		t.Fatalf("backendtest: the shortlist's envelope schema: %v", err)
	}
	req.Constraint.EnvelopeSchema, req.Constraint.Bounds = schema, bd
	return req
}
