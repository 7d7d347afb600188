package openai_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
	"github.com/toolgate/toolgate/llm/openai"
)

// TestLive runs the Chat Completions and the Responses backend against
// the real OpenAI API (or OPENAI_BASE_URL) when OPENAI_API_KEY is set
// (model: TOOLGATE_OPENAI_MODEL, default gpt-4.1-mini; embeddings:
// TOOLGATE_OPENAI_EMBEDDING_MODEL, when set). It is skipped, saying so,
// otherwise. OpenAI-compatible servers rarely implement /v1/responses:
// against one, the "responses" subtests fail.
func TestLive(t *testing.T) {
	model := testenv.HostedModel(t, "OPENAI_API_KEY", "TOOLGATE_OPENAI_MODEL", "gpt-4.1-mini", "OpenAI API")
	b, err := openai.New(model, &openai.Options{EmbeddingModel: os.Getenv("TOOLGATE_OPENAI_EMBEDDING_MODEL")})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := openai.NewResponses(model, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("chat", func(t *testing.T) {
		backendtest.LiveModes(t, b, 2*time.Minute, false, wantGetBalance, llm.ModeEnvelope, llm.ModeNative)
		if os.Getenv("TOOLGATE_OPENAI_EMBEDDING_MODEL") != "" {
			backendtest.LiveEmbed(t, b)
		}
	})
	t.Run("responses", func(t *testing.T) {
		backendtest.LiveModes(t, rb, 2*time.Minute, false, wantGetBalance, llm.ModeEnvelope, llm.ModeNative)
	})
}

// TestLiveLlamaCpp runs against a llama.cpp server when
// TOOLGATE_LLAMACPP_URL names one (e.g. http://localhost:8080/v1), greedy
// with a fixed seed: ModeGrammar with a GBNF that allows only an answer
// (the grammar, not the model, decides the action), and ModeEnvelope
// through response_format json_schema, where any model must produce a
// usable envelope (repaired if need be) with the answer bounded as the
// runtime bounds it. It is skipped, saying so, otherwise.
func TestLiveLlamaCpp(t *testing.T) {
	url := testenv.LlamaCpp(t)
	temp, seed := 0.0, int64(1)
	b, err := openai.New("local", &openai.Options{BaseURL: url, APIKey: "none", LegacyMaxTokens: true, Temperature: &temp, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openai.ProbeLlamaCpp(context.Background(), url, nil); err != nil {
		t.Errorf("ProbeLlamaCpp: %v, want the server recognized as llama.cpp", err)
	}
	cb, err := llm.Checked(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("grammar", func(t *testing.T) {
		resp := backendtest.LiveChat(t, cb, backendtest.Request(llm.ModeGrammar), 5*time.Minute)
		if resp.Action != llm.ActionAnswer {
			t.Errorf("Chat = %s (%s), want the answer the grammar forces", resp.Action, resp.Raw)
		}
	})
	t.Run("envelope", func(t *testing.T) {
		// .ci/engines' chat template keeps llama-server's generation prompt
		// empty: with TinyLlama's own, every json_schema request got HTTP
		// 400 "Failed to initialize samplers" (see write_template there).
		req := backendtest.LiveRequest(t, llm.ModeEnvelope) // Checked's budget, sized to the bounded constraint
		resp := backendtest.LiveChat(t, cb, req, 5*time.Minute)
		if resp.Action == llm.ActionCall && !slices.Contains(req.ToolNames(), resp.Calls[0].Name) {
			t.Errorf("Chat = call of %s, want a shortlisted tool", resp.Calls[0].Name)
		}
		if resp.Usage.CompletionTokens == 0 {
			t.Errorf("usage %+v: want the server's completion count", resp.Usage)
		}
	})
}

// wantGetBalance is what a hosted model must do with Request's question:
// call get_balance.
func wantGetBalance(t *testing.T, _ *llm.Request, resp *llm.Response) {
	if resp.Action != llm.ActionCall || resp.Calls[0].Name != "get_balance" {
		t.Errorf("Chat = %s %+v, want a call of get_balance", resp.Action, resp.Calls)
	}
}
