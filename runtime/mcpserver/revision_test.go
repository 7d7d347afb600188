package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/runtime/mcpserver"
)

// revisions are the protocol revisions a client may speak to mcp serve:
// the stateless one and the two before it, which open sessions.
var revisions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// connectAt opens a Go SDK client session over HTTP with token, speaking
// revision, with copts (nil for none).
func connectAt(t *testing.T, url, token, revision string, copts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	})}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "go-test", Version: "1"}, copts).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &sdk.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatalf("connect at %s: %v", revision, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// serveWith serves the fixture over Streamable HTTP with opts (bearer
// tokens filled in, and the quiet logger unless opts has one) until the test ends, and returns
// the server and the test server.
func (f *fixture) serveWith(t testing.TB, opts mcpserver.Options) (*mcpserver.Server, *httptest.Server) {
	t.Helper()
	opts.Authenticate = bearer
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	srv, err := mcpserver.New(f.reg, f.disc, f.gw, &opts)
	if err != nil {
		t.Fatal(err)
	}
	h, err := srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return srv, ts
}

func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func resultJSON(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatalf("result without content: %+v", res)
	}
	var out map[string]any
	text := res.Content[0].(*sdk.TextContent).Text
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("result %q is not JSON", text)
	}
	return out
}

// TestEveryRevisionListsSearchesCalls: a client of each revision (the
// Go SDK's, 2026-07-28 stateless, and the session revisions before it)
// negotiates its own revision on the one endpoint, lists the two tools,
// finds a tool, sees it added to its list (tools/list_changed), calls it
// through call_tool and as a first-class tool, replays a step without
// running it again, and can neither find nor call a tool it may not use.
func TestEveryRevisionListsSearchesCalls(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			f := newFixture(t)
			ts := f.serveHTTP(t)
			changed := make(chan struct{}, 8)
			cs := connectAt(t, ts.URL, "teller-token", rev, &sdk.ClientOptions{
				ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
			})
			if got := cs.InitializeResult().ProtocolVersion; got != rev {
				t.Fatalf("negotiated %s, want %s", got, rev)
			}
			if stateless := rev >= "2026-07-28"; stateless != (cs.ID() == "") {
				t.Errorf("session ID %q at %s; want none exactly for the stateless revision", cs.ID(), rev)
			}
			if got := toolNames(t, cs); !slices.Equal(got, []string{"call_tool", "find_tools"}) {
				t.Errorf("tools = %v, want call_tool and find_tools", got)
			}
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "what is the balance of my bank account"}})
			if err != nil {
				t.Fatal(err)
			}
			if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, "bank/get_balance") || strings.Contains(text, "refund") {
				t.Errorf("find_tools = %s, want bank/get_balance and no refund", text)
			}
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Fatal("no tools/list_changed after find_tools")
			}
			if got := toolNames(t, cs); !slices.Contains(got, "get_balance") {
				t.Errorf("tools after find_tools = %v, want get_balance first-class", got)
			}
			call := map[string]any{"name": "bank/get_balance", "arguments": map[string]any{"account": "ACC-00001"}, "step": 7}
			for i, wantCached := range []bool{false, true} {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					out, isErr := callTool(t, cs, call)
					if isErr || out["success"] != true || out["cached"] != wantCached {
						t.Errorf("call %d at step 7 = %v, want success with cached %v", i, out, wantCached)
					}
				})
			}
			res, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "get_balance", Arguments: map[string]any{"account": "ACC-00002"}})
			if err != nil || res.IsError {
				t.Fatalf("first-class get_balance = %v, %v", res, err)
			}
			if got := f.balances.Load(); got != 2 {
				t.Errorf("get_balance ran %d times, want 2 (the replay runs nothing)", got)
			}
			out, isErr := callTool(t, cs, map[string]any{"name": "bank/issue_full_refund", "arguments": map[string]any{"transaction_id": "tx-1"}})
			if !isErr || out["error_type"] != "PERMISSION_DENIED" {
				t.Errorf("the refund by a teller = %v, want PERMISSION_DENIED", out)
			}
		})
	}
}

