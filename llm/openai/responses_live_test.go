package openai_test

import (
	"os"
	"testing"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/openai"
)

// TestLiveResponses runs the Responses backend against the real OpenAI API
// when OPENAI_API_KEY is set (model: TOOLGATE_OPENAI_MODEL, default
// gpt-4.1-mini); it is skipped, saying so, otherwise. OpenAI-compatible
// servers rarely implement /v1/responses, so OPENAI_BASE_URL alone does
// not turn it on.
func TestLiveResponses(t *testing.T) {
	if os.Getenv("OPENAI_API_KEY") == "" {
		t.Skip("OPENAI_API_KEY is not set: no live OpenAI Responses API to test against")
	}
	model := os.Getenv("TOOLGATE_OPENAI_MODEL")
	if model == "" {
		model = "gpt-4.1-mini"
	}
	b, err := openai.NewResponses(model, nil)
	if err != nil {
		t.Fatal(err)
	}
	liveModes(t, b, llm.ModeEnvelope, llm.ModeNative)
}
