package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/mcpserver"
	"github.com/toolgate/toolgate/tools"
)

func init() {
	// An operator who approves held calls, beside the fixture's tokens.
	tokens["ops-token"] = tools.Principal{ID: "ops", Tenant: "acme", Scopes: []string{gateway.ApprovalScope}}
}

// sessionRevision is the revision of the tests of HTTP sessions: the
// newest that has them.
const sessionRevision = "2025-11-25"

// connect opens a Go SDK client session over HTTP with the given token,
// at sessionRevision.
func connect(t *testing.T, url, token string) *sdk.ClientSession {
	t.Helper()
	return connectAt(t, url, token, sessionRevision, nil)
}

// callTool calls call_tool and decodes its JSON text.
func callTool(t *testing.T, cs *sdk.ClientSession, args any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "call_tool", Arguments: args})
	if err != nil {
		t.Fatalf("call_tool(%v): %v", args, err)
	}
	var out map[string]any
	text := res.Content[0].(*sdk.TextContent).Text
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("call_tool(%v) answered %q, not JSON", args, text)
	}
	return out, res.IsError
}

// TestSessionIDsAreRandom: every session, over HTTP and stdio, and across
// servers sharing a store (a restart), has its own random gateway session,
// so its step 1 is executed, never replayed from another run.
func TestSessionIDsAreRandom(t *testing.T) {
	f := newFixture(t)
	ts := f.serveHTTP(t)
	for i := range 3 {
		cs := connect(t, ts.URL, "teller-token")
		if !regexp.MustCompile(`^mcp-[A-Z2-7]{26}$`).MatchString(cs.ID()) {
			t.Errorf("session ID %q, want mcp- and 128 random bits", cs.ID())
		}
		out, _ := callTool(t, cs, map[string]any{"name": "get_balance", "arguments": map[string]any{"account": "ACC-00001"}, "step": 1})
		if out["success"] != true || out["cached"] != false {
			t.Errorf("session %d step 1 = %v, want a fresh execution", i, out)
		}
	}
	for i := range 2 { // two "runs" of a stdio server on the same store
		cs := serveStdio(t, t.Context(), f.reg, f.disc, f.gw, &mcpserver.Options{Principal: tokens["teller-token"], Logger: quiet})
		out, _ := callTool(t, cs, map[string]any{"name": "bank/get_balance", "arguments": map[string]any{"account": "ACC-00001"}})
		cs.Close()
		if out["success"] != true || out["cached"] != false || out["step"] != 1.0 {
			t.Errorf("stdio run %d step 1 = %v, want a fresh execution", i, out)
		}
	}
	if got := f.balances.Load(); got != 5 {
		t.Errorf("get_balance ran %d times, want 5 (one per session)", got)
	}
	seen := map[string]bool{}
	for _, id := range f.balanceSessions(t) {
		if seen[id] || strings.Contains(id, "teller") {
			t.Errorf("gateway session %q repeats or names the principal", id)
		}
		seen[id] = true
	}
}

