package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// serveProcess is a running `toolgate serve` process.
type serveProcess struct {
	*testenv.Process
	url string
}

// buildToolgate returns the path of the CLI built for this test run.
func buildToolgate(t *testing.T) string {
	t.Helper()
	return testenv.Build(t, "toolgate", ".")
}

func TestMain(m *testing.M) { os.Exit(testenv.BuildMain(m)) }

// startServe starts bin serve on a free loopback port with args.
func startServe(t *testing.T, bin string, args ...string) *serveProcess {
	t.Helper()
	return startServeCmd(t, exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...))
}

// startServeCmd starts cmd, a `toolgate serve` command line, and returns
// once serve said where it listens ("listening on http://ADDR (...)").
func startServeCmd(t *testing.T, cmd *exec.Cmd) *serveProcess {
	t.Helper()
	proc, rest := testenv.StartProcess(t, cmd, "listening on ", 2*time.Minute)
	url, _, _ := strings.Cut(rest, " ")
	return &serveProcess{Process: proc, url: url}
}

// stop sends SIGTERM and returns the exit code.
func (p *serveProcess) stop(t *testing.T) int {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop after SIGTERM")
	}
	return p.Cmd.ProcessState.ExitCode()
}

func (p *serveProcess) post(t *testing.T, token, path, body string) (int, map[string]any) {
	t.Helper()
	resp, data := testenv.Post(t, t.Context(), p.url+path, token, body, "Content-Type", "application/json")
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("POST %s: %d %s: not JSON", path, resp.StatusCode, data)
	}
	return resp.StatusCode, out
}

// aliceTokens writes tokens.json in dir, a bearer token file where token
// is alice's of tenant acme, without scopes, and returns its path.
func aliceTokens(t *testing.T, dir, token string) string {
	t.Helper()
	path := filepath.Join(dir, "tokens.json")
	body := `{"tokens":{"` + token + `":{"principal":"alice","tenant":"acme","scopes":[]}}}`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestServe runs `toolgate serve` as a process over a catalog file and a
// real upstream MCP server (server-memory over stdio), with the SQLite
// store: discovery for the bearer, a call executed once and replayed,
// a catalog-only tool refused, metrics and health, a graceful stop on
// SIGTERM, and the replay surviving a restart on the same --data.
func TestServe(t *testing.T) {
	memory := memoryServer(t)
	github := githubCatalog(t)
	dir := t.TempDir()
	tokens := aliceTokens(t, dir, "tok-alice")
	data := filepath.Join(dir, "data")
	memFile := filepath.Join(dir, "memory.jsonl")
	args := []string{"--tokens", tokens, "--data", data, "--tools", github,
		"--mcp", "memory=env MEMORY_FILE_PATH=" + memFile + " node " + memory}
	bin := buildToolgate(t)
	p := startServe(t, bin, args...)

	code, body := p.post(t, "tok-alice", "/v1/discover", `{"query":"remember a new entity in the knowledge graph","k":5}`)
	if code != 200 {
		t.Fatalf("discover = %d %v", code, body)
	}
	found := false
	for _, c := range body["candidates"].([]any) {
		if c.(map[string]any)["name"] == "memory/create_entities" {
			found = true
		}
	}
	if !found {
		t.Errorf("discover = %v, want memory/create_entities among the candidates", body["candidates"])
	}

	call := `{"session_id":"s1","step":1,"tool":"memory/create_entities","arguments":{"entities":[{"name":"Ada","entityType":"person","observations":["first programmer"]}]}}`
	code, first := p.post(t, "tok-alice", "/v1/tools/call", call)
	if code != 200 || first["cached"] != false {
		t.Fatalf("call = %d %v, want 200 not cached", code, first)
	}
	code, again := p.post(t, "tok-alice", "/v1/tools/call", call)
	if code != 200 || again["cached"] != true || again["idempotency_key"] != first["idempotency_key"] {
		t.Fatalf("the same step again = %d %v, want the replay with the same key", code, again)
	}
	code, noHandler := p.post(t, "tok-alice", "/v1/tools/call", `{"session_id":"s1","step":2,"tool":"github/list_issues","arguments":{"owner":"acme","repo":"app"}}`)
	if code != 404 || noHandler["code"] != "SERVER_NOT_CONNECTED" {
		t.Errorf("a catalog-only tool = %d %v, want 404 with code SERVER_NOT_CONNECTED", code, noHandler)
	}
	if code, _ := p.post(t, "nobody", "/v1/tools/call", call); code != 401 {
		t.Errorf("an unknown bearer = %d, want 401", code)
	}

	for path, want := range map[string]string{"/healthz": "ok", "/metrics": "toolgate_gateway_calls_total"} {
		t.Run(path, func(t *testing.T) {
			resp, err := http.Get(p.url + path)
			if err != nil {
				t.Fatal(err)
			}
			text, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(text), want) {
				t.Errorf("GET %s = %d, want 200 with %q", path, resp.StatusCode, want)
			}
		})
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM, want 0", code)
	}

	// A new process on the same --data replays the recorded step.
	p = startServe(t, bin, args...)
	code, replay := p.post(t, "tok-alice", "/v1/tools/call", call)
	if code != 200 || replay["cached"] != true || replay["idempotency_key"] != first["idempotency_key"] {
		t.Errorf("the step after a restart = %d %v, want the replay", code, replay)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM, want 0", code)
	}
}

