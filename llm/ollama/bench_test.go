package ollama

import (
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
)

// BenchmarkBuildRequest measures translating an llm.Request into Ollama's
// /api/chat request (tool definitions token-counted), for the 5-tool
// shortlist and for all 105 tools of the real MCP catalogs, and reports
// the tokens of tool definitions each request carries.
func BenchmarkBuildRequest(b *testing.B) {
	be, err := New("qwen3:8b", &Options{BaseURL: "http://127.0.0.1:11434"})
	if err != nil {
		b.Fatal(err)
	}
	root := testenv.RepoRoot(b)
	for _, mode := range []llm.Mode{llm.ModeEnvelope, llm.ModeNative} {
		short, all := backendtest.CatalogRequests(b, root, mode)
		for _, c := range []struct {
			name string
			req  *llm.Request
		}{{"5-tools", short}, {"all-tools", all}} {
			b.Run(mode.String()+"/"+c.name, func(b *testing.B) {
				_, tokens, err := be.buildRequest(c.req)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := be.buildRequest(c.req); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(tokens), "tooldef-tokens")
				b.ReportMetric(float64(len(c.req.Tools)), "tools")
			})
		}
	}
}
