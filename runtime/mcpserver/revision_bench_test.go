package mcpserver_test

import (
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallByRevision: one call_tool of bank/get_balance through the
// gateway over Streamable HTTP, at 2026-07-28 (a stateless request in the
// principal's context) and at 2025-11-25 (a request in a session).
func BenchmarkCallByRevision(b *testing.B) {
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		b.Run(rev, func(b *testing.B) {
			f := newFixture(b)
			ts := f.serveHTTP(b)
			hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				r = r.Clone(r.Context())
				r.Header.Set("Authorization", "Bearer teller-token")
				return http.DefaultTransport.RoundTrip(r)
			})}
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(),
				&sdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, &sdk.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			benchCalls(b, b.Context(), cs, "call_tool", map[string]any{"name": "bank/get_balance", "arguments": map[string]any{"account": "A"}})
		})
	}
}