// Flags that contradict or cannot work are refused before anything
// starts, exit 2, with one line naming the flag: a --data that a --store
// would silently leave unused, an --addr that is no HOST:PORT.
func TestServeRefusesBadStoreAndAddrFlags(t *testing.T) {
	tokens := writeFile(t, "tokens.json", `{"tokens":{"t":{"principal":"a","tenant":"x","scopes":[]}}}`)
	catalog := writeFile(t, "c.jsonl", `{"name":"ping","description":"Ping."}`+"\n")
	base := []string{"serve", "--tokens", tokens, "--tools", catalog, "--offer-unconnected"}
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"data and store", "not both", []string{"--data", t.TempDir(), "--store", "redis://127.0.0.1:1/0"}},
		{"addr without port", `--addr "nonsense"`, []string{"--data", t.TempDir(), "--addr", "nonsense"}},
		{"addr port out of range", `--addr "127.0.0.1:99999"`, []string{"--data", t.TempDir(), "--addr", "127.0.0.1:99999"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			args := append(slices.Clone(base), tc.args...)
			code := run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr)
			got := strings.TrimSpace(stderr.String())
			if code != exitUsage || strings.Contains(got, "\n") || !strings.Contains(got, tc.want) {
				t.Errorf("toolgate %v = exit %d, stderr %q; want exit %d, one line saying %q", tc.args, code, got, exitUsage, tc.want)
			}
		})
	}
}

func TestServeUsage(t *testing.T) {
	for i, args := range [][]string{
		{"serve"},
		{"serve", "--tools", "x.json"},
		{"serve", "--tools", "x.json", "--tokens", "t.json"},
		{"serve", "--tools", "x.json", "--tokens", "t.json", "--data", "d", "--store", "ftp://x"},
		{"serve", "--bogus"},
		{"serve", "--tools", "x.json", "--tokens", "t.json", "--data", "d", "--uncertain", "retry"},
		{"serve", "--tools", "x.json", "--tokens", "t.json", "--data", "d", "--uncertain-tool", "bank/pay"},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var stderr strings.Builder
			if code := run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr); code != exitUsage {
				t.Errorf("toolgate %v = exit %d, want %d (stderr %q)", args, code, exitUsage, stderr.String())
			}
			if strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 || stderr.Len() == 0 {
				t.Errorf("toolgate %v stderr = %q, want one line", args, stderr.String())
			}
		})
	}
}

