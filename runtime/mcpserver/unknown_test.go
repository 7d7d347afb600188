package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/runtime/mcpserver"
)

// TestUnknownMethodOverHTTP: a request of a method the server does not
// have, in a session or opening none, is answered as JSON-RPC and the
// stdio transport answer it (a -32601 error for its id), not with the
// SDK's plain-text 400 "JSON RPC not handled"; an unknown notification is
// accepted (202) and gets no answer; known methods are served as before.
func TestUnknownMethodOverHTTP(t *testing.T) {
	f := newFixture(t)
	_, ts := f.serveWith(t, mcpserver.Options{})
	resp, body := initialize(t, http.DefaultClient, ts.URL, "teller-token", 1)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize = %d %q, no session", resp.StatusCode, body)
	}
	cases := []struct {
		name, session, body string
		status              int
		id                  string // the JSON-RPC error's id; "" when no error is wanted
	}{
		{"request in a session", sid, `{"jsonrpc":"2.0","id":7,"method":"foo/bar"}`, http.StatusOK, "7"},
		{"string id in a session", sid, `{"jsonrpc":"2.0","id":"q","method":"foo/bar","params":{}}`, http.StatusOK, `"q"`},
		{"request without a session", "", `{"jsonrpc":"2.0","id":8,"method":"foo/bar"}`, http.StatusOK, "8"},
		{"notification in a session", sid, `{"jsonrpc":"2.0","method":"notifications/foo"}`, http.StatusAccepted, ""},
		{"known method", sid, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, http.StatusOK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{"MCP-Protocol-Version": "2025-06-18"}
			if tc.session != "" {
				hdr["Mcp-Session-Id"] = tc.session
			}
			resp, b := postMCP(t, ts.URL, "teller-token", hdr, tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("POST %s = %d %q, want %d", tc.body, resp.StatusCode, b, tc.status)
			}
			if tc.id == "" {
				if strings.Contains(string(b), "not handled") || strings.Contains(string(b), `"error"`) {
					t.Errorf("POST %s = %q, want no error", tc.body, b)
				}
				return
			}
			var got refusal
			if err := json.Unmarshal(b, &got); err != nil || got.Version != "2.0" || string(got.ID) != tc.id ||
				got.Error.Code != -32601 || !strings.Contains(got.Error.Message, `"foo/bar"`) {
				t.Errorf("POST %s = %q, want a JSON-RPC -32601 error for id %s naming the method", tc.body, b, tc.id)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
		})
	}
}