// postRaw sends one JSON-RPC request over HTTP with the given headers and
// returns the status and the JSON-RPC message of the answer (the data
// line of an event stream, or the body).
func postRaw(t *testing.T, url, token string, headers map[string]string, body string) (int, map[string]any) {
	t.Helper()
	resp, b := postMCP(t, url, token, headers, body)
	text := string(b)
	for line := range strings.SplitSeq(text, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			text = data
		}
	}
	var msg map[string]any
	json.Unmarshal([]byte(text), &msg)
	return resp.StatusCode, msg
}

// postMCP POSTs body to url as token's MCP client would, with the extra
// headers, and returns the response and its body (read and closed).
func postMCP(t *testing.T, url, token string, headers map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// newMeta is the per-request _meta of a 2026-07-28 request.
const newMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// TestStatelessWire checks the wire of a 2026-07-28 request: server/discover
// offers the revision beside the older ones; the Mcp-Method header must
// match the body (Mcp-Name the tool); tools/list carries cacheScope and
// ttlMs by the rule of [mcpserver.StaticListTTL]'s documentation, and the
// same bytes on a refetch.
func TestStatelessWire(t *testing.T) {
	f := newFixture(t)
	ts := f.serveHTTP(t)
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
	status, msg := postRaw(t, ts.URL, "teller-token", h, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+newMeta+`}}`)
	res, _ := msg["result"].(map[string]any)
	if status != http.StatusOK || res == nil {
		t.Fatalf("server/discover = %d %v", status, msg)
	}
	versions, _ := json.Marshal(res["supportedVersions"])
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			if !strings.Contains(string(versions), rev) {
				t.Errorf("server/discover supportedVersions %s, want %s among them", versions, rev)
			}
		})
	}

	h["Mcp-Method"] = "tools/call" // does not match the body
	status, msg = postRaw(t, ts.URL, "teller-token", h, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+newMeta+`}}`)
	if status != http.StatusBadRequest || msg["result"] != nil {
		t.Errorf("tools/list with Mcp-Method tools/call = %d %v, want 400 and no result", status, msg)
	}

	h["Mcp-Method"] = "tools/list"
	var lists []string
	for range 2 {
		status, msg = postRaw(t, ts.URL, "teller-token", h, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+newMeta+`}}`)
		res, _ = msg["result"].(map[string]any)
		if status != http.StatusOK || res == nil {
			t.Fatalf("tools/list = %d %v", status, msg)
		}
		if res["cacheScope"] != "private" || res["ttlMs"] != 0.0 {
			t.Errorf("tools/list cacheScope %v ttlMs %v, want private and 0 (the caller's finds change it)", res["cacheScope"], res["ttlMs"])
		}
		b, _ := json.Marshal(res["tools"])
		lists = append(lists, string(b))
	}
	if lists[0] != lists[1] {
		t.Errorf("tools/list refetched differs:\n%s\n%s", lists[0], lists[1])
	}

	// Without first-class tools the list is the same for everyone, always.
	_, static := f.serveWith(t, mcpserver.Options{NoFirstClass: true})
	status, msg = postRaw(t, static.URL, "teller-token", h, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+newMeta+`}}`)
	res, _ = msg["result"].(map[string]any)
	if status != http.StatusOK || res == nil || res["cacheScope"] != "public" || res["ttlMs"] != float64(mcpserver.StaticListTTL/time.Millisecond) {
		t.Errorf("tools/list without first-class tools = %d %v, want public with ttlMs %d", status, msg, mcpserver.StaticListTTL/time.Millisecond)
	}

	// A tools/call names its tool in Mcp-Name.
	h["Mcp-Method"], h["Mcp-Name"] = "tools/call", "find_tools"
	status, msg = postRaw(t, ts.URL, "teller-token", h, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"call_tool",`+newMeta+`,"arguments":{"name":"bank/get_balance","arguments":{"account":"A"}}}}`)
	if status != http.StatusBadRequest || msg["result"] != nil {
		t.Errorf("tools/call of call_tool with Mcp-Name find_tools = %d %v, want 400", status, msg)
	}
	if f.balances.Load() != 0 {
		t.Errorf("a request with mismatched headers ran the tool")
	}
}

// TestStatelessNamesPerPrincipal: a principal's stateless requests share
// its principal context (names listed stay bound to their tools across
// requests and clients), while another principal's requests have their
// own: one principal's finds never reach another's list.
func TestStatelessNamesPerPrincipal(t *testing.T) {
	f := newFixture(t)
	ts := f.serveHTTP(t)
	a := connectAt(t, ts.URL, "teller-token", "2026-07-28", nil)
	if _, err := a.CallTool(t.Context(), &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "select:bank/get_balance"}}); err != nil {
		t.Fatal(err)
	}
	again := connectAt(t, ts.URL, "teller-token", "2026-07-28", nil)
	if got := toolNames(t, again); !slices.Contains(got, "get_balance") {
		t.Errorf("the same principal's next client lists %v, want get_balance (its context's binding)", got)
	}
	other := connectAt(t, ts.URL, "admin-token", "2026-07-28", nil)
	if got := toolNames(t, other); !slices.Equal(got, []string{"call_tool", "find_tools"}) {
		t.Errorf("another principal lists %v, want only call_tool and find_tools", got)
	}
	// Steps of the same principal name the same slot: the second client
	// replays the first's step.
	call := map[string]any{"name": "get_balance", "arguments": map[string]any{"account": "ACC-7"}, "step": 11}
	if out, _ := callTool(t, a, call); out["cached"] != false {
		t.Errorf("first call = %v, want a fresh run", out)
	}
	if out, _ := callTool(t, again, call); out["cached"] != true {
		t.Errorf("the same step from the same principal = %v, want the replay", out)
	}
	call["name"] = "bank/get_balance"
	if out, _ := callTool(t, other, call); out["success"] != true || out["cached"] != false {
		t.Errorf("the same step from another principal = %v, want its own run", out)
	}
	sessions := map[string]bool{}
	for _, id := range f.balanceSessions(t) {
		sessions[id] = true
	}
	if len(sessions) != 2 {
		t.Errorf("gateway sessions %v, want one per principal", sessions)
	}
}

// TestStatelessContextCaps: a principal's context for its stateless
// requests counts as one session under the caps, whatever the number of
// its requests: a principal at its cap of sessions gets 429 for its first
// stateless request, and a server at its cap refuses a new principal's,
// while a principal whose context is open goes on.
func TestStatelessContextCaps(t *testing.T) {
	f := newFixture(t)
	_, ts := f.serveWith(t, mcpserver.Options{MaxSessionsPerPrincipal: 1, MaxSessions: 2})
	if resp, body := initialize(t, http.DefaultClient, ts.URL, "teller-token", 1); resp.StatusCode != http.StatusOK {
		t.Fatalf("teller's session: %d %s", resp.StatusCode, body)
	}
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	list := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{` + newMeta + `}}`
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"teller holds its one session", "teller-token", http.StatusTooManyRequests},
		{"admin's context opens", "admin-token", http.StatusOK},
		{"admin's context serves again", "admin-token", http.StatusOK},
		{"the server is full", "ops-token", http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, msg := postRaw(t, ts.URL, tc.token, h, list)
			errObj, _ := msg["error"].(map[string]any)
			if status != tc.want || (tc.want == http.StatusTooManyRequests && (errObj == nil || errObj["code"] != -32000.0 || msg["id"] != 9.0)) {
				t.Errorf("tools/list = %d %v, want %d", status, msg, tc.want)
			}
		})
	}
}

// TestStatelessGetIs405: a GET or DELETE of the stateless revision is
// refused with 405 and opens no principal context (it holds no slot).
func TestStatelessGetIs405(t *testing.T) {
	f := newFixture(t)
	_, ts := f.serveWith(t, mcpserver.Options{MaxSessions: 1})
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		t.Run(method, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), method, ts.URL, nil)
			req.Header.Set("Authorization", "Bearer admin-token")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s at 2026-07-28 = %d, want 405", method, resp.StatusCode)
			}
		})
	}
	// The one slot is still free for teller's context.
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	if status, msg := postRaw(t, ts.URL, "teller-token", h, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+newMeta+`}}`); status != http.StatusOK {
		t.Errorf("tools/list after the GETs = %d %v, want 200", status, msg)
	}
}