// TestUnusableTokenRefused: a token file holding a token no request can
// present (blank, whitespace, a control character), a scope no token can
// carry (empty, whitespace) or no token at all stops `serve` and `mcp serve
// --http` at start: exit 2, one line "PATH:LINE: reason" naming the
// principal, never the token.
func TestUnusableTokenRefused(t *testing.T) {
	github := githubCatalog(t)
	dir := t.TempDir()
	mallory := func(token, scopes string) string {
		return "{\"tokens\":{\n  \"tok-alice\":{\"principal\":\"alice\",\"tenant\":\"acme\"},\n  \"" + token + "\":{\"principal\":\"mallory\",\"tenant\":\"acme\",\"scopes\":" + scopes + "}}}\n"
	}
	for _, tc := range []struct {
		name, body, reason string
		line               int
	}{
		{"blank", mallory(`  `, `[]`), `principal "mallory" has an empty token`, 3},
		{"space inside", mallory(`tok-m tok-n`, `[]`), `principal "mallory" has a token with whitespace`, 3},
		{"trailing newline", mallory(`tok-m\n`, `[]`), `principal "mallory" has a token with whitespace`, 3},
		{"escape sequence", mallory(`tok-m\u001b[2J`, `[]`), `principal "mallory" has a token with a control character`, 3},
		{"empty scope", mallory(`tok-m`, `["repo:read",""]`), `principal "mallory" has an empty scope`, 3},
		{"scope with a space", mallory(`tok-m`, `["a b"]`), `principal "mallory" has a scope with whitespace`, 3},
		{"no token", "{\n  \"tokens\":{}}\n", `"tokens" lists no token`, 2},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
		if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		want := path + ":" + strconv.Itoa(tc.line) + ": " + tc.reason
		for _, cmd := range []struct {
			name string
			args []string
		}{
			{"serve", []string{"serve", "--tools", github, "--data", filepath.Join(dir, "data"), "--addr", "127.0.0.1:0", "--tokens", path}},
			{"mcp serve", []string{"mcp", "serve", "--tools", github, "--http", "127.0.0.1:0", "--tokens", path}},
		} {
			args := cmd.args
			t.Run(tc.name+"/"+cmd.name, func(t *testing.T) {
				// The deadline only ends a server that accepted the file.
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				var stderr strings.Builder
				code := run(ctx, args, strings.NewReader(""), io.Discard, &stderr)
				got := stderr.String()
				if code != exitUsage || strings.Count(got, "\n") != 1 || !strings.Contains(got, want) {
					t.Errorf("toolgate %s = exit %d, stderr %q; want 2 and one line with %q", cmd.name, code, got, want)
				}
				if strings.Contains(got, "tok-m") {
					t.Errorf("stderr %q reveals the token", got)
				}
			})
		}
	}
}

// TestServeOrigin pins serve's defence against DNS rebinding: a request
// whose Origin is neither the server's own nor an --allow-origin is 403
// PERMISSION_DENIED on every endpoint, before authentication.
func TestServeOrigin(t *testing.T) {
	github := githubCatalog(t)
	dir := t.TempDir()
	p := startServe(t, buildToolgate(t), "--tokens", aliceTokens(t, dir, "tok-alice"), "--data", filepath.Join(dir, "data"),
		"--tools", github, "--allow-origin", "https://app.example.com")
	get := func(path, origin string) (int, string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, p.url+path, nil)
		req.RequestURI, req.Header = "", http.Header{"Origin": {origin}}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		io.Copy(&b, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, b.String()
	}
	for _, path := range []string{"/metrics", "/healthz", "/v1/tools/call", "/v1/discover", "/v1/approvals/apr_x", "/nowhere"} {
		t.Run(path, func(t *testing.T) {
			code, body := get(path, "http://attacker.example")
			if code != 403 || !strings.Contains(body, `"error_type":"PERMISSION_DENIED"`) {
				t.Errorf("GET %s from another origin = %d %s, want 403 PERMISSION_DENIED", path, code, body)
			}
		})
	}
	for name, origin := range map[string]string{"none": "", "allowed": "https://app.example.com", "own": p.url} {
		t.Run(name, func(t *testing.T) {
			if code, body := get("/metrics", origin); code != 200 {
				t.Errorf("GET /metrics with Origin %q = %d %.200s, want 200", origin, code, body)
			}
		})
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM, want 0", code)
	}
}

