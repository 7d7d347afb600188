package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
)

// buildForServe returns toolgate and the calc MCP server (testdata/calc)
// built for this test run.
func buildForServe(t *testing.T) (toolgate, calc string) {
	t.Helper()
	return buildToolgate(t), testenv.Build(t, "calc", "./testdata/calc")
}

// calcServe is the setting of a test of `toolgate serve` over the calc
// upstream: the built binaries and a temporary folder with alice's token
// file (bearer tok-a), the file calc counts its runs in (CALC_COUNT) and
// the folder for serve's --data.
type calcServe struct {
	toolgate, calc string
	dir, tokens    string
	count, data    string
}

// mcp is the --mcp value of calc, named calc. Its environment comes on its
// command line: a stdio server gets only a default environment of
// toolgate's own (tools/mcp), not the variables a test gives serve. They
// are CALC_COUNT and the FIFOs of slowEnv, which slow_add uses.
func (s *calcServe) mcp() string {
	return "calc=env CALC_COUNT=" + s.count + " CALC_STARTED=" + filepath.Join(s.dir, "started") +
		" CALC_RELEASE=" + filepath.Join(s.dir, "release") + " " + s.calc
}

func newCalcServe(t *testing.T) *calcServe {
	t.Helper()
	toolgate, calc := buildForServe(t)
	dir := t.TempDir()
	return &calcServe{toolgate: toolgate, calc: calc, dir: dir,
		tokens: aliceTokens(t, dir, "tok-a"), count: filepath.Join(dir, "count"), data: filepath.Join(dir, "data")}
}

// start starts `toolgate serve` with env and args and returns once it said
// where it listens. env is serve's, not calc's (see mcp).
func (s *calcServe) start(t *testing.T, ctx context.Context, env []string, args ...string) *serveProcess {
	t.Helper()
	cmd := exec.CommandContext(ctx, s.toolgate, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	return startServeCmd(t, cmd)
}

// slowEnv makes the FIFOs calc's slow_add writes when it starts
// (CALC_STARTED) and reads before it returns (CALC_RELEASE), so that a test
// holds a call in flight without sleeping, and returns them; it skips the
// test where there are no FIFOs.
func (s *calcServe) slowEnv(t *testing.T) (started, release string) {
	t.Helper()
	started, release = filepath.Join(s.dir, "started"), filepath.Join(s.dir, "release")
	for _, f := range []string{started, release} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
	}
	return started, release
}

// awaitStarted returns once calc's slow_add runs: reading slowEnv's
// started FIFO blocks until the tool opens it.
func awaitStarted(t *testing.T, started string) {
	t.Helper()
	if _, err := os.ReadFile(started); err != nil {
		t.Fatal(err)
	}
}

// wantRanOnce wants calc to have run once in all: its count file holds
// one mark a run.
func (s *calcServe) wantRanOnce(t *testing.T) {
	t.Helper()
	if n, _ := os.ReadFile(s.count); string(n) != "x" {
		t.Errorf("calc ran %d times, want once", len(n))
	}
}

// inFlightAnswer is what a call held in flight by callInFlight got:
// status -1 and body {"error": …} when its connection died.
type inFlightAnswer struct {
	status int
	body   map[string]any
}

// callInFlight posts call to p's /v1/tools/call as alice (bearer tok-a)
// from a goroutine and returns once the tool runs (slowEnv's started FIFO
// opens), with where the answer will arrive; a test may leave it unread.
func (p *serveProcess) callInFlight(t *testing.T, ctx context.Context, call, started string) <-chan inFlightAnswer {
	t.Helper()
	answers := make(chan inFlightAnswer, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/v1/tools/call", strings.NewReader(call))
		req.Header.Set("Authorization", "Bearer tok-a")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answers <- inFlightAnswer{status: -1, body: map[string]any{"error": err.Error()}}
			return
		}
		defer resp.Body.Close()
		var body map[string]any
		json.NewDecoder(resp.Body).Decode(&body)
		answers <- inFlightAnswer{resp.StatusCode, body}
	}()
	awaitStarted(t, started)
	return answers
}

