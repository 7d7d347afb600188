package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/internal/runtimetest"
	"github.com/toolgate/toolgate/runtime/mcpserver"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
	"github.com/toolgate/toolgate/tools/discovery"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type account struct {
	Account string `json:"account"`
}

type balance struct {
	Account string `json:"account"`
	Balance string `json:"balance"`
}

type refund struct {
	TransactionID string `json:"transaction_id"`
}

// fixture is a catalog of 100+ tools: two bank tools with handlers and the
// real MCP catalogs, served through a gateway on a memory store.
type fixture struct {
	reg      *tools.Registry
	gw       *gateway.Gateway
	disc     *discovery.Discoverer
	balances atomic.Int64 // executions of get_balance
	refunds  atomic.Int64 // executions of issue_full_refund
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{reg: tools.NewRegistry()}
	getBalance, err := tools.NewFunc("bank/get_balance", tools.Card{
		Summary: "Show the current balance of a bank account", Scopes: []string{"accounts:read"},
		Aliases: []string{"how much money is in my account"}, ReadOnly: true,
	}, func(_ context.Context, in account) (balance, error) {
		f.balances.Add(1)
		return balance{Account: in.Account, Balance: "1000.00"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	issueRefund, err := tools.NewFunc("bank/issue_full_refund", tools.Card{
		Summary: "Refund a whole transaction to the customer", Scopes: []string{"billing:admin"}, Irreversible: true,
	}, func(_ context.Context, in refund) (refund, error) {
		f.refunds.Add(1)
		return in, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.reg.Add(getBalance, issueRefund); err != nil {
		t.Fatal(err)
	}
	ts, err := catalog.LoadAll(testenv.Catalogs(t)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.reg.Add(ts...); err != nil {
		t.Fatal(err)
	}
	f.gw, f.disc = runtimetest.Stack(t, f.reg, &gateway.Options{Logger: quiet})
	return f
}

// serveHTTP serves the fixture over Streamable HTTP with bearer tokens,
// until the test ends.
func (f *fixture) serveHTTP(t testing.TB) *httptest.Server {
	t.Helper()
	_, ts := f.serveWith(t, mcpserver.Options{})
	return ts
}

// balanceSessions returns the gateway session of each get_balance entry
// of the audit log.
func (f *fixture) balanceSessions(t *testing.T) []string {
	t.Helper()
	audit, err := f.gw.Store().QueryAudit(t.Context(), store.AuditQuery{Tool: "bank/get_balance"})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(audit))
	for i, e := range audit {
		ids[i] = e.SessionID
	}
	return ids
}

var tokens = map[string]tools.Principal{
	"teller-token": {ID: "teller", Tenant: "acme", Scopes: []string{"accounts:read"}},
	"admin-token":  {ID: "admin", Tenant: "acme", Scopes: []string{"accounts:read", "billing:admin"}},
}

// serveStdio serves one session of an MCP server over reg, disc and gw
// (with opts) on in-memory transports until ctx ends, as the stdio case,
// and returns a Go SDK client connected to it, closed when tb ends.
func serveStdio(tb testing.TB, ctx context.Context, reg *tools.Registry, disc *discovery.Discoverer, gw *gateway.Gateway, opts *mcpserver.Options) *sdk.ClientSession {
	tb.Helper()
	return serveStdioTo(tb, ctx, reg, disc, gw, opts, nil)
}

// serveStdioTo is serveStdio with a client configured by copts.
func serveStdioTo(tb testing.TB, ctx context.Context, reg *tools.Registry, disc *discovery.Discoverer, gw *gateway.Gateway, opts *mcpserver.Options, copts *sdk.ClientOptions) *sdk.ClientSession {
	tb.Helper()
	srv, err := mcpserver.New(reg, disc, gw, opts)
	if err != nil {
		tb.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	go srv.Run(ctx, st)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "go-test", Version: "1"}, copts).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

func bearer(r *http.Request) (tools.Principal, error) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if p, found := tokens[tok]; ok && found {
		return p, nil
	}
	return tools.Principal{}, errors.New("unknown token")
}

// TestTypeScriptClient drives the server with the official TypeScript SDK
// client: initialize, list tools, find_tools, list_changed, call_tool (and
// its replay), the found tool called directly, and a tool the principal may
// not use, which can be neither found nor called.
func TestTypeScriptClient(t *testing.T) {
	modules := filepath.Dir(filepath.Dir(testenv.NodeModule(t, "@modelcontextprotocol/sdk")))
	f := newFixture(t)
	ts := f.serveHTTP(t)

	outText := runTSClient(t, modules, ts.URL, "full", "TOKEN=teller-token",
		"QUERY=what is the balance of my bank account",
		"CALL=bank/get_balance", `ARGS={"account":"ACC-00001"}`, "FIRSTCLASS=get_balance",
		"FORBIDDEN=bank/issue_full_refund", `FORBIDDEN_ARGS={"transaction_id":"tx-1"}`)
	var out struct {
		OK              bool
		Error           string
		InitialTools    []string
		Found           []string
		ListChangedSeen bool
		ChangedTools    []string
		Call, Retry     map[string]any
		Direct          map[string]any
		ForbiddenIsErr  bool `json:"forbiddenIsError"`
		Forbidden       map[string]any
		ForbiddenSelect []string
		FinalTools      []string
	}
	if err := json.Unmarshal(outText, &out); err != nil {
		t.Fatalf("client output %q: %v", outText, err)
	}
	if !out.OK {
		t.Fatalf("client failed: %s", out.Error)
	}
	if !slices.Equal(out.InitialTools, []string{"call_tool", "find_tools"}) {
		t.Errorf("initial tools = %v, want only call_tool and find_tools", out.InitialTools)
	}
	if len(out.Found) == 0 || out.Found[0] != "bank/get_balance" {
		t.Errorf("find_tools = %v, want bank/get_balance first", out.Found)
	}
	if !out.ListChangedSeen || !slices.Contains(out.ChangedTools, "get_balance") {
		t.Errorf("list_changed seen %v, tools then %v; want get_balance added as a first-class tool", out.ListChangedSeen, out.ChangedTools)
	}
	if out.Call["success"] != true || out.Call["cached"] != false {
		t.Errorf("call_tool = %v, want a fresh success", out.Call)
	}
	if out.Retry["success"] != true || out.Retry["cached"] != true {
		t.Errorf("call_tool resent with the same step = %v, want the cached replay", out.Retry)
	}
	if out.Direct["success"] != true {
		t.Errorf("first-class get_balance = %v, want success", out.Direct)
	}
	if got := f.balances.Load(); got != 2 {
		t.Errorf("get_balance executed %d times, want 2 (the replay must not execute)", got)
	}
	if !out.ForbiddenIsErr || out.Forbidden["error_type"] != "PERMISSION_DENIED" {
		t.Errorf("call of issue_full_refund = %v (isError %v), want PERMISSION_DENIED", out.Forbidden, out.ForbiddenIsErr)
	}
	if len(out.ForbiddenSelect) != 0 {
		t.Errorf("select:bank/issue_full_refund found %v, want nothing", out.ForbiddenSelect)
	}
	for i, list := range [][]string{out.Found, out.ChangedTools, out.FinalTools} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for _, name := range list {
				if strings.Contains(name, "refund") {
					t.Errorf("an unauthorized tool reached the client: %v", list)
				}
			}
		})
	}
	if f.refunds.Load() != 0 {
		t.Errorf("issue_full_refund executed %d times", f.refunds.Load())
	}
}

// runTSClient runs testdata/tsclient.mjs (the TypeScript SDK under
// modules) against url in scenario with env, and returns its stdout.
func runTSClient(t *testing.T, modules, url, scenario string, env ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "tsclient.mjs"), url, scenario)
	cmd.Env = append(append(os.Environ(), "NODE_MODULES="+modules), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, stderr.String())
	}
	return out
}

