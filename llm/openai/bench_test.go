package openai

import (
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
)

// BenchmarkBuildRequest measures translating an llm.Request into Chat
// Completions parameters (tool definitions token-counted), for the 5-tool
// shortlist and for all 105 tools of the real MCP catalogs, and reports
// the tokens of tool definitions each request carries. openai-go
// serializes the body when the request is sent, which is not timed here.
func BenchmarkBuildRequest(b *testing.B) {
	be, err := New("gpt-4.1-mini", &Options{BaseURL: "http://127.0.0.1:8080/v1", APIKey: "none"})
	if err != nil {
		b.Fatal(err)
	}
	root := testenv.RepoRoot(b)
	for _, mode := range []llm.Mode{llm.ModeEnvelope, llm.ModeGrammar, llm.ModeNative} {
		short, all := backendtest.CatalogRequests(b, root, mode)
		for _, c := range []struct {
			name string
			req  *llm.Request
		}{{"5-tools", short}, {"all-tools", all}} {
			b.Run(mode.String()+"/"+c.name, func(b *testing.B) {
				_, _, tokens, err := be.buildRequest(c.req)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, _, _, err := be.buildRequest(c.req); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(tokens), "tooldef-tokens")
				b.ReportMetric(float64(len(c.req.Tools)), "tools")
			})
		}
	}
}