// auditVerifies wants `toolgate audit verify --data data` to pass (after:
// what happened to the store).
func auditVerifies(t *testing.T, ctx context.Context, data, after string) {
	t.Helper()
	var stdout, stderr strings.Builder
	if code := run(ctx, []string{"audit", "verify", "--data", data}, strings.NewReader(""), &stdout, &stderr); code != exitOK {
		t.Errorf("audit verify after %s = exit %d: %s%s", after, code, stdout.String(), stderr.String())
	}
}

// startStdio starts `mcp serve` over stdio over calc with extra flags, as alice of acme with --data, and sends it what a client sends
// to call calc/slow_add {"a":1,"b":2}; it returns once serve answered
// initialize, with serve's stdin.
func (s *calcServe) startStdio(t *testing.T, extra ...string) (*testenv.Process, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(s.toolgate, append([]string{"mcp", "serve", "--principal", "alice", "--tenant", "acme",
		"--mcp", s.mcp(), "--data", s.data}, extra...)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Into the pipe's buffer; serve reads it once it starts.
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"calc/slow_add","arguments":{"a":1,"b":2}}}}
`); err != nil {
		t.Fatal(err)
	}
	p, _ := testenv.StartProcess(t, cmd, `{"jsonrpc":"2.0","id":1,`, time.Minute) // the initialize result
	return p, in
}

// wantCallAudited wants the audit chain of the store in data to verify
// and to hold calc/slow_add's call with outcome ok.
func wantCallAudited(t *testing.T, data string) {
	t.Helper()
	auditVerifies(t, t.Context(), data, "the call")
	if code, stdout, stderr := runCmd("audit", "export", "--data", data); code != exitOK ||
		!regexp.MustCompile(`"tool":"calc/slow_add".*"outcome":"ok"`).MatchString(stdout) {
		t.Errorf("audit export = exit %d, no ok entry of calc/slow_add:\n%s%s", code, stdout, stderr)
	}
}

// stopClean stops p with SIGTERM and wants a clean exit.
func stopClean(t *testing.T, p *serveProcess) {
	t.Helper()
	if code := p.stop(t); code != 0 {
		t.Fatalf("toolgate serve after SIGTERM: exit status %d (stderr %s)", code, p.Stderr.String())
	}
}

// replaysAfterRestart starts serve again on args (the same --data),
// wants call (what) answered from the store, stops serve and wants calc to
// have run once in all.
func (s *calcServe) replaysAfterRestart(t *testing.T, ctx context.Context, args []string, call, what string) {
	t.Helper()
	p := s.start(t, ctx, nil, args...)
	status, out := p.post(t, "tok-a", "/v1/tools/call", call)
	if status != 200 || out["cached"] != true {
		t.Errorf("%s after a restart = %d %v, want the cached replay", what, status, out)
	}
	stopClean(t, p)
	s.wantRanOnce(t)
}

// TestServeGoUpstream runs `toolgate serve` as a process over a catalog
// file and an MCP upstream written in Go (testdata/calc over stdio, so it
// runs where node is missing too), with the SQLite store: calls by ID and
// bare name execute once and replay, a catalog-only tool cannot be
// executed, discovery shortlists the bearer's tools, SIGTERM shuts down
// cleanly, and after a restart on the same --data the call still replays
// and the upstream ran once.
func TestServeGoUpstream(t *testing.T) {
	s := newCalcServe(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	github := githubCatalog(t)
	args := []string{"--tools", github, "--mcp", s.mcp(), "--tokens", s.tokens, "--data", filepath.Join(s.dir, "data")}

	p := s.start(t, ctx, nil, args...)
	resp, err := http.Get(p.url + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz = %v, %v", resp, err)
	}
	resp.Body.Close()

	call := `{"session_id":"s1","step":1,"tool":"add","arguments":{"a":2,"b":40}}`
	status, out := p.post(t, "tok-a", "/v1/tools/call", call)
	result, _ := out["result"].(map[string]any)
	if status != 200 || out["cached"] != false || result == nil {
		t.Fatalf("add by bare name = %d %v, want 200 fresh", status, out)
	}
	if sc, _ := json.Marshal(result); !strings.Contains(string(sc), "42") {
		t.Errorf("add(2, 40) = %s, want 42 in it", sc)
	}
	status, again := p.post(t, "tok-a", "/v1/tools/call", strings.Replace(call, `"add"`, `"calc/add"`, 1))
	if status != 200 || again["cached"] != true || again["idempotency_key"] != out["idempotency_key"] {
		t.Errorf("the same call by ID = %d %v, want the cached replay", status, again)
	}
	status, out = p.post(t, "tok-a", "/v1/tools/call", `{"session_id":"s1","step":2,"tool":"github/create_issue","arguments":{}}`)
	if status != 404 || out["error_type"] != "UNKNOWN_TOOL" {
		t.Errorf("a catalog-only tool = %d %v, want 404 UNKNOWN_TOOL", status, out)
	}
	status, out = p.post(t, "nobody", "/v1/tools/call", call)
	if status != 401 {
		t.Errorf("unknown token = %d %v, want 401", status, out)
	}
	status, out = p.post(t, "tok-a", "/v1/discover", `{"query":"add two numbers together","k":3}`)
	cands, _ := out["candidates"].([]any)
	first, _ := firstCandidate(cands)["name"].(string)
	if status != 200 || first != "calc/add" {
		t.Errorf("discover(add two numbers) = %d %v, want calc/add first", status, out)
	}
	resp, body := testenv.Get(t, p.url+"/metrics")
	if !strings.Contains(string(body), `toolgate_gateway_calls_total{outcome="replayed",tool="calc/add"} 1`) {
		t.Errorf("/metrics lacks the replayed call:\n%s", body)
	}
	stopClean(t, p)

	// Restart on the same data: the recorded call is still answered from
	// the store, and the upstream ran once in all.
	s.replaysAfterRestart(t, ctx, args, call, "the call")
}

// TestServeDrainsOnSIGTERM: a call in flight when SIGTERM arrives finishes,
// is answered and recorded, then serve exits 0; after a restart the same
// call replays and the tool ran once.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	s := newCalcServe(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	started, release := s.slowEnv(t)
	args := []string{"--mcp", s.mcp(), "--tokens", s.tokens, "--data", s.data, "-v"}
	p := s.start(t, ctx, nil, args...)

	call := `{"session_id":"s1","step":1,"tool":"slow_add","arguments":{"a":1,"b":2}}`
	answers := p.callInFlight(t, ctx, call, started)
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Stderr.Await("shutting down"):
	case <-ctx.Done():
		t.Fatalf("serve did not start shutting down after SIGTERM (stderr %s)", p.Stderr.String())
	}
	// The server has stopped accepting; the call in flight goes on. Let it finish.
	if err := os.WriteFile(release, []byte("r"), 0); err != nil {
		t.Fatal(err)
	}
	a := <-answers
	if a.status != 200 || a.body["cached"] != false {
		t.Fatalf("the call in flight at SIGTERM = %d %v, want 200", a.status, a.body)
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM with a call in flight: %v (stderr %s)", err, p.Stderr.String())
	}
	auditVerifies(t, ctx, s.data, "the drain")
	s.replaysAfterRestart(t, ctx, args, call, "the drained call")
}

// TestServeShutdownTimeoutLeavesUncertain: a call still running when
// --shutdown-timeout ends is abandoned: serve exits 1 saying so, the store
// file stays consistent (the audit chain verifies) and holds the call's
// claim in progress with no outcome, the audit holds an uncertain entry of
// it, and after a restart a retry of the call is told IN_PROGRESS until the
// claim's lease expires, then (under --uncertain reconcile)
// OUTCOME_UNCERTAIN: the tool is never run a second time.
func TestServeShutdownTimeoutLeavesUncertain(t *testing.T) {
	s := newCalcServe(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	started, _ := s.slowEnv(t)
	args := []string{"--mcp", s.mcp(), "--tokens", s.tokens, "--data", s.data, "--uncertain", "reconcile",
		"--shutdown-timeout", "1s", "--tool-timeout", "2s", "--lease-grace", "1s"}
	p := s.start(t, ctx, nil, args...)
	call := `{"session_id":"s1","step":1,"tool":"slow_add","arguments":{"a":1,"b":2}}`
	p.callInFlight(t, ctx, call, started) // its connection dies with serve: no answer is awaited
	if code := p.stop(t); code != exitNegative || !strings.Contains(p.Stderr.String(), "calls still running keep their claims") {
		t.Fatalf("serve past --shutdown-timeout with a call running: exit %d, stderr %s; want exit 1 naming the calls left", code, p.Stderr.String())
	}
	auditVerifies(t, ctx, s.data, "the abandoned call")
	// What serve left in the store: the call's claim, still in progress
	// after its one attempt, no outcome recorded (neither released, which
	// would let a retry run it afresh, nor completed, nor marked uncertain
	// as if the handler had failed).
	rec := slowAddRecord(t, s.data)
	if rec.state != "in_progress" || rec.attempts != 1 || rec.hasOutcome {
		t.Fatalf("the record of the call abandoned at shutdown = %+v, want in_progress, 1 attempt, no outcome", rec)
	}
	// The audit tells of the attempt: serve closed its gateway past the
	// timeout, which audits the call still running as uncertain.
	var export, exportErr strings.Builder
	if code := run(ctx, []string{"audit", "export", "--data", s.data}, strings.NewReader(""), &export, &exportErr); code != exitOK ||
		!regexp.MustCompile(`"tool":"calc/slow_add","key":"`+regexp.QuoteMeta(rec.key)+`".*"reason":"[^"]*running when the gateway closed[^"]*","outcome":"uncertain"`).MatchString(export.String()) {
		t.Errorf("audit export = exit %d, no uncertain entry of the abandoned call %s:\n%s%s", code, rec.key, export.String(), exportErr.String())
	}

	p = s.start(t, ctx, nil, args...)
	var inProgress int
	for {
		resp, body := testenv.Post(t, ctx, p.url+"/v1/tools/call", "tok-a", call)
		var out map[string]any
		json.Unmarshal(body, &out)
		if resp.StatusCode == http.StatusConflict && out["error_type"] == "IN_PROGRESS" {
			inProgress++
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			select { // a client's back-off, as the hint says
			case <-time.After(time.Duration(max(wait, 1)) * time.Second):
			case <-ctx.Done():
				t.Fatal("the retry stayed IN_PROGRESS")
			}
			continue
		}
		// Told about the same slot's one execution, not a new one: a
		// retry that ran slow_add again would be its second attempt.
		if resp.StatusCode != http.StatusConflict || out["error_type"] != "OUTCOME_UNCERTAIN" ||
			out["idempotency_key"] != rec.key || out["attempts"] != 1.0 {
			t.Errorf("the retry after the restart = %d %s; want 409 OUTCOME_UNCERTAIN of key %s, attempts 1, once the lease expired", resp.StatusCode, body, rec.key)
		}
		break
	}
	if inProgress == 0 {
		t.Log("the lease had expired before the first retry")
	}
	stopClean(t, p)
	if n, _ := os.ReadFile(s.count); len(n) != 0 {
		t.Errorf("calc completed %d times, want 0: the abandoned call must not run again", len(n))
	}
}

// callRecord is a call's record in the SQLite store: its idempotency
// key, state, attempts, and whether an outcome (a value or a domain
// error) is recorded.
type callRecord struct {
	key, state string
	attempts   int
	hasOutcome bool
}

// slowAddRecord returns the record the SQLite store in data holds for the
// one call of calc/slow_add. It reads the table itself, read-only: the
// store's interface has no way to look at a record without claiming it.
func slowAddRecord(t *testing.T, data string) callRecord {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "gateway.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(),
		`SELECT key, state, attempts, value IS NOT NULL OR domain_error IS NOT NULL FROM records WHERE tool = 'calc/slow_add'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var recs []callRecord
	for rows.Next() {
		var r callRecord
		if err := rows.Scan(&r.key, &r.state, &r.attempts, &r.hasOutcome); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("records of calc/slow_add = %+v, want one", recs)
	}
	return recs[0]
}