// rawMCP sends one Streamable HTTP request and returns the status and body.
func rawMCP(t *testing.T, method, url, token, session, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK && method == http.MethodGet {
		return resp.StatusCode, "" // an open event stream
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestForeignSessionIs404: a session belongs to the principal that opened
// it for every method. Another principal presenting its ID gets exactly
// the answer of an ID that does not exist, and the session is unharmed.
func TestForeignSessionIs404(t *testing.T) {
	f := newFixture(t)
	ts := f.serveHTTP(t)
	owner := connect(t, ts.URL, "teller-token")
	id := owner.ID()

	list := `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
	call := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"balance"}}}`
	wantStatus, wantBody := rawMCP(t, http.MethodPost, ts.URL, "teller-token", "mcp-NOSUCHSESSIONAAAAAAAAAAAAAA", list)
	if wantStatus != http.StatusNotFound {
		t.Fatalf("an unknown session ID: status %d, want 404", wantStatus)
	}
	for _, tc := range []struct {
		name, method, body string
	}{
		{"tools/list", http.MethodPost, list},
		{"tools/call", http.MethodPost, call},
		{"GET stream", http.MethodGet, ""},
		{"DELETE", http.MethodDelete, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, token := range []string{"admin-token", "ops-token"} {
				t.Run(token, func(t *testing.T) {
					status, body := rawMCP(t, tc.method, ts.URL, token, id, tc.body)
					if status != wantStatus || body != wantBody {
						t.Errorf("%s of teller's session with %s = %d %q, want %d %q (as for no session)", tc.name, token, status, body, wantStatus, wantBody)
					}
					status, body = rawMCP(t, tc.method, ts.URL, token, "mcp-NOSUCHSESSIONAAAAAAAAAAAAAA", tc.body)
					if status != wantStatus || body != wantBody {
						t.Errorf("%s of an unknown session with %s = %d %q, want %d %q", tc.name, token, status, body, wantStatus, wantBody)
					}
				})
			}
		})
	}
	// The owner's session survived the foreign DELETE.
	if _, err := owner.ListTools(t.Context(), nil); err != nil {
		t.Errorf("the owner's session after the foreign requests: %v", err)
	}
	if status, _ := rawMCP(t, http.MethodPost, ts.URL, "teller-token", id, list); status != http.StatusOK {
		t.Errorf("the owner's tools/list: status %d, want 200", status)
	}
	if status, _ := rawMCP(t, http.MethodDelete, ts.URL, "teller-token", id, ""); status != http.StatusNoContent {
		t.Errorf("the owner's DELETE: status %d, want 204", status)
	}
}

// TestCallToolArguments: call_tool enforces its own schema, and a refused
// step (near 2^63, above MaxStep) leaves the session's later calls working.
func TestCallToolArguments(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f.serveHTTP(t).URL, "teller-token")
	args := map[string]any{"account": "ACC-00001"}
	for _, tc := range []struct {
		name string
		in   any
	}{
		{"an extra member", map[string]any{"name": "get_balance", "arguments": args, "retries": 3}},
		{"no name", map[string]any{"arguments": args}},
		{"an empty name", map[string]any{"name": "", "arguments": args}},
		{"a name that is not a string", map[string]any{"name": 7, "arguments": args}},
		{"arguments that are not an object", map[string]any{"name": "get_balance", "arguments": []any{1}}},
		{"step 0", map[string]any{"name": "get_balance", "arguments": args, "step": 0}},
		{"a negative step", map[string]any{"name": "get_balance", "arguments": args, "step": -1}},
		{"a fractional step", map[string]any{"name": "get_balance", "arguments": args, "step": 1.5}},
		{"a step as a string", map[string]any{"name": "get_balance", "arguments": args, "step": "1"}},
		{"a step near 2^63", map[string]any{"name": "get_balance", "arguments": args, "step": json.Number("9223372036854775807")}},
		{"a step beyond int64", map[string]any{"name": "get_balance", "arguments": args, "step": json.Number("92233720368547758070")}},
		{"a step in exponent notation", map[string]any{"name": "get_balance", "arguments": args, "step": json.Number("1e3")}},
		{"a step above MaxStep", map[string]any{"name": "get_balance", "arguments": args, "step": mcpserver.MaxStep + 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, isErr := callTool(t, cs, tc.in)
			if !isErr || out["error_type"] != "VALIDATION_ERROR" || out["retryable"] != true {
				t.Errorf("call_tool with %s = %v (isError %v), want a retryable VALIDATION_ERROR", tc.name, out, isErr)
			}
		})
	}
	if n := f.balances.Load(); n != 0 {
		t.Fatalf("refused calls ran get_balance %d times", n)
	}
	// The highest step a client may give, then automatic steps after it.
	out, _ := callTool(t, cs, map[string]any{"name": "get_balance", "arguments": args, "step": mcpserver.MaxStep})
	if out["success"] != true || out["step"] != float64(mcpserver.MaxStep) {
		t.Errorf("call_tool at MaxStep = %v, want success", out)
	}
	for want := mcpserver.MaxStep + 1; want <= mcpserver.MaxStep+2; want++ {
		out, _ = callTool(t, cs, map[string]any{"name": "get_balance", "arguments": args})
		if out["success"] != true || out["cached"] != false || out["step"] != float64(want) {
			t.Errorf("an automatic step after MaxStep = %v, want a fresh success at step %d", out, want)
		}
	}
	out, _ = callTool(t, cs, map[string]any{"name": "get_balance", "arguments": nil, "step": 5})
	if out["success"] == true {
		t.Errorf("get_balance with null arguments ({}): %v, want the gateway's validation error", out)
	}
}

