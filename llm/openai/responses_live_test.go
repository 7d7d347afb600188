package openai_test

import (
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/openai"
)

// TestLiveResponses runs the Responses backend against the real OpenAI API
// when OPENAI_API_KEY is set (model: TOOLGATE_OPENAI_MODEL, default
// gpt-4.1-mini); it is skipped, saying so, otherwise. OpenAI-compatible
// servers rarely implement /v1/responses, so OPENAI_BASE_URL alone does
// not turn it on.
func TestLiveResponses(t *testing.T) {
	model := testenv.HostedModel(t, "OPENAI_API_KEY", "TOOLGATE_OPENAI_MODEL", "gpt-4.1-mini", "OpenAI Responses API")
	b, err := openai.NewResponses(model, nil)
	if err != nil {
		t.Fatal(err)
	}
	liveModes(t, b, llm.ModeEnvelope, llm.ModeNative)
}
