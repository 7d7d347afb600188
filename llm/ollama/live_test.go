package ollama_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
	"github.com/toolgate/toolgate/llm/ollama"
)

// TestLive runs against a real Ollama server when OLLAMA_HOST names one
// (model: TOOLGATE_OLLAMA_MODEL, default llama3.2; embeddings:
// TOOLGATE_OLLAMA_EMBED_MODEL, when set), greedy with a fixed seed. It
// asserts what any model must manage under the constraint, not a good
// model's choice: a usable reply (repaired if need be) of the turn's
// shape, a call only of a shortlisted tool, and token usage reported. It
// is skipped, saying so, without a server.
func TestLive(t *testing.T) {
	model := testenv.Ollama(t)
	temp, seed := 0.0, int64(1)
	b, err := ollama.New(model, &ollama.Options{EmbedModel: os.Getenv("TOOLGATE_OLLAMA_EMBED_MODEL"), Temperature: &temp, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := llm.Checked(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []llm.Mode{llm.ModeEnvelope, llm.ModeNative} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			req := backendtest.LiveRequest(t, mode) // Checked's budget, sized to the bounded constraint
			resp, err := cb.Chat(ctx, req)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			t.Logf("raw: %s; usage %+v", resp.Raw, resp.Usage)
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
				t.Errorf("usage %+v: want the server's prompt and completion counts", resp.Usage)
			}
		})
	}
	if os.Getenv("TOOLGATE_OLLAMA_EMBED_MODEL") != "" {
		vecs, err := b.Embed(context.Background(), []string{"check my balance", "send money"})
		if err != nil || len(vecs) != 2 || len(vecs[0]) == 0 {
			t.Errorf("Embed = %d vectors, %v", len(vecs), err)
		}
	}
}
