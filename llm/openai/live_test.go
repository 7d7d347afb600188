package openai_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
	"github.com/toolgate/toolgate/llm/openai"
)

// TestLive runs against the real OpenAI API (or OPENAI_BASE_URL) when
// OPENAI_API_KEY is set (model: TOOLGATE_OPENAI_MODEL, default
// gpt-4.1-mini). It is skipped, saying so, otherwise.
func TestLive(t *testing.T) {
	if os.Getenv("OPENAI_API_KEY") == "" {
		t.Skip("OPENAI_API_KEY is not set: no live OpenAI-compatible server to test against")
	}
	model := os.Getenv("TOOLGATE_OPENAI_MODEL")
	if model == "" {
		model = "gpt-4.1-mini"
	}
	b, err := openai.New(model, &openai.Options{EmbeddingModel: os.Getenv("TOOLGATE_OPENAI_EMBEDDING_MODEL")})
	if err != nil {
		t.Fatal(err)
	}
	liveModes(t, b, llm.ModeEnvelope, llm.ModeNative)
	if os.Getenv("TOOLGATE_OPENAI_EMBEDDING_MODEL") != "" {
		vecs, err := b.Embed(context.Background(), []string{"check my balance", "send money"})
		if err != nil || len(vecs) != 2 || len(vecs[0]) == 0 {
			t.Errorf("Embed = %d vectors, %v", len(vecs), err)
		}
	}
}

// TestLiveLlamaCpp runs ModeGrammar against a llama.cpp server when
// TOOLGATE_LLAMACPP_URL names one (e.g. http://localhost:8080/v1). It is
// skipped, saying so, otherwise.
func TestLiveLlamaCpp(t *testing.T) {
	url := os.Getenv("TOOLGATE_LLAMACPP_URL")
	if url == "" {
		t.Skip("TOOLGATE_LLAMACPP_URL is not set: no live llama.cpp server to test against")
	}
	b, err := openai.New("local", &openai.Options{BaseURL: url, APIKey: "none", LegacyMaxTokens: true})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := llm.Checked(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// backendtest.GBNF allows only an answer envelope: the grammar, not
	// the model, decides the action.
	resp, err := cb.Chat(ctx, backendtest.Request(llm.ModeGrammar))
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Action != llm.ActionAnswer {
		t.Errorf("Chat = %s (%s), want the answer the grammar forces", resp.Action, resp.Raw)
	}
}

func liveModes(t *testing.T, b llm.Backend, modes ...llm.Mode) {
	cb, err := llm.Checked(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			req := backendtest.Request(mode)
			resp, err := cb.Chat(ctx, req)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			t.Logf("raw: %s; usage %+v", resp.Raw, resp.Usage)
			if resp.Action != llm.ActionCall || resp.Calls[0].Name != "get_balance" {
				t.Errorf("Chat = %s %+v, want a call of get_balance", resp.Action, resp.Calls)
			}
		})
	}
}