// TestMCPServeStdioDrainsOnSIGTERM: `mcp serve` over stdio (a real
// process) with a call_tool in flight when SIGTERM arrives (the last
// step but one of the MCP stdio shutdown, and how a service manager stops
// a process) lets the call finish, answers and records it, and exits 0,
// as it does on SIGINT or when its stdin closes; the tool ran once.
func TestMCPServeStdioDrainsOnSIGTERM(t *testing.T) {
	s := newCalcServe(t)
	started, release := s.slowEnv(t)
	p, _ := s.startStdio(t)
	awaitStarted(t, started)
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() { released <- os.WriteFile(release, []byte("r"), 0) }() // blocks until calc reads: never if serve died
	select {
	case err := <-released:
		if err != nil {
			t.Fatal(err)
		}
	case <-p.Done():
		t.Fatalf("mcp serve (stdio) died on SIGTERM with a call in flight (%v), without draining it: %s", p.Cmd.ProcessState, p.Stderr.String())
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("mcp serve (stdio) after SIGTERM with a call in flight: %v (stderr %s)", err, p.Stderr.String())
	}
	wantCallAudited(t, s.data)
	s.wantRanOnce(t)
}

// TestMCPServeStdioRecordsHeldOutcomeBeforeExit: over stdio, the store
// refuses to record a call's outcome (another process holds the SQLite
// file's write lock), so the gateway holds it; the client then ends the
// session. The process must record the held outcome once the store takes
// it (within --shutdown-timeout) before it exits 0, not drop it: a
// dropped outcome leaves the claim to expire to uncertain and the tool to
// run again on a retry.
func TestMCPServeStdioRecordsHeldOutcomeBeforeExit(t *testing.T) {
	s := newCalcServe(t)
	started, release := s.slowEnv(t)
	p, in := s.startStdio(t, "-v")
	awaitStarted(t, started)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(s.data, "gateway.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lock, err := db.Conn(t.Context())
	if err == nil {
		_, err = lock.ExecContext(t.Context(), "BEGIN IMMEDIATE")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(release, []byte("r"), 0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Stderr.Await("holding an outcome the store could not record"):
	case <-p.Done():
		t.Fatalf("mcp serve exited before holding the outcome: %s", p.Stderr.String())
	}
	in.Close() // the client ends the session
	if _, err := lock.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	lock.Close()
	if err := p.Wait(); err != nil {
		t.Fatalf("mcp serve (stdio) after its stdin closed with an outcome held: %v (stderr %s)", err, p.Stderr.String())
	}
	wantCallAudited(t, s.data)
	s.wantRanOnce(t)
}

func firstCandidate(cs []any) map[string]any {
	if len(cs) == 0 {
		return nil
	}
	m, _ := cs[0].(map[string]any)
	return m
}

// TestMCPServeDrainsOnSIGTERM: `mcp serve --http` (a real process, the
// go-sdk client) with a call_tool in flight and an event stream open when
// SIGTERM arrives stops taking new connections, ends the stream, lets the
// call finish and answers it, records it (the audit chain verifies, with
// the call's entry ok), and exits 0; the tool ran once.
func TestMCPServeDrainsOnSIGTERM(t *testing.T) {
	s := newCalcServe(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	started, release := s.slowEnv(t)
	cmd := exec.CommandContext(ctx, s.toolgate, "mcp", "serve", "-v", "--http", "127.0.0.1:0",
		"--mcp", s.mcp(), "--tokens", s.tokens, "--data", s.data)
	logs := &testenv.Buffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	select {
	case <-logs.Await("Streamable HTTP on "):
	case <-exited:
		t.Fatalf("mcp serve exited before listening: %s", logs)
	}
	base := regexp.MustCompile(`Streamable HTTP on (http://[0-9.:]+)`).FindStringSubmatch(logs.String())[1]

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "drain", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/", HTTPClient: bearerClient("tok-a")},
			// A revision with sessions: the client keeps the session's stream of
			// server notifications (a GET) open, through the shutdown too.
			&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, logs)
	}
	defer cs.Close()
	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	answers := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool",
			Arguments: map[string]any{"name": "calc/slow_add", "arguments": map[string]any{"a": 1, "b": 2}}})
		answers <- answer{res, err}
	}()
	awaitStarted(t, started)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-logs.Await("shutting down"):
	case <-exited:
		t.Fatalf("mcp serve exited on SIGTERM with a call in flight (%v), without draining it:\n%s", cmd.ProcessState, logs)
	}
	// A new client is refused while the call in flight finishes.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}} // no connection of before
	if _, err := fresh.Post(base+"/", "application/json", strings.NewReader("{}")); err == nil {
		t.Errorf("a new request during the shutdown was served; want it refused")
	}
	if err := os.WriteFile(release, []byte("r"), 0); err != nil {
		t.Fatal(err)
	}
	a := <-answers
	if a.err != nil || a.res.IsError {
		t.Fatalf("the call in flight at SIGTERM = %+v, %v; want its result\n%s", a.res, a.err, logs)
	}
	if out, _ := json.Marshal(a.res); !strings.Contains(string(out), `\"sum\":3`) {
		t.Errorf("the call in flight = %s, want sum 3", out)
	}
	<-exited
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("mcp serve after SIGTERM with a call in flight: exit %d (%v)\n%s", code, cmd.ProcessState, logs)
	}
	wantCallAudited(t, s.data)
	s.wantRanOnce(t)
}

