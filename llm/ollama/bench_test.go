package ollama

import (
	"testing"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
)

// BenchmarkBuildRequest measures translating an [llm.Request] into Ollama's
// /api/chat request (tool definitions token-counted), for the 5-tool
// shortlist and for all 105 tools of the real MCP catalogs, and reports
// the tokens of tool definitions each request carries.
func BenchmarkBuildRequest(b *testing.B) {
	be, err := New("qwen3:8b", &Options{BaseURL: "http://127.0.0.1:11434"})
	if err != nil {
		b.Fatal(err)
	}
	backendtest.BenchBuildRequest(b, []llm.Mode{llm.ModeEnvelope, llm.ModeNative}, func(req *llm.Request) (int, error) {
		_, tokens, err := be.buildRequest(req)
		return tokens, err
	})
}
