package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
	tok "github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/internal/runtimetest"
	"github.com/toolgate/toolgate/runtime/mcpserver"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
	"github.com/toolgate/toolgate/tools/mcp"
)

// proxy puts toolgate's MCP server in front of an upstream and returns a
// client session to it (in-memory transport, as the stdio case) and the
// upstream tool's ID.
func proxy(b *testing.B, ctx context.Context, upstream mcp.Server) *sdk.ClientSession {
	reg := tools.NewRegistry()
	up, err := mcp.Connect(ctx, reg, upstream, &mcp.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { up.Close() })
	gw, disc := runtimetest.Stack(b, reg, &gateway.Options{Logger: quiet})
	return serveStdio(b, ctx, reg, disc, gw, &mcpserver.Options{Principal: tools.Principal{ID: "bench", Tenant: "t"}, Logger: quiet})
}

func benchCalls(b *testing.B, ctx context.Context, cs *sdk.ClientSession, name string, args any) {
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("call %s: %v %v", name, err, res)
		}
	}
}

// BenchmarkProxyStdio compares a call of server-memory's read_graph made
// directly over stdio with the same call through toolgate (find nothing,
// call_tool → gateway → upstream over stdio). Each proxied call takes a new
// step, so it executes (no replay).
func BenchmarkProxyStdio(b *testing.B) {
	server := []string{"node", filepath.Join(testenv.NodeModule(b, "@modelcontextprotocol/server-memory"), "dist", "index.js")}
	ctx := b.Context()
	b.Run("direct", func(b *testing.B) {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: command(b, server)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		benchCalls(b, ctx, cs, "read_graph", map[string]any{})
	})
	b.Run("toolgate", func(b *testing.B) {
		cs := proxy(b, ctx, mcp.Server{Name: "memory", Command: server, Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(b.TempDir(), "m.jsonl")}})
		benchCalls(b, ctx, cs, "call_tool", map[string]any{"name": "memory/read_graph", "arguments": map[string]any{}})
	})
}

// BenchmarkProxyHTTP compares a call to a Go SDK server over Streamable
// HTTP made directly with the same call through toolgate.
func BenchmarkProxyHTTP(b *testing.B) {
	ctx := b.Context()
	srv := sdk.NewServer(&sdk.Implementation{Name: "echo", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "echo", Description: "Echo the text.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	args := map[string]any{"text": "hello"}
	b.Run("direct", func(b *testing.B) {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		benchCalls(b, ctx, cs, "echo", args)
	})
	b.Run("toolgate", func(b *testing.B) {
		cs := proxy(b, ctx, mcp.Server{Name: "web", URL: ts.URL})
		benchCalls(b, ctx, cs, "call_tool", map[string]any{"name": "web/echo", "arguments": args})
	})
}

// TestClientTokens reports the tokens an MCP client's model is shown: the
// tools/list of the 8 real servers connected directly, against toolgate's
// two tools plus one find_tools answer. It asserts the direction, and logs
// the numbers recorded in docs/benchmarks.md (go test -run TestClientTokens -v).
func TestClientTokens(t *testing.T) {
	catalogs := testenv.Catalogs(t)
	if len(catalogs) != 8 {
		t.Fatalf("want the 8 real catalogs, got %d", len(catalogs))
	}
	ts, err := catalog.LoadAll(catalogs...)
	if err != nil {
		t.Fatal(err)
	}
	// What a client receives from each server's tools/list, as served.
	direct := 0
	for _, c := range catalogs {
		raw, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		direct += tok.MustCount(string(raw))
	}
	f := newFixture(t)
	cs := serveStdio(t, t.Context(), f.reg, f.disc, f.gw, &mcpserver.Options{Principal: adminPrincipal, Logger: quiet})
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed, _ := json.Marshal(list.Tools)
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "open an issue in a github repository"}})
	if err != nil {
		t.Fatal(err)
	}
	found := res.Content[0].(*sdk.TextContent).Text
	withToolgate := tok.MustCount(string(listed)) + tok.MustCount(found)
	t.Logf("tokens of tool definitions a client sees: the tools/list of all 8 servers directly %d (%d tools); toolgate's 2 tools %d + one find_tools answer %d = %d",
		direct, len(ts), tok.MustCount(string(listed)), tok.MustCount(found), withToolgate)
	if withToolgate*10 > direct {
		t.Errorf("toolgate shows %d tokens, not a tenth of the %d of connecting every server", withToolgate, direct)
	}
}

var adminPrincipal = tools.Principal{ID: "admin", Tenant: "acme", Scopes: []string{"accounts:read", "billing:admin"}}

func command(b *testing.B, argv []string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+filepath.Join(b.TempDir(), "direct.jsonl"))
	return cmd
}

// BenchmarkHTTPSessionMemory measures what an open Streamable HTTP session
// costs the server, over a real listener: b.N sessions are opened
// (initialize, notifications/initialized; "after_find_tools" also calls
// find_tools once, which adds found tools to the session's list) and kept
// open, with the caps raised above b.N. It reports the growth of the live
// heap and of goroutine stacks per session. Run with a fixed count:
//
//	go test ./runtime/mcpserver -run '^$' -bench HTTPSessionMemory -benchtime 1000x
func BenchmarkHTTPSessionMemory(b *testing.B) {
	for _, find := range []bool{false, true} {
		name := "initialized"
		if find {
			name = "after_find_tools"
		}
		b.Run(name, func(b *testing.B) {
			f := newFixture(b)
			_, ts := f.serveWith(b, mcpserver.Options{MaxSessions: b.N + 1, MaxSessionsPerPrincipal: b.N + 1})
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			b.Cleanup(hc.CloseIdleConnections)
			post := func(session, body string) *http.Response {
				req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer teller-token")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Content-Type", "application/json")
				if session != "" {
					req.Header.Set("Mcp-Session-Id", session)
					req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
				}
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode/100 != 2 {
					b.Fatalf("POST %.60s: status %d", body, resp.StatusCode)
				}
				return resp
			}
			heap0, stacks0 := liveMemory()
			b.ResetTimer()
			for i := range b.N {
				id := post("", initializeBody(i)).Header.Get("Mcp-Session-Id")
				post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				if find {
					post(id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"check the balance of my account"}}}`)
				}
			}
			b.StopTimer()
			heap1, stacks1 := liveMemory()
			n := float64(b.N)
			b.ReportMetric(float64(heap1-heap0+stacks1-stacks0)/n, "B/session")
			b.ReportMetric(float64(heap1-heap0)/n, "heap-B/session")
			b.ReportMetric(float64(stacks1-stacks0)/n, "stack-B/session")
		})
	}
}
