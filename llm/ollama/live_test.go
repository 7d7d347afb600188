package ollama_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
	"github.com/toolgate/toolgate/llm/ollama"
)

// TestLive runs against a real Ollama server when OLLAMA_HOST names one
// (model: TOOLGATE_OLLAMA_MODEL, default llama3.2; embeddings:
// TOOLGATE_OLLAMA_EMBED_MODEL, when set). It is skipped, saying so,
// otherwise.
func TestLive(t *testing.T) {
	if os.Getenv("OLLAMA_HOST") == "" {
		t.Skip("OLLAMA_HOST is not set: no live Ollama server to test against")
	}
	model := os.Getenv("TOOLGATE_OLLAMA_MODEL")
	if model == "" {
		model = "llama3.2"
	}
	b, err := ollama.New(model, &ollama.Options{EmbedModel: os.Getenv("TOOLGATE_OLLAMA_EMBED_MODEL")})
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
			req := backendtest.Request(mode)
			req.MaxTokens = 512
			resp, err := cb.Chat(ctx, req)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			t.Logf("raw: %s; usage %+v", resp.Raw, resp.Usage)
			if resp.Action != llm.ActionCall || resp.Calls[0].Name != "get_balance" {
				t.Errorf("Chat = %s %+v, want a call of get_balance for %q", resp.Action, resp.Calls, req.Messages[1].Content)
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