// await waits until serve's stderr holds text.
func (p *serveProcess) await(t *testing.T, text string) {
	t.Helper()
	select {
	case <-p.Stderr.Await(text):
	case <-t.Context().Done():
		t.Fatalf("serve never said %q:\n%s", text, p.Stderr.String())
	}
}

// TestServeCallWhileReconnecting: while serve reconnects an upstream MCP
// server that died, its tools stay known: a retry of a recorded call gets
// the recorded result, and a new call is refused 503 DOWNSTREAM_FAILURE,
// retryable, with "code":"SERVER_RECONNECTING" and a Retry-After header,
// until the server is back and the call runs. Before, both were 404
// UNKNOWN_TOOL.
func TestServeCallWhileReconnecting(t *testing.T) {
	memory := memoryServer(t)
	dir := t.TempDir()
	tokens := aliceTokens(t, dir, "tok-alice")
	// The server records its pid, and cannot start while a file down is there.
	script := filepath.Join(dir, "memory.sh")
	body := fmt.Sprintf("#!/bin/sh\n[ -e %[1]s/down ] && exit 1\necho $$ > %[1]s/pid\nexec node %[2]s\n", dir, memory)
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, buildToolgate(t), "--tokens", tokens, "--data", filepath.Join(dir, "data"),
		"--mcp", "memory=env MEMORY_FILE_PATH="+filepath.Join(dir, "memory.jsonl")+" sh "+script)
	call := func(step int) string {
		return fmt.Sprintf(`{"session_id":"s1","step":%d,"tool":"memory/read_graph","arguments":{}}`, step)
	}
	if code, first := p.post(t, "tok-alice", "/v1/tools/call", call(1)); code != 200 {
		t.Fatalf("call = %d %v, want 200", code, first)
	}

	if err := os.WriteFile(filepath.Join(dir, "down"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pid, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(pid)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(n, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.await(t, "mcp: reconnect failed")
	if code, again := p.post(t, "tok-alice", "/v1/tools/call", call(1)); code != 200 || again["cached"] != true {
		t.Errorf("the recorded step while reconnecting = %d %v, want 200, cached", code, again)
	}
	resp, data := testenv.Post(t, t.Context(), p.url+"/v1/tools/call", "tok-alice", call(2), "Content-Type", "application/json")
	var refused map[string]any
	if err := json.Unmarshal(data, &refused); err != nil {
		t.Fatalf("a new step while reconnecting: %d %s: not JSON", resp.StatusCode, data)
	}
	if resp.StatusCode != 503 || refused["error_type"] != "DOWNSTREAM_FAILURE" || refused["retryable"] != true ||
		refused["code"] != "SERVER_RECONNECTING" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a new step while reconnecting = %d (Retry-After %q) %v; want 503 DOWNSTREAM_FAILURE, retryable, code SERVER_RECONNECTING, with Retry-After",
			resp.StatusCode, resp.Header.Get("Retry-After"), refused)
	}

	if err := os.Remove(filepath.Join(dir, "down")); err != nil {
		t.Fatal(err)
	}
	p.await(t, "mcp: reconnected")
	if code, ran := p.post(t, "tok-alice", "/v1/tools/call", call(2)); code != 200 || ran["cached"] != false {
		t.Errorf("the refused step once the server is back = %d %v, want 200, run", code, ran)
	}
}