// TestApproveOverHTTP: an irreversible tool behind the MCP server is held;
// a second principal holding approvals:grant reads and grants the approval
// on the same server; the same call at the same step then runs, once.
func TestApproveOverHTTP(t *testing.T) {
	f := newFixture(t)
	ts := f.serveHTTP(t)
	cs := connect(t, ts.URL, "admin-token")
	call := map[string]any{"name": "bank/issue_full_refund", "arguments": map[string]any{"transaction_id": "tx-9"}, "step": 3}
	out, isErr := callTool(t, cs, call)
	id, _ := out["approval_id"].(string)
	if !isErr || out["error_type"] != "CONFIRMATION_REQUIRED" || id == "" {
		t.Fatalf("irreversible call = %v, want CONFIRMATION_REQUIRED with an approval_id", out)
	}
	approve := func(method, token string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), method, ts.URL+mcpserver.ApprovalsPath+id, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		method, token string
		want          int
	}{
		{http.MethodGet, "ops-token", http.StatusOK},
		{http.MethodPost, "admin-token", http.StatusForbidden}, // the requester itself
		{http.MethodPost, "teller-token", http.StatusForbidden},
		{http.MethodPost, "no-such-token", http.StatusUnauthorized},
		{http.MethodPost, "ops-token", http.StatusOK},
	} {
		t.Run(tc.method, func(t *testing.T) {
			if status, body := approve(tc.method, tc.token); status != tc.want {
				t.Errorf("%s approval with %s = %d %s, want %d", tc.method, tc.token, status, body, tc.want)
			}
		})
	}
	if f.refunds.Load() != 0 {
		t.Fatal("the refund ran before the call was sent again")
	}
	out, isErr = callTool(t, cs, call)
	if isErr || out["success"] != true {
		t.Errorf("the approved call = %v, want success", out)
	}
	if n := f.refunds.Load(); n != 1 {
		t.Errorf("the refund ran %d times, want 1", n)
	}
}

