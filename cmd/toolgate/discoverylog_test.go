package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
)

// serveInProcess runs `toolgate serve args...` in this process on a free
// port and returns its base URL, a stop function that cancels it and
// returns its exit code, and what it wrote on stderr so far.
func serveInProcess(t *testing.T, args ...string) (base string, stop func() int, stderr *testenv.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	stderr = &testenv.Buffer{}
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), strings.NewReader(""), pw, stderr)
		pw.Close()
	}()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		io.Copy(io.Discard, pr)
	}()
	stopped := false
	stop = func() int {
		t.Helper()
		if stopped {
			return 0
		}
		stopped = true
		cancel()
		select {
		case c := <-code:
			return c
		case <-time.After(time.Minute):
			t.Fatal("serve did not stop when its context ended")
			return -1
		}
	}
	t.Cleanup(func() { stop() })
	select {
	case l := <-line:
		rest, ok := strings.CutPrefix(l, "listening on ")
		if !ok {
			t.Fatalf("serve did not start: %q\nstderr: %s", l, stderr.String())
		}
		base, _, _ = strings.Cut(rest, " ")
	case c := <-code:
		stopped = true
		t.Fatalf("serve exited %d before listening; stderr: %s", c, stderr.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("serve did not say it listens; stderr: %s", stderr.String())
	}
	return base, stop, stderr
}

// TestServeDiscoveryLog is the learning loop from a running server:
// `toolgate serve --discovery-log` over a real MCP server (server-memory)
// logs a /v1/discover with a session_id and the /v1/tools/call that follows
// of a tool the shortlist lacked; /metrics counts the query and the miss;
// and `toolgate log misses` finds the miss in the file once serve stopped.
func TestServeDiscoveryLog(t *testing.T) {
	memory := memoryServer(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "discovery.jsonl")
	base, stop, _ := serveInProcess(t, "--tokens", aliceTokens(t, dir, "tok-alice"), "--data", filepath.Join(dir, "data"),
		"--mcp", "memory=env MEMORY_FILE_PATH="+filepath.Join(dir, "memory.jsonl")+" node "+memory,
		"--discovery-log", logPath)
	p := &serveProcess{url: base}

	const query = "delete an observation about an entity"
	code, body := p.post(t, "tok-alice", "/v1/discover", `{"query":"`+query+`","k":1,"session_id":"s1"}`)
	if code != 200 {
		t.Fatalf("discover = %d %v", code, body)
	}
	var shortlist []string
	for _, c := range body["candidates"].([]any) {
		shortlist = append(shortlist, c.(map[string]any)["name"].(string))
	}
	const called = "memory/read_graph"
	if len(shortlist) != 1 || slices.Contains(shortlist, called) {
		t.Fatalf("discover %q = %v, want one tool, not %s", query, shortlist, called)
	}
	if code, res := p.post(t, "tok-alice", "/v1/tools/call", `{"session_id":"s1","step":1,"tool":"`+called+`","arguments":{}}`); code != 200 {
		t.Fatalf("call %s = %d %v", called, code, res)
	}
	// Another session's call is not linked to s1's request.
	if code, res := p.post(t, "tok-alice", "/v1/tools/call", `{"session_id":"s2","step":1,"tool":"`+called+`","arguments":{}}`); code != 200 {
		t.Fatalf("call %s in s2 = %d %v", called, code, res)
	}

	_, text := testenv.Get(t, base+"/metrics")
	for _, want := range []string{
		"toolgate_discovery_queries_total 1",
		"toolgate_discovery_linked_calls_total 1",
		"toolgate_discovery_misses_total 1",
		"toolgate_discovery_shortlist_size_count 1",
		`toolgate_discovery_shortlist_size_bucket{le="1"} 1`,
		"toolgate_discovery_confidence_count 1",
		"toolgate_discovery_shortlist_seconds_count 1",
		"toolgate_discovery_reformulations_total ",
	} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(string(text), want+"\n") && !strings.Contains(string(text), "\n"+want) {
				t.Errorf("GET /metrics lacks %q", want)
			}
		})
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d, want 0", code)
	}

	fi, err := os.Stat(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the discovery log's mode = %v, want 0600", fi.Mode().Perm())
	}
	code, out, errOut := runCmd("log", "misses", "--log", logPath, "--format", "json")
	if code != exitNegative {
		t.Fatalf("toolgate log misses = %d, %s, %s; want 1 (misses)", code, out, errOut)
	}
	var rep struct {
		Calls, Hits, Misses, Unlinked int
		Tools                         []struct {
			Tenant, Tool string
			Count        int
			Queries      []struct{ Query string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Calls != 1 || rep.Hits != 0 || rep.Misses != 1 || rep.Unlinked != 1 || len(rep.Tools) != 1 ||
		rep.Tools[0].Tool != called || rep.Tools[0].Tenant != "acme" || rep.Tools[0].Queries[0].Query != query {
		t.Errorf("toolgate log misses = %s; want one miss of %s for %q, and s2's call unlinked", out, called, query)
	}
}

// TestMCPServeDiscoveryLog: `toolgate mcp serve --discovery-log` logs an
// MCP client's find_tools searches and its calls under the session, so
// that `toolgate log misses` finds a call of a tool the search lacked.
func TestMCPServeDiscoveryLog(t *testing.T) {
	memory := memoryServer(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "discovery.jsonl")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	srv := startStdioServe(ctx, "--mcp", "memory=env MEMORY_FILE_PATH="+filepath.Join(dir, "memory.jsonl")+" node "+memory,
		"--principal", "u1", "--tenant", "acme", "--k", "1", "--discovery-log", logPath)
	client := sdk.NewClient(&sdk.Implementation{Name: "go-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: srv.out, Writer: srv.in}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr %q)", err, srv.stderr.String())
	}
	const query, called = "delete an observation about an entity", "memory/read_graph"
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": query}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; strings.Contains(text, called) {
		t.Fatalf("find_tools %q = %s, want a shortlist without %s", query, text, called)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": called, "arguments": map[string]any{}}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; res.IsError || !strings.Contains(text, `"success":true`) {
		t.Fatalf("call_tool %s = %s", called, text)
	}
	cs.Close()
	srv.close(ctx, t)

	code, out, errOut := runCmd("log", "misses", "--log", logPath, "--format", "json")
	var rep struct {
		Calls, Misses int
		Tools         []struct {
			Tool    string
			Queries []struct{ Query string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("toolgate log misses = %d, %q, %q: %v", code, out, errOut, err)
	}
	if code != exitNegative || rep.Calls != 1 || rep.Misses != 1 || len(rep.Tools) != 1 || rep.Tools[0].Tool != called ||
		rep.Tools[0].Queries[0].Query != query {
		t.Errorf("toolgate log misses = %d, %s; want exit 1 with one miss of %s for %q", code, out, called, query)
	}
}
