package backendtest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/llm"
)

// LiveRequest is Request(mode) as the runtime would send it to a real
// engine: no MaxTokens, so that Checked sizes the budget to the
// constraint, and in ModeEnvelope the shortlist's envelope schema compiled
// by the grammar package with the answer and the query bounded at
// [llm.DefaultAnswerLength] and [llm.DefaultQueryLength], reported in
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

// LiveModes runs one subtest per mode against a live engine: a Chat of b
// under [llm.Checked] (the defaults) within timeout, of LiveRequest(t, mode)
// when bounded (a local model the constraint must close), else
// Request(mode), and then check of the request and the reply.
func LiveModes(t *testing.T, b llm.Backend, timeout time.Duration, bounded bool, check func(t *testing.T, req *llm.Request, resp *llm.Response), modes ...llm.Mode) {
	t.Helper()
	cb, err := llm.Checked(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			req := Request(mode)
			if bounded {
				req = LiveRequest(t, mode)
			}
			check(t, req, LiveChat(t, cb, req, timeout))
		})
	}
}

// LiveChat is one Chat of b with req within timeout against a live
// engine; an error fails t. The reply is logged.
func LiveChat(t *testing.T, b llm.Backend, req *llm.Request, timeout time.Duration) *llm.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := b.Chat(ctx, req)
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	t.Logf("action %s raw %s usage %+v", resp.Action, resp.Raw, resp.Usage)
	return resp
}

// LiveEmbed embeds two texts with a live embedder: an error, or anything
// but two non-empty vectors, fails t.
func LiveEmbed(t *testing.T, e llm.Embedder) {
	t.Helper()
	vecs, err := e.Embed(context.Background(), []string{"check my balance", "send money"})
	if err != nil || len(vecs) != 2 || len(vecs[0]) == 0 {
		t.Errorf("Embed = %d vectors, %v", len(vecs), err)
	}
}

// UsableReply is what any model must manage under the constraint, as a
// [LiveModes] check: a reply of the turn's shape, a call only of a
// shortlisted tool, and the engine's token counts.
func UsableReply(t *testing.T, req *llm.Request, resp *llm.Response) {
	t.Helper()
	switch resp.Action {
	case llm.ActionCall:
		if len(resp.Calls) != 1 || !slices.Contains(req.ToolNames(), resp.Calls[0].Name) {
			t.Errorf("Chat = calls %+v, want one call of a shortlisted tool", resp.Calls)
		}
	case llm.ActionAnswer, llm.ActionFindTools:
	default:
		t.Errorf("Chat = action %q", resp.Action)
	}
	if resp.Usage.CompletionTokens == 0 || resp.Usage.PromptTokens == 0 {
		t.Errorf("usage %+v: want the engine's prompt and completion counts", resp.Usage)
	}
}