// TestServeUnreachableRedisSaysItOnce: a --store whose Redis does not
// answer stops the start with the store's reason on stderr, and no line
// of the Redis client's own log of each failed dial (it writes to the
// process's stderr, past the writer run is given, in its own format).
func TestServeUnreachableRedisSaysItOnce(t *testing.T) {
	toolgate := buildToolgate(t)
	dir := t.TempDir()
	tokens := testenv.WriteFile(t, dir, "tokens.json", `{"tokens":{"t":{"principal":"a","tenant":"x","scopes":[]}}}`)
	catalog := testenv.WriteFile(t, dir, "c.jsonl", `{"name":"ping","description":"Ping."}`+"\n")
	cmd := exec.Command(toolgate, "serve", "--addr", "127.0.0.1:0", "--tokens", tokens, "--tools", catalog,
		"--offer-unconnected", "--store", "redis://127.0.0.1:1/0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	got := strings.TrimSpace(stderr.String())
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(got, "redisstore: ") {
		t.Errorf("serve --store with no Redis there = %v, stderr %q; want exit %d with the store's reason", err, got, exitUsage)
	}
	for line := range strings.Lines(got) {
		if !strings.HasPrefix(line, "toolgate serve: ") {
			t.Errorf("serve --store with no Redis there wrote %q on stderr, a line not toolgate's", line)
		}
	}
}
