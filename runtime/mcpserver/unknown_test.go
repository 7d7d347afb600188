package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"regexp"
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
	_, ts := newFixture(t).serveWith(t, mcpserver.Options{})
	sid := openSession(t, ts.URL, "teller-token")
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

// TestBadFramesOverHTTP: a POST body that is no single JSON-RPC 2.0
// message the SDK can take is refused as the stdio transport refuses the
// frame: 400 with a JSON-RPC error (-32700 not JSON, -32600 otherwise) for
// its id when it has a valid one, in a session, opening none, or at the
// stateless revision. Before, the SDK answered an id beyond int64 or with
// a fraction for another id (-9223372036854775808, 1), took the last of
// two ids, and its plain-text errors named Go types.
func TestBadFramesOverHTTP(t *testing.T) {
	_, ts := newFixture(t).serveWith(t, mcpserver.Options{})
	sid := openSession(t, ts.URL, "teller-token")
	session := map[string]string{"MCP-Protocol-Version": "2025-06-18", "Mcp-Session-Id": sid}
	stateless := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping"}
	// 2025-03-26 is the last revision with batches.
	resp, body := postMCP(t, ts.URL, "teller-token", nil, strings.Replace(initializeBody(2), "2025-06-18", "2025-03-26", 1))
	batch := map[string]string{"MCP-Protocol-Version": "2025-03-26", "Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id")}
	if resp.StatusCode != http.StatusOK || batch["Mcp-Session-Id"] == "" {
		t.Fatalf("initialize at 2025-03-26 = %d %q, no session", resp.StatusCode, body)
	}
	cases := []struct {
		name    string
		headers map[string]string
		body    string
		code    int
		id      string
	}{
		{"id beyond int64", session, `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, -32600, "null"},
		{"id with a fraction", session, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "null"},
		{"id out of float range", session, `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, -32600, "null"},
		{"object id", session, `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
		{"boolean id", session, `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, "null"},
		{"id twice", session, `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, -32600, "2"},
		{"method twice", session, `{"jsonrpc":"2.0","id":3,"method":"ping","method":"tools/list"}`, -32600, "3"},
		{"wrong version", session, `{"jsonrpc":"1.0","id":4,"method":"ping"}`, -32600, "4"},
		{"no version", session, `{"id":5,"method":"ping"}`, -32600, "5"},
		{"not JSON", session, `{"jsonrpc":"2.0","id":6,"method":"ping"`, -32700, "null"},
		{"huge id opening no session", nil, `{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}`, -32600, "null"},
		{"huge id in a batch", batch, `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}]`, -32600, "null"},
		{"a number in a batch", batch, `[1,2]`, -32600, "null"},
		{"a batch not JSON", batch, `[{"jsonrpc":"2.0","id":2,"method":"ping"}`, -32700, "null"},
		{"huge id at the stateless revision", stateless, `{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping","params":{` + newMeta + `}}`, -32600, "null"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := postMCP(t, ts.URL, "teller-token", tc.headers, tc.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("POST %s = %d %q, want 400", tc.body, resp.StatusCode, b)
			}
			var got refusal
			if err := json.Unmarshal(b, &got); err != nil || got.Version != "2.0" || string(got.ID) != tc.id || got.Error.Code != tc.code {
				t.Errorf("POST %s = %q, want a JSON-RPC %d error for id %s", tc.body, b, tc.code, tc.id)
			}
			if internal := goInternals.Find(b); internal != nil {
				t.Errorf("POST %s = %q, which names Go internals (%q)", tc.body, b, internal)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
		})
	}
	// A good batch is still answered.
	resp, b := postMCP(t, ts.URL, "teller-token", batch, `[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"id":"b1","result":{}`) || !strings.Contains(string(b), `"id":"b2","result":{}`) {
		t.Errorf("a batch of two pings = %d %q, want both answered", resp.StatusCode, b)
	}
	// The session is unharmed.
	resp, b = postMCP(t, ts.URL, "teller-token", session, `{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"id":"after","result":{}`) {
		t.Errorf("ping after the bad frames = %d %q, want its answer", resp.StatusCode, b)
	}
}

// goInternals matches text of Go's and the SDK's that no client should read.
var goInternals = regexp.MustCompile(`Go (value|struct)|map\[|interface \{|wireDecode|float64|\bjcs:|\*?mcp\.[A-Z]`)

// openSession initializes a session at url with token and returns its ID.
func openSession(t *testing.T, url, token string) string {
	t.Helper()
	resp, body := initialize(t, http.DefaultClient, url, token, 1)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize = %d %q, no session", resp.StatusCode, body)
	}
	return sid
}

