package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/runtime/mcpserver"
)

// TestOriginChecked: over HTTP a request whose Origin header is present and
// is neither the server's own origin nor one of Options.AllowedOrigins is
// refused with 403 before anything else (the Streamable HTTP transport's
// DNS-rebinding rule), on the MCP endpoint (a JSON-RPC error) and on the
// approval endpoints (the HTTP contract's body); a request without Origin,
// with the server's own, or with an allowed one is served.
func TestOriginChecked(t *testing.T) {
	f := newFixture(t)
	_, ts := f.serveWith(t, mcpserver.Options{AllowedOrigins: []string{"https://app.example"}})
	cases := []struct {
		name, path, origin string
		want               int
	}{
		{"no origin", "/", "", http.StatusOK},
		{"own origin", "/", ts.URL, http.StatusOK},
		{"allowed origin", "/", "https://app.example", http.StatusOK},
		{"foreign origin", "/", "http://evil.example", http.StatusForbidden},
		{"same host, other port", "/", strings.TrimSuffix(ts.URL, ts.URL[strings.LastIndex(ts.URL, ":"):]) + ":1", http.StatusForbidden},
		{"null origin", "/", "null", http.StatusForbidden},
		{"foreign origin, approvals", mcpserver.ApprovalsPath + "apr_x", "http://evil.example", http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.origin != "" {
				hdr["Origin"] = tc.origin
			}
			resp, body := postMCP(t, ts.URL+tc.path, "teller-token", hdr, initializeBody(1))
			if resp.StatusCode != tc.want {
				t.Fatalf("POST %s with Origin %q = %d %q, want %d", tc.path, tc.origin, resp.StatusCode, body, tc.want)
			}
			if tc.want != http.StatusForbidden {
				return
			}
			var got struct {
				Version   string `json:"jsonrpc"`
				Error     *struct{ Code int }
				ErrorType string `json:"error_type"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("403 body %q: %v", body, err)
			}
			if tc.path == "/" && (got.Version != "2.0" || got.Error == nil || got.Error.Code != -32000) {
				t.Errorf("403 body %q, want a JSON-RPC error (-32000)", body)
			}
			if tc.path != "/" && got.ErrorType != "PERMISSION_DENIED" {
				t.Errorf("403 body %q, want the error body with PERMISSION_DENIED", body)
			}
		})
	}
}
