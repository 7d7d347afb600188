package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/hostiletest"
	"github.com/toolgate/toolgate/internal/testenv"
)

// memoryServer returns the entry script of the reference MCP server
// server-memory, to run with node; without it t skips or fails as
// [testenv.NodeModule] says.
func memoryServer(t *testing.T) string {
	t.Helper()
	return filepath.Join(testenv.NodeModule(t, "@modelcontextprotocol/server-memory"), "dist", "index.js")
}

// githubCatalog returns the path of the transfer example's GitHub catalog
// (examples/transfer/catalog/github.json).
func githubCatalog(t *testing.T) string {
	t.Helper()
	return filepath.Join(testenv.RepoRoot(t), "examples", "transfer", "catalog", "github.json")
}

// TestMCPServeStdio runs "toolgate mcp serve" over pipes in front of the
// real MCP catalogs and a real upstream server (server-memory over stdio),
// and drives it with the Go SDK client.
func TestMCPServeStdio(t *testing.T) {
	memory := memoryServer(t)
	github := githubCatalog(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	srv := startStdioServe(ctx, "--tools", github, "--mcp", "memory=node "+memory,
		"--principal", "u1", "--tenant", "acme", "--data", t.TempDir())

	client := sdk.NewClient(&sdk.Implementation{Name: "go-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: srv.out, Writer: srv.in}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr %q)", err, srv.stderr.String())
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 2 {
		t.Errorf("the client sees %d tools, want find_tools and call_tool only", len(list.Tools))
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "remember a new entity in the knowledge graph"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, "memory/create_entities") {
		t.Errorf("find_tools = %s, want memory/create_entities among the tools", text)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{
		"name": "memory/create_entities", "arguments": map[string]any{"entities": []any{
			map[string]any{"name": "Ada", "entityType": "person", "observations": []string{"first programmer"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; res.IsError || !strings.Contains(text, `"success":true`) {
		t.Errorf("call_tool create_entities through the gateway = %s", text)
	}
	cs.Close()
	srv.close(ctx, t)
}

// stdioServe is "toolgate mcp serve" running in the test's process, its
// stdin and stdout on pipes.
type stdioServe struct {
	in     *io.PipeWriter // the server's stdin
	out    *io.PipeReader // the server's stdout
	stderr strings.Builder
	done   chan int // the exit code
}

// startStdioServe runs "toolgate mcp serve ARGS" until ctx ends or its
// stdin is closed.
func startStdioServe(ctx context.Context, args ...string) *stdioServe {
	s := &stdioServe{done: make(chan int, 1)}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s.in, s.out = inW, outR
	go func() {
		s.done <- run(ctx, append([]string{"mcp", "serve"}, args...), inR, outW, &s.stderr)
		outW.Close()
	}()
	return s
}

// close closes the server's stdin and checks that it then exits 0.
func (s *stdioServe) close(ctx context.Context, t *testing.T) {
	t.Helper()
	s.in.Close()
	select {
	case code := <-s.done:
		if code != exitOK {
			t.Errorf("mcp serve exited %d: %s", code, s.stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("mcp serve did not exit after its stdin closed")
	}
}

func TestMCPServeUsage(t *testing.T) {
	for i, args := range [][]string{
		{"mcp"},
		{"mcp", "serve"},
		{"mcp", "serve", "--tools", "x.json"},
		{"mcp", "serve", "--tools", "x.json", "--http", ":0"},
		{"mcp", "serve", "--tools", "x.json", "--http", ":0", "--tokens", "t.json", "--max-sessions", "0"},
		{"mcp", "serve", "--tools", "x.json", "--http", ":0", "--tokens", "t.json", "--max-sessions-per-principal", "-1"},
		{"mcp", "serve", "--tools", "x.json", "--http", ":0", "--tokens", "t.json", "--session-timeout", "0s"},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var stderr strings.Builder
			if code := run(t.Context(), args, strings.NewReader(""), io.Discard, &stderr); code != exitUsage || stderr.Len() == 0 {
				t.Errorf("toolgate %v = exit %d, stderr %q; want exit 2 with a reason", args, code, stderr.String())
			}
		})
	}
}

// TestLintMCPUpstream lints a real MCP server's tools, imported with --mcp.
func TestLintMCPUpstream(t *testing.T) {
	memory := memoryServer(t)
	code, stdout, stderr := runCmd("lint", "--mcp", "memory=node "+memory, "--skip", "near-duplicate")
	if code != exitNegative {
		t.Fatalf("lint --mcp = exit %d (stderr %q), want 1 with findings", code, stderr)
	}
	// An MCP server's tools cannot have aliases or not_for: one line says so.
	if strings.Contains(stdout, "memory/create_entities: missing-aliases") || !strings.Contains(stderr, "on 9 tools from MCP servers: ") {
		t.Errorf("lint --mcp lists the upstream's missing aliases, or does not group them:\n%s%s", stdout, stderr)
	}
	code, stdout, _ = runCmd("lint", "--all", "--mcp", "memory=node "+memory, "--skip", "near-duplicate")
	if code != exitNegative || !strings.Contains(stdout, "memory/create_entities: missing-aliases") {
		t.Errorf("lint --all --mcp = %d, findings lack the upstream's tools:\n%s", code, stdout)
	}
	code, _, _ = runCmd("lint", "--mcp", "broken=sh -c 'exit 3'")
	if code != exitUsage {
		t.Errorf("lint with a server that exits = %d, want 2", code)
	}
}

// TestDiscoverMCPUpstream discovers over a real MCP server's tools
// imported with --mcp beside a catalog file.
func TestDiscoverMCPUpstream(t *testing.T) {
	memory := memoryServer(t)
	github := githubCatalog(t)
	code, stdout, stderr := runCmd("discover", "--mcp", "memory=node "+memory, "--tools", github, "--k", "3", "--format", "json",
		"add an observation about an entity to the knowledge graph")
	if code != exitOK {
		t.Fatalf("discover --mcp = exit %d (stderr %q)", code, stderr)
	}
	var out struct {
		Candidates []struct{ Name string }
		Authorized int
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Authorized < 30 || len(out.Candidates) == 0 || out.Candidates[0].Name != "memory/add_observations" {
		t.Errorf("discover --mcp = %+v, want memory/add_observations first over the memory and github tools", out)
	}
}

// TestServersNamedTwice: two upstream servers under one name (two
// commands both named after a package server-chart, or a name given twice) are refused
// before either starts: the second's listing would replace the first's
// tools in the namespace, so a whole server vanished without a word.
func TestServersNamedTwice(t *testing.T) {
	config := writeFile(t, "servers.json", `{"servers": {"web": {"url": "http://127.0.0.1:1/mcp"}}}`)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"derived", []string{"--mcp", "/nonexistent/a/server-chart/build/index.js", "--mcp", "npx -y @b/server-chart"}, `"server-chart"`},
		{"given", []string{"--mcp", "a=/nonexistent/chart.js", "--mcp-url", "a=http://127.0.0.1:1/mcp"}, `"a"`},
		{"flag and config", []string{"--mcp", "web=/nonexistent/web.js", "--mcp-config", config}, `"web"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCmd(append([]string{"discover"}, append(tc.args, "draw a chart")...)...)
			want := "toolgate discover: mcp: invalid server configuration: two upstream servers are named " + tc.want
			if code != exitUsage || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("discover %q = %d, stderr %q; want 2 and one line starting %q", tc.args, code, stderr, want)
			}
		})
	}
}

// TestUnknownOverrideWarned: an --mcp-config override for a tool the
// server does not list (here "erase_notes" for erase_note) is named in a
// warning line, so an irreversible flag or a scope that applies to nothing
// is not lost silently; the overrides of listed tools say nothing.
func TestUnknownOverrideWarned(t *testing.T) {
	config := writeFile(t, "servers.json", `{"servers": {"notes": {"url": "`+hostiletest.MCPServer(t)+`",
		"tools": {"erase_notes": {"irreversible": true}, "read_note": {"scopes": ["notes:read"]}}}}}`)
	code, _, stderr := runCmd("discover", "--mcp-config", config, "read a note")
	want := `toolgate discover: warning: mcp: notes: the override of "erase_notes" names no tool the server lists, so it applies to nothing` + "\n"
	if code != exitOK || stderr != want {
		t.Errorf("discover with an override of an unlisted tool = %d, stderr %q; want 0 and %q", code, stderr, want)
	}
}

// TestFileToolsReplacedWarned: a catalog file's tools in the namespace an
// upstream server is named for are replaced by its listing (they run once
// their server is connected); those it does not list are named in a
// warning line rather than gone without a word. A file of another
// namespace says nothing.
func TestFileToolsReplacedWarned(t *testing.T) {
	url := hostiletest.MCPServer(t)
	notes := writeFile(t, "notes.jsonl", `{"name":"read_note","description":"Read a note."}
{"name":"archive_note","description":"Archive a note."}
{"name":"pin_note","description":"Pin a note."}
`)
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"same namespace", "notes=" + notes, `toolgate discover: warning: mcp: notes: the server's listing replaced the catalog files' tools of its namespace, and does not list 2 of them: "notes/archive_note", "notes/pin_note"` + "\n"},
		{"another namespace", "other=" + notes, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCmd("discover", "--tools", tc.spec, "--mcp-url", "notes="+url, "read a note")
			if code != exitOK || stderr != tc.want {
				t.Errorf("discover --tools %s = %d, stderr %q; want 0 and %q", tc.spec, code, stderr, tc.want)
			}
		})
	}
}

// TestMCPServeStdioSurvivesBadFrames: "toolgate mcp serve" in front of a
// real upstream (server-memory) answers malformed frames with JSON-RPC
// errors, and the server and its upstream keep running: a call through to
// the upstream works after them.
func TestMCPServeStdioSurvivesBadFrames(t *testing.T) {
	memory := memoryServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	srv := startStdioServe(ctx, "--mcp", "memory=node "+memory, "--principal", "u1", "--tenant", "acme")
	replies := bufio.NewReader(srv.out)
	exchange := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(srv.in, line+"\n"); err != nil {
			t.Fatalf("write: %v (stderr %q)", err, srv.stderr.String())
		}
		reply, err := replies.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v (stderr %q)", err, srv.stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(reply), &m); err != nil {
			t.Fatalf("reply %q is not JSON", reply)
		}
		return m
	}
	if r := exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); r["result"] == nil {
		t.Fatalf("initialize = %v", r)
	}
	if _, err := io.WriteString(srv.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`null`, `[]`, `{oops`, `{"jsonrpc":"1.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}`} {
		t.Run(bad, func(t *testing.T) {
			r := exchange(bad)
			if e, _ := r["error"].(map[string]any); e == nil || (e["code"] != -32600.0 && e["code"] != -32700.0) {
				t.Errorf("frame %s = %v, want a -32600 or -32700 error", bad, r)
			}
		})
	}
	r := exchange(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"memory/read_graph","arguments":{}}}}`)
	res, _ := r["result"].(map[string]any)
	if res == nil || res["isError"] == true || !strings.Contains(fmt.Sprint(res["content"]), `"success":true`) {
		t.Errorf("call through to the upstream after the bad frames = %v", r)
	}
	srv.close(ctx, t)
}

// addrWriter is mcp serve's stderr: it passes on the first address the
// server announces.
type addrWriter struct {
	addr chan string // buffered: receives the address once

	mu   sync.Mutex
	buf  strings.Builder
	sent bool
}

func (w *addrWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if m := regexp.MustCompile(`on (http://\S+)`).FindStringSubmatch(w.buf.String()); m != nil && !w.sent {
		w.addr <- m[1]
		w.sent = true
	}
	return len(b), nil
}

func (w *addrWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// mcpServeHTTP runs `toolgate mcp serve --http 127.0.0.1:0 args...` in
// this process under ctx and returns the URL it announces and its
// stderr. The server is stopped, and waited for, when the test ends.
func mcpServeHTTP(t *testing.T, ctx context.Context, args ...string) (string, *addrWriter) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	stderr := &addrWriter{addr: make(chan string, 1)}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"mcp", "serve", "--http", "127.0.0.1:0"}, args...), strings.NewReader(""), io.Discard, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case url := <-stderr.addr:
		return url, stderr
	case code := <-done:
		done <- code // for the cleanup
		t.Fatalf("mcp serve exited %d: %s", code, stderr)
	}
	return "", nil
}

// TestMCPServeSessionFlags: --max-sessions-per-principal and
// --session-timeout reach the Streamable HTTP server: a principal's
// session beyond the cap is answered 429 with a Retry-After within the
// timeout.
func TestMCPServeSessionFlags(t *testing.T) {
	github := githubCatalog(t)
	tokens := aliceTokens(t, t.TempDir(), "tok-alice")
	ctx := t.Context()
	url, _ := mcpServeHTTP(t, ctx, "--tools", github, "--tokens", tokens, "--max-sessions-per-principal", "2", "--session-timeout", "90s")
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			resp, body := postInitialize(t, url, "Bearer tok-alice")
			if resp.StatusCode != want {
				t.Fatalf("initialize %d = %d %q, want %d", i+1, resp.StatusCode, body, want)
			}
			if want == http.StatusTooManyRequests {
				if wait, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || wait < 1 || wait > 90 {
					t.Errorf("Retry-After %q, want 1 to 90 seconds (--session-timeout 90s)", resp.Header.Get("Retry-After"))
				}
			}
		})
	}
}

// TestMCPServeAuthorizationOnce: mcp serve --http refuses a request with
// the Authorization header more than once (401), as serve does
// (server.BearerToken), even when the first holds a valid token.
func TestMCPServeAuthorizationOnce(t *testing.T) {
	tokens := aliceTokens(t, t.TempDir(), "tok-alice")
	ctx := t.Context()
	url, _ := mcpServeHTTP(t, ctx, "--tools", githubCatalog(t), "--tokens", tokens)
	cases := []struct {
		name   string
		fields []string
		want   int
	}{
		{"once", []string{"Bearer tok-alice"}, http.StatusOK},
		{"twice", []string{"Bearer tok-alice", "Bearer tok-nobody"}, http.StatusUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := postInitialize(t, url, tc.fields...)
			if resp.StatusCode != tc.want {
				t.Errorf("initialize with Authorization %q = %d %q, want %d", tc.fields, resp.StatusCode, body, tc.want)
			}
		})
	}
}

// postInitialize POSTs an initialize request to url with the given
// Authorization header fields and returns the response and its body.
func postInitialize(t *testing.T, url string, authorization ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header["Authorization"] = authorization
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, body
}
