package openai

import (
	"testing"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
)

// BenchmarkBuildRequest measures translating an [llm.Request] into Chat
// Completions parameters (tool definitions token-counted), for the 5-tool
// shortlist and for all 105 tools of the real MCP catalogs, and reports
// the tokens of tool definitions each request carries. openai-go
// serializes the body when the request is sent, which is not timed here.
func BenchmarkBuildRequest(b *testing.B) {
	be, err := New("gpt-4.1-mini", &Options{BaseURL: "http://127.0.0.1:8080/v1", APIKey: "none"})
	if err != nil {
		b.Fatal(err)
	}
	backendtest.BenchBuildRequest(b, []llm.Mode{llm.ModeEnvelope, llm.ModeGrammar, llm.ModeNative}, func(req *llm.Request) (int, error) {
		_, _, tokens, err := be.buildRequest(req)
		return tokens, err
	})
}