func TestHTTPRejectsMissingToken(t *testing.T) {
	f := newFixture(t)
	ts := f.serveHTTP(t)
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("initialize without a token: status %d, want 401", resp.StatusCode)
	}
}

// TestSessionBelongsToItsOwner checks that a session opened by one
// principal cannot be used with another principal's token.
func TestSessionBelongsToItsOwner(t *testing.T) {
	f := newFixture(t)
	ts := f.serveHTTP(t)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	token := &atomic.Value{}
	token.Store("teller-token")
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token.Load().(string))
		return http.DefaultTransport.RoundTrip(r)
	})}
	client := sdk.NewClient(&sdk.Implementation{Name: "go-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, &sdk.ClientSessionOptions{ProtocolVersion: sessionRevision})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	token.Store("admin-token") // the same session, another principal
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "refund a transaction"}})
	// The SDK's session-owner check answers 404 before any tool runs.
	if err == nil && !res.IsError {
		t.Fatalf("find_tools with another principal's token on the session succeeded: %v", res.Content)
	}
}

// TestStdio serves one session over in-memory transports as the configured
// principal (the stdio case) and finds tools through the Go SDK client.
func TestStdio(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs := serveStdio(t, ctx, f.reg, f.disc, f.gw, &mcpserver.Options{Principal: tokens["teller-token"], Logger: quiet})
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "refund the whole transaction"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if strings.Contains(text, "issue_full_refund") {
		t.Errorf("find_tools for a teller returned the refund tool: %s", text)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "bank/get_balance", "arguments": map[string]any{"account": "ACC-00002"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, `"balance":"1000.00"`) {
		t.Errorf("call_tool get_balance = %v", res.Content[0])
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
