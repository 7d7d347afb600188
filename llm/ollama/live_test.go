package ollama_test

import (
	"context"
	"os"
	"strconv"
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
	backendtest.LiveModes(t, b, 5*time.Minute, true, backendtest.UsableReply, llm.ModeEnvelope, llm.ModeNative)
	if os.Getenv("TOOLGATE_OLLAMA_EMBED_MODEL") != "" {
		backendtest.LiveEmbed(t, b)
	}
}

// TestLiveContextSize reads the model's num_ctx back from the real server's
// /api/show: the value TOOLGATE_OLLAMA_NUM_CTX names when set (.ci/engines
// sets the one its Modelfile gives), else any answer without an error (a
// model without the parameter reports 0).
func TestLiveContextSize(t *testing.T) {
	model := testenv.Ollama(t)
	b, err := ollama.New(model, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := b.ContextSize(ctx)
	if err != nil {
		t.Fatalf("ContextSize: %v", err)
	}
	t.Logf("%s: num_ctx %d", model, n)
	if want := os.Getenv("TOOLGATE_OLLAMA_NUM_CTX"); want != "" {
		if w, err := strconv.Atoi(want); err != nil || n != w {
			t.Errorf("ContextSize = %d, want TOOLGATE_OLLAMA_NUM_CTX %s", n, want)
		}
	}
}