// TestParamsErrorsOverHTTP: params the SDK cannot decode are answered
// with a -32602 error for the request's id in a client's words, naming
// the method and, where it can, the member and the JSON type it must
// have. Before, the message quoted the SDK's decoder, Go types and all
// ("into a *mcp.CallToolParamsRaw", "Go struct field
// mcp.initializeParamsV2.protocolVersion of type string"), with code 0
// for an initialize.
func TestParamsErrorsOverHTTP(t *testing.T) {
	_, ts := newFixture(t).serveWith(t, mcpserver.Options{})
	sid := openSession(t, ts.URL, "teller-token")
	session := map[string]string{"MCP-Protocol-Version": "2025-06-18", "Mcp-Session-Id": sid}
	stateless := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	init := func(params string) string {
		return `{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"t","version":"1"},` + params + `}}`
	}
	cases := []struct {
		name, body string
		headers    map[string]string
		status     int
		want       string
	}{
		{"params a string", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}`, session, http.StatusOK,
			`invalid params of "tools/call": not what MCP defines for it`},
		{"tool name a number", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":7}}`, session, http.StatusOK,
			`invalid params of "tools/call": name must be a string`},
		{"protocol version a number", init(`"protocolVersion":7`), nil, http.StatusOK,
			`invalid params of "initialize": protocolVersion must be a string`},
		{"capabilities an array", `{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":[]}}`, nil, http.StatusOK,
			`invalid params of "initialize": capabilities must be an object`},
		{"cursor a number, stateless", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":7,` + newMeta + `}}`, stateless, http.StatusBadRequest,
			`invalid params of "tools/list": cursor must be a string`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, msg := postRaw(t, ts.URL, "teller-token", tc.headers, tc.body)
			e, _ := msg["error"].(map[string]any)
			if status != tc.status || e == nil || e["code"] != -32602.0 || msg["id"] != 4.0 || e["message"] != tc.want {
				t.Errorf("POST %s = %d %v, want %d, a -32602 error for id 4: %q", tc.body, status, msg, tc.status, tc.want)
			}
		})
	}
}

// TestSessionStateErrorsHaveACode: a request the session's state does
// not allow (tools/list before initialize, a second initialize) is
// answered with -32600, invalid request, for its id. The SDK answers
// these with code 0, which JSON-RPC does not define, so a client cannot
// tell the kind of error.
func TestSessionStateErrorsHaveACode(t *testing.T) {
	_, ts := newFixture(t).serveWith(t, mcpserver.Options{})
	sid := openSession(t, ts.URL, "teller-token")
	session := map[string]string{"MCP-Protocol-Version": "2025-06-18", "Mcp-Session-Id": sid}
	for _, tc := range []struct {
		name, body string
		headers    map[string]string
		want       string // in the message
	}{
		{"tools/list before initialize", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, nil, "invalid during session initialization"},
		{"a second initialize", initializeBody(5), session, `duplicate "initialize"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, msg := postRaw(t, ts.URL, "teller-token", tc.headers, tc.body)
			e, _ := msg["error"].(map[string]any)
			text, _ := e["message"].(string)
			if e == nil || e["code"] != -32600.0 || msg["id"] != 5.0 || !strings.Contains(text, tc.want) {
				t.Errorf("POST %s = %v, want a -32600 error for id 5 saying %q", tc.body, msg, tc.want)
			}
		})
	}
}

// TestStreamsNotResumable: the server keeps no event store, so a stream
// cannot be resumed: a GET with Last-Event-ID is answered 400, and the
// session goes on. A client whose stream broke during a call sends the
// call again with the same step, which replays its outcome.
func TestStreamsNotResumable(t *testing.T) {
	_, ts := newFixture(t).serveWith(t, mcpserver.Options{})
	sid := openSession(t, ts.URL, "teller-token")
	for _, id := range []string{"0_1", "abc"} {
		t.Run(id, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer teller-token")
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
			req.Header.Set("Last-Event-ID", id)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("GET with Last-Event-ID %q = %d, want 400", id, resp.StatusCode)
			}
		})
	}
	resp, b := postMCP(t, ts.URL, "teller-token", map[string]string{"MCP-Protocol-Version": "2025-06-18", "Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"id":"after","result":{}`) {
		t.Errorf("ping after = %d %q, want its answer", resp.StatusCode, b)
	}
}

// TestUnknownRevisionHeader: an MCP-Protocol-Version that names no
// revision ("garbage", which sorts after 2026-07-28) is refused as the
// unsupported version it is, as 1999-01-01 is, not served as a stateless
// request and refused for a missing _meta.
func TestUnknownRevisionHeader(t *testing.T) {
	_, ts := newFixture(t).serveWith(t, mcpserver.Options{})
	sid := openSession(t, ts.URL, "teller-token")
	for _, v := range []string{"garbage", "zzz", "2026-07-28x", "1999-01-01"} {
		t.Run(v, func(t *testing.T) {
			resp, b := postMCP(t, ts.URL, "teller-token", map[string]string{"MCP-Protocol-Version": v, "Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			text := strings.ToLower(string(b))
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(text, "supported") || strings.Contains(text, "_meta") {
				t.Errorf("ping with MCP-Protocol-Version %q = %d %q, want 400 naming the unsupported version", v, resp.StatusCode, b)
			}
		})
	}
}
