package mcp_test

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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func nodeServer(t *testing.T, pkg string, args ...string) []string {
	dir := testenv.NodeModule(t, pkg)
	return append([]string{"node", filepath.Join(dir, "dist", "index.js")}, args...)
}

// connect connects cfg's tools into reg, logging nowhere, and closes the
// upstream when the test ends.
func connect(t *testing.T, ctx context.Context, reg *tools.Registry, cfg mcp.Server) *mcp.Upstream {
	t.Helper()
	up, err := mcp.Connect(ctx, reg, cfg, &mcp.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	return up
}

func call(t *testing.T, ctx context.Context, reg *tools.Registry, id string, args any) (json.RawMessage, error) {
	t.Helper()
	i, ok := reg.Snapshot().Lookup(id)
	if !ok {
		t.Fatalf("tool %s is not registered", id)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return reg.Snapshot().Tool(i).Handler(ctx, raw)
}

func TestImportMemoryServer(t *testing.T) {
	ctx := testContext(t)
	reg := tools.NewRegistry()
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	up, err := mcp.Connect(ctx, reg, mcp.Server{
		Name:    "memory",
		Command: nodeServer(t, "@modelcontextprotocol/server-memory"),
		Env:     map[string]string{"MEMORY_FILE_PATH": memFile},
		Scopes:  []string{"memory:write"},
	}, &mcp.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()

	snap := reg.Snapshot()
	if snap.Len() < 5 {
		t.Fatalf("registered %d tools from server-memory, want at least 5", snap.Len())
	}
	for _, tl := range snap.Tools() {
		if tl.Namespace() != "memory" {
			t.Errorf("tool %s not in namespace memory", tl.ID)
		}
		if !slices.Contains(tl.Card.Scopes, "memory:write") {
			t.Errorf("tool %s scopes = %v, want the server's memory:write", tl.ID, tl.Card.Scopes)
		}
		if tl.Card.Summary == "" || tl.InputSchema == nil || tl.Handler == nil {
			t.Errorf("tool %s: summary %q, schema %s, handler set %v", tl.ID, tl.Card.Summary, tl.InputSchema, tl.Handler != nil)
		}
	}
	if i, ok := snap.Lookup("memory/read_graph"); !ok || !snap.Tool(i).Card.ReadOnly {
		t.Errorf("memory/read_graph: found %v; want it marked read-only from readOnlyHint", ok)
	}

	_, err = call(t, ctx, reg, "memory/create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "Ada", "entityType": "person", "observations": []string{"wrote the first program"}},
	}})
	if err != nil {
		t.Fatalf("create_entities: %v", err)
	}
	got, err := call(t, ctx, reg, "memory/read_graph", map[string]any{})
	if err != nil {
		t.Fatalf("read_graph: %v", err)
	}
	if !strings.Contains(string(got), "wrote the first program") {
		t.Errorf("read_graph = %s, want the entity just created", got)
	}
	if st := up.Status(); !st.Connected || st.Tools != snap.Len() {
		t.Errorf("Status = %+v, want connected with %d tools", st, snap.Len())
	}

	if err := up.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := reg.Snapshot().Len(); n != 0 {
		t.Errorf("after Close the registry holds %d tools, want 0", n)
	}
}

func TestImportFilesystemServer(t *testing.T) {
	ctx := testContext(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "note.txt"), []byte("the ledger balances"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	up, err := mcp.Connect(ctx, reg, mcp.Server{
		Name:    "fs",
		Command: nodeServer(t, "@modelcontextprotocol/server-filesystem", root),
	}, &mcp.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()

	got, err := call(t, ctx, reg, "fs/read_text_file", map[string]any{"path": filepath.Join(root, "note.txt")})
	if err != nil {
		t.Fatalf("read_text_file: %v", err)
	}
	if !strings.Contains(string(got), "the ledger balances") {
		t.Errorf("read_text_file = %s, want the file's text", got)
	}

	// Outside the allowed root the tool runs and reports an error: a tool
	// error, which the gateway records as a domain error.
	_, err = call(t, ctx, reg, "fs/read_text_file", map[string]any{"path": "/etc/passwd"})
	var de *tools.DomainError
	if !errors.As(err, &de) || de.Code != "TOOL_ERROR" {
		t.Errorf("read outside the root: err = %v, want a *tools.DomainError TOOL_ERROR", err)
	}

	// A call the server rejects at the protocol level ran nothing.
	_, err = call(t, ctx, reg, "fs/read_text_file", map[string]any{"path": 42})
	if err == nil {
		t.Fatal("read_text_file with a numeric path succeeded")
	}
	if !errors.As(err, &de) && !tools.IsNoEffect(err) {
		t.Errorf("invalid params: err = %v (%T), want a tool error or a no-effect protocol error", err, err)
	}
}

// sdkServer serves a Go SDK MCP server over Streamable HTTP, for the
// protocol features the npm servers do not exercise on demand: pagination
// and tools/list_changed.
func sdkServer(t *testing.T, pageSize int, names ...string) (*sdk.Server, string) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ServerOptions{PageSize: pageSize})
	for _, n := range names {
		addEcho(srv, n)
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return srv, ts.URL
}

func addEcho(srv *sdk.Server, name string) {
	srv.AddTool(&sdk.Tool{
		Name:        name,
		Description: "Echo the text back. Used by tests.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args struct{ Text string }
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		key, _ := req.Params.Meta[mcp.MetaIdempotencyKey].(string)
		return &sdk.CallToolResult{StructuredContent: map[string]string{"tool": name, "text": args.Text, "key": key}}, nil
	})
}

func TestStreamableHTTPPaginationAndListChanged(t *testing.T) {
	ctx := testContext(t)
	srv, url := sdkServer(t, 2, "echo_a", "echo_b", "echo_c", "echo_d", "echo_e")
	reg := tools.NewRegistry()
	changed := make(chan struct{}, 16)
	reg.Subscribe(changed)
	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "web", URL: url}, &mcp.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	if n := reg.Snapshot().Len(); n != 5 {
		t.Fatalf("registered %d tools over 3 pages of 2, want 5", n)
	}

	got, err := call(t, ctx, reg, "web/echo_c", map[string]any{"text": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"key":"","text":"hi","tool":"echo_c"}` {
		t.Errorf("echo_c = %s", got)
	}
	keyed := tools.WithIdempotencyKey(ctx, "k-123")
	i, _ := reg.Snapshot().Lookup("web/echo_a")
	got, err = reg.Snapshot().Tool(i).Handler(keyed, json.RawMessage(`{"text":"x"}`))
	if err != nil || !strings.Contains(string(got), `"key":"k-123"`) {
		t.Errorf("echo_a with a key = %s, %v; want the key passed in _meta", got, err)
	}

	addEcho(srv, "echo_new")
	srv.RemoveTools("echo_a")
	for {
		snap := reg.Snapshot()
		_, hasNew := snap.Lookup("web/echo_new")
		_, hasOld := snap.Lookup("web/echo_a")
		if hasNew && !hasOld {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("list_changed not applied: new %v, removed %v", hasNew, !hasOld)
		}
	}
}

// TestMaxTools: a server listing more tools than Options.MaxTools (over
// several pages) is refused, and nothing of it is registered.
func TestMaxTools(t *testing.T) {
	ctx := testContext(t)
	_, url := sdkServer(t, 2, "echo_a", "echo_b", "echo_c", "echo_d", "echo_e")
	reg := tools.NewRegistry()
	_, err := mcp.Connect(ctx, reg, mcp.Server{Name: "web", URL: url}, &mcp.Options{Logger: quiet, MaxTools: 3})
	if err == nil || !strings.Contains(err.Error(), "more than 3 tools") {
		t.Errorf("Connect to a server of 5 tools with MaxTools 3: error %v, want \"more than 3 tools\"", err)
	}
	if n := reg.Snapshot().Len(); n != 0 {
		t.Errorf("a refused server registered %d tools", n)
	}
	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "web", URL: url}, &mcp.Options{Logger: quiet, MaxTools: 5})
	if err != nil {
		t.Fatalf("Connect with MaxTools 5 = %v", err)
	}
	defer up.Close()
	if n := reg.Snapshot().Len(); n != 5 {
		t.Errorf("MaxTools 5: registered %d tools, want 5", n)
	}
}

func TestConnectFailsForBrokenServer(t *testing.T) {
	ctx := testContext(t)
	reg := tools.NewRegistry()
	_, err := mcp.Connect(ctx, reg, mcp.Server{Name: "nope", Command: []string{"sh", "-c", "exit 3"}}, &mcp.Options{Logger: quiet})
	if err == nil {
		t.Fatal("Connect to a server that exits succeeded")
	}
	if reg.Snapshot().Len() != 0 {
		t.Errorf("a failed connection registered %d tools", reg.Snapshot().Len())
	}
}

// TestConnectErrorQuotesStderr: a stdio server that exits before it
// answers (dbhub without a DSN, say) usually says why on stderr; the
// connection error quotes what it wrote, escaped (no terminal control
// passes) and cut to its start and end, instead of only "EOF".
func TestConnectErrorQuotesStderr(t *testing.T) {
	ctx := testContext(t)
	long := strings.Repeat("x", 600)
	for _, tc := range []struct{ name, script, want string }{
		{"reason", `echo "ERROR: Database connection configuration is required." >&2; echo "  Use --dsn" >&2; exit 1`,
			`; the server wrote on stderr: "ERROR: Database connection configuration is required. Use --dsn"`},
		{"control characters", `printf '\033]0;owned\007\033[31mbad\n' >&2; exit 1`,
			`; the server wrote on stderr: "\x1b]0;owned\a\x1b[31mbad"`},
		{"long", `echo "start ` + long + ` end" >&2; exit 1`,
			`; the server wrote on stderr: "start ` + long[:194] + ` ... ` + long[:196] + ` end"`},
		{"silent", `exit 3`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mcp.Connect(ctx, tools.NewRegistry(), mcp.Server{Name: "db", Command: []string{"sh", "-c", tc.script}}, &mcp.Options{Logger: quiet})
			if err == nil {
				t.Fatal("Connect to a server that exits succeeded")
			}
			_, got, _ := strings.Cut(err.Error(), "; the server wrote")
			if got != "" {
				got = "; the server wrote" + got
			}
			if got != tc.want {
				t.Errorf("Connect error = %q, want it to end %q", err, tc.want)
			}
		})
	}
}

// recordedServer connects to server-memory started through a shell that
// records the server's pid, with fast keep-alive and backoff, and returns
// the upstream, the registry, its change channel and the pid.
func recordedServer(t *testing.T, ctx context.Context) (*mcp.Upstream, *tools.Registry, chan struct{}, int) {
	t.Helper()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	server := nodeServer(t, "@modelcontextprotocol/server-memory")
	// The shell records the server's pid, then becomes the server.
	script := fmt.Sprintf("echo $$ >> %s; exec %s", pidFile, strings.Join(server, " "))
	reg := tools.NewRegistry()
	changed := make(chan struct{}, 16)
	reg.Subscribe(changed)
	up, err := mcp.Connect(ctx, reg, mcp.Server{
		Name:    "memory",
		Command: []string{"sh", "-c", script},
		Env:     map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")},
	}, &mcp.Options{Logger: quiet, KeepAlive: 200 * time.Millisecond, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	if reg.Snapshot().Len() == 0 {
		t.Fatal("no tools registered")
	}
	pidText, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return up, reg, changed, pid
}

// awaitDropAndReturn waits until the upstream has reconnected, checking
// at each change of the catalog that it held want tools throughout (they
// stay known while the server is reconnected).
func awaitDropAndReturn(t *testing.T, ctx context.Context, up *mcp.Upstream, reg *tools.Registry, changed chan struct{}, want int) {
	t.Helper()
	for st := up.Status(); !st.Connected || st.Reconnects < 1; st = up.Status() {
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("waiting for reconnection: now %d tools, status %+v", reg.Snapshot().Len(), up.Status())
		}
		if n := reg.Snapshot().Len(); n != want {
			t.Fatalf("the catalog holds %d tools while the server is reconnected, want its %d", n, want)
		}
	}
	if st := up.Status(); !st.Connected || st.Reconnects < 1 || st.LastError == nil {
		t.Errorf("Status after reconnection = %+v, want connected, ≥1 reconnect, the loss recorded", st)
	}
	if _, err := call(t, ctx, reg, "memory/read_graph", map[string]any{}); err != nil {
		t.Errorf("read_graph after reconnection: %v", err)
	}
}

// loseServer sends a recorded server sig and checks that its tools stay
// in the catalog until a fresh server lists them (awaitDropAndReturn).
func loseServer(t *testing.T, sig syscall.Signal) {
	ctx := testContext(t)
	up, reg, changed, pid := recordedServer(t, ctx)
	want := reg.Snapshot().Len()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatal(err)
	}
	awaitDropAndReturn(t, ctx, up, reg, changed, want)
}

func TestKilledServerReconnects(t *testing.T) { loseServer(t, syscall.SIGKILL) }

// TestHungServerReconnects freezes the server (SIGSTOP): the keep-alive
// pings fail, the session is closed, the server's tools stay known, and a
// fresh server is started and registered.
func TestHungServerReconnects(t *testing.T) { loseServer(t, syscall.SIGSTOP) }

// TestRiskNeverWeakens: within one running Upstream, a listing (a
// list_changed, a reconnection) cannot weaken the risk a tool was
// registered with — the rug pull that pins catch, caught without pins:
// dropping the annotations (no hints: reversible) from an irreversible
// tool, adding readOnlyHint or idempotentHint, dropping openWorldHint. The
// stronger flags are kept, reported in Status.Weakened and logged; a
// strengthening is taken; an operator's override still decides.
func TestRiskNeverWeakens(t *testing.T) {
	yes, no := true, false
	type flags struct{ irreversible, readOnly, idempotent, openWorld bool }
	for _, tc := range []struct {
		name     string
		listings []*sdk.ToolAnnotations // the server's, in order; nil: none
		override *mcp.ToolOverride
		want     flags
		kept     []string
	}{
		{name: "annotations dropped from an irreversible tool",
			listings: []*sdk.ToolAnnotations{{DestructiveHint: &yes}, nil},
			want:     flags{irreversible: true}, kept: []string{"irreversible"}},
		{name: "destructiveHint dropped (MCP's default: destructive)",
			listings: []*sdk.ToolAnnotations{{DestructiveHint: &yes}, {DestructiveHint: &no}},
			want:     flags{irreversible: true}, kept: []string{"irreversible"}},
		{name: "readOnlyHint added",
			listings: []*sdk.ToolAnnotations{{DestructiveHint: &no}, {ReadOnlyHint: true}},
			want:     flags{}, kept: []string{"not read-only"}},
		{name: "readOnlyHint added to an irreversible tool",
			listings: []*sdk.ToolAnnotations{{}, {ReadOnlyHint: true}},
			want:     flags{irreversible: true}, kept: []string{"irreversible", "not read-only"}},
		{name: "idempotentHint added, openWorldHint dropped",
			listings: []*sdk.ToolAnnotations{{DestructiveHint: &no, OpenWorldHint: &yes}, {DestructiveHint: &no, IdempotentHint: true}},
			want:     flags{openWorld: true}, kept: []string{"not idempotent", "open world"}},
		{name: "strengthened, then weakened back",
			listings: []*sdk.ToolAnnotations{{ReadOnlyHint: true}, {DestructiveHint: &yes}, {ReadOnlyHint: true}},
			want:     flags{irreversible: true}, kept: []string{"irreversible", "not read-only"}},
		{name: "strengthened only",
			listings: []*sdk.ToolAnnotations{{ReadOnlyHint: true}, nil},
			want:     flags{}, kept: nil},
		{name: "the operator's override decides",
			listings: []*sdk.ToolAnnotations{{DestructiveHint: &yes}, {ReadOnlyHint: true}},
			override: &mcp.ToolOverride{Irreversible: &no, ReadOnly: &yes},
			want:     flags{readOnly: true}, kept: []string{"irreversible", "not read-only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
			list := func(a *sdk.ToolAnnotations) {
				srv.AddTool(&sdk.Tool{Name: "wipe", Description: "Wipe the disk. Used by tests.",
					InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: a},
					func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
						return &sdk.CallToolResult{}, nil
					})
			}
			list(tc.listings[0])
			ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
			t.Cleanup(ts.Close)
			cfg := mcp.Server{Name: "disk", URL: ts.URL}
			if tc.override != nil {
				cfg.Tools = map[string]mcp.ToolOverride{"wipe": *tc.override}
			}
			var logs bytes.Buffer
			reg := tools.NewRegistry()
			up, err := mcp.Connect(ctx, reg, cfg, &mcp.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer up.Close()
			for _, a := range tc.listings[1:] {
				list(a)
				if err := up.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
			}
			i, ok := reg.Snapshot().Lookup("disk/wipe")
			if !ok {
				t.Fatal("disk/wipe is not registered")
			}
			c := reg.Snapshot().Tool(i).Card
			if got := (flags{c.Irreversible, c.ReadOnly, c.Idempotent, c.OpenWorld}); got != tc.want {
				t.Errorf("card after %d listings = %+v, want %+v", len(tc.listings), got, tc.want)
			}
			var kept []string
			if w := up.Status().Weakened; len(w) > 0 {
				if len(w) != 1 || w[0].Tool != "wipe" {
					t.Fatalf("Status().Weakened = %+v, want one for wipe", w)
				}
				kept = w[0].Kept
			}
			if !slices.Equal(kept, tc.kept) {
				t.Errorf("Status().Weakened kept %q, want %q", kept, tc.kept)
			}
			if logged := strings.Contains(logs.String(), "weakens a tool's risk"); logged != (len(tc.kept) > 0) ||
				(logged && !strings.Contains(logs.String(), "server=disk tool=wipe")) {
				t.Errorf("the log says weakened = %v, want %v naming disk and wipe:\n%s", logged, len(tc.kept) > 0, logs.String())
			}
		})
	}
}

// TestRiskNeverWeakensAfterNameChurn pins that the bound on the risk floors
// an Upstream keeps (a server inventing new names at every listing) gives
// no way around them: a server that lists an irreversible tool, then
// listings of enough other names for its floor to be forgotten, then the
// tool again as read-only, still has it registered irreversible.
func TestRiskNeverWeakensAfterNameChurn(t *testing.T) {
	ctx := testContext(t)
	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	noop := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{}, nil
	}
	// listing makes the server list names, read-only, and wipe with
	// wipeHints when it is one of them.
	yes := true
	wipeHints := &sdk.ToolAnnotations{DestructiveHint: &yes}
	listing := func(names ...string) {
		srv.RemoveTools("wipe", "a", "b", "c", "d", "e", "f")
		for _, n := range names {
			a := &sdk.ToolAnnotations{ReadOnlyHint: true}
			if n == "wipe" {
				a = wipeHints
			}
			srv.AddTool(&sdk.Tool{Name: n, Description: "A tool used by tests.",
				InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: a}, noop)
		}
	}
	listing("wipe", "a") // wipe is irreversible
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	reg := tools.NewRegistry()
	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "disk", URL: ts.URL}, &mcp.Options{Logger: quiet, MaxTools: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	// New names until more than twice MaxTools have been seen, then wipe
	// again, now claiming to be read-only.
	relist := func(names ...string) {
		t.Helper()
		listing(names...)
		if err := up.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	relist("b", "c")
	relist("d", "e")
	relist("f")
	wipeHints = &sdk.ToolAnnotations{ReadOnlyHint: true}
	relist("wipe")
	i, ok := reg.Snapshot().Lookup("disk/wipe")
	if !ok {
		t.Fatal("disk/wipe is not registered")
	}
	if c := reg.Snapshot().Tool(i).Card; !c.Irreversible || c.ReadOnly {
		t.Errorf("disk/wipe after the churn: irreversible %v, read-only %v; want irreversible, not read-only", c.Irreversible, c.ReadOnly)
	}
	if w := up.Status().Weakened; len(w) != 1 || w[0].Tool != "wipe" {
		t.Errorf("Status().Weakened = %+v, want wipe", w)
	}
}