// TestStdioMalformedFrames: over stdio each malformed frame gets a
// JSON-RPC error and the session goes on (a ping after each is answered).
func TestStdioMalformedFrames(t *testing.T) {
	f := newFixture(t)
	srv, err := mcpserver.New(f.reg, f.disc, f.gw, &mcpserver.Options{Principal: tokens["teller-token"], Logger: quiet, MaxFrameBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, inR, outW); outW.Close() }()
	replies := bufio.NewReader(outR)
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	read := func() map[string]any {
		line, err := replies.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v (server: %v)", err, <-done)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("reply %q is not JSON", line)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r := read(); r["result"] == nil {
		t.Fatalf("initialize = %v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	for i, tc := range []struct {
		frame string
		code  float64
		id    any
	}{
		{`null`, -32600, nil},
		{`[]`, -32600, nil},
		{`[{"jsonrpc":"2.0","id":90,"method":"ping"}]`, -32600, nil},
		{`garbage`, -32700, nil},
		{`{"jsonrpc":"2.0","id":91,"method":"ping"`, -32700, nil},
		{`42`, -32600, nil},
		{`{"jsonrpc":"1.0","id":92,"method":"ping"}`, -32600, 92.0},
		{`{"id":"r-93","method":"ping"}`, -32600, "r-93"},
		{`{"jsonrpc":2.0,"id":94,"method":"ping"}`, -32600, 94.0},
		{`{"jsonrpc":"2.0","id":95,"method":"ping","method":"tools/list"}`, -32600, 95.0},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":96,"method":7}`, -32600, 96.0},
		{`{"jsonrpc":"2.0","id":97}`, -32600, 97.0},
		{`{"jsonrpc":"2.0","id":98,"method":"ping","params":"` + strings.Repeat("x", 5000) + `"}`, -32600, nil},
		{strings.Repeat("x", 200000), -32600, nil},
		{`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":"x"}`, -32602, 99.0},
		{`{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":7}}`, -32602, 100.0},
		{`{"jsonrpc":"2.0","id":101,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, -32600, 101.0},
	} {
		t.Run(tc.frame, func(t *testing.T) {
			send(tc.frame)
			r := read()
			e, _ := r["error"].(map[string]any)
			if r["jsonrpc"] != "2.0" || e == nil || e["code"] != tc.code || r["id"] != tc.id {
				t.Errorf("frame %.50q = %v, want error %v with id %v", tc.frame, r, tc.code, tc.id)
			}
			if m, _ := e["message"].(string); goInternals.MatchString(m) {
				t.Errorf("frame %.50q = %v, whose message names Go internals", tc.frame, r)
			}
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 1000+i))
			if r := read(); r["id"] != float64(1000+i) || r["error"] != nil {
				t.Fatalf("after frame %.50q the ping got %v, want its result: the session must go on", tc.frame, r)
			}
		})
	}
	send(`{"jsonrpc":"2.0","id":2000,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"get_balance","arguments":{"account":"ACC-00003"}}}}`)
	if r := read(); !strings.Contains(fmt.Sprint(r["result"]), "1000.00") {
		t.Errorf("a tool call after the bad frames = %v", r)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio after stdin closed: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("ServeStdio did not return after stdin closed")
	}
}

// After an uncertain outcome, call_tool's re-run says so: the result's
// _meta (and its JSON text) carry the attempts and that an earlier
// attempt's outcome was uncertain.
func TestCallToolShowsUncertainAttempts(t *testing.T) {
	f := newFixture(t)
	var runs atomic.Int32
	if err := f.reg.Add(tools.Tool{ID: "bank/flaky_lookup", Card: tools.Card{Name: "flaky_lookup", Scopes: []string{"accounts:read"}},
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			if runs.Add(1) == 1 {
				return nil, errors.New("connection reset after the request was sent")
			}
			return json.RawMessage(`{"ok":true}`), nil
		}}); err != nil {
		t.Fatal(err)
	}
	cs := serveStdio(t, t.Context(), f.reg, f.disc, f.gw, &mcpserver.Options{Principal: tokens["teller-token"], Logger: quiet})
	call := func() (*sdk.CallToolResult, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "call_tool",
			Arguments: map[string]any{"name": "bank/flaky_lookup", "arguments": map[string]any{}, "step": 1}})
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &out); err != nil {
			t.Fatal(err)
		}
		return res, out
	}
	res, out := call()
	if !res.IsError || out["error_type"] != string(gateway.DownstreamFailure) || out["attempts"] != 1.0 || res.Meta[mcpserver.MetaAttempts] != 1.0 {
		t.Fatalf("first call = %v meta %v; want DOWNSTREAM_FAILURE with attempts 1", out, res.Meta)
	}
	res, out = call()
	if res.IsError || out["attempts"] != 2.0 || out["previous_attempt_uncertain"] != true {
		t.Errorf("re-run = %v; want success with attempts 2, previous_attempt_uncertain true", out)
	}
	if res.Meta[mcpserver.MetaAttempts] != 2.0 || res.Meta[mcpserver.MetaPreviousUncertain] != true {
		t.Errorf("re-run _meta = %v; want %s 2 and %s true", res.Meta, mcpserver.MetaAttempts, mcpserver.MetaPreviousUncertain)
	}
}
