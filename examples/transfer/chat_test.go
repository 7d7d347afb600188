package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/examples/transfer/finance"
	"github.com/toolgate/toolgate/examples/transfer/internal/chat"
	"github.com/toolgate/toolgate/examples/transfer/ledger"
	"github.com/toolgate/toolgate/internal/embedtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools/cards"
)

var aliceArgs = []string{"--principal", "alice", "--tenant", "acme", "--scopes", "accounts:read,payments:write"}

// runChatCmd runs `transfer chat args...` in-process with input as stdin.
func runChatCmd(t *testing.T, input string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	old := stdin
	stdin = strings.NewReader(input)
	t.Cleanup(func() { stdin = old })
	return runArgs(append([]string{"chat"}, args...)...)
}

func chatArgs(data string, extra ...string) []string {
	return append(append([]string{"--data", data}, aliceArgs...), extra...)
}

// balances reads the ledger chat left in dir.
func balances(t *testing.T, dir string, accounts ...string) []string {
	t.Helper()
	l, err := ledger.Open(context.Background(), filepath.Join(dir, "ledger.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []string
	for _, acc := range accounts {
		b, err := l.Balance(context.Background(), acc)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b.String())
	}
	return out
}

func transactions(t *testing.T, dir string) int {
	t.Helper()
	l, err := ledger.Open(context.Background(), filepath.Join(dir, "ledger.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	txs, err := l.AllTransactions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(txs)
}

func writeScript(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestChatScriptedOnce: one request through the scripted model moves the
// money once. By default only tools that can run are offered;
// --offer-unconnected offers the demo catalog's tools without a server
// too, for discovery at scale.
func TestChatScriptedOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		shown string
	}{
		{"runnable tools only", nil, "step 1: 3 of 3 tools shown"},
		{"offer unconnected", []string{"--offer-unconnected"}, "step 1: 5 of 108 tools shown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			args := append(append([]string{"--backend", "scripted"}, tc.flags...), "--once", "send 25 dollars from ACC-00001 to ACC-00002")
			code, out, errOut := runChatCmd(t, "", chatArgs(data, args...)...)
			if code != exitOK {
				t.Fatalf("chat = %d, stderr %s", code, errOut)
			}
			for _, want := range []string{
				"alice (tenant acme, scopes accounts:read,payments:write) may use 108 of 109 tools",
				tc.shown,
				`step 1: call bank/transfer_funds {"source_account":"ACC-00001","target_account":"ACC-00002","amount":25.00} -> ok`,
				"Sent 25.00 USD from ACC-00001 to ACC-00002.",
			} {
				t.Run(want, func(t *testing.T) {
					if !strings.Contains(out, want) {
						t.Errorf("output lacks %q:\n%s", want, out)
					}
				})
			}
			const notOffered = "105 catalog tools have no MCP server connected and are not offered to the model"
			if got := strings.Contains(out, notOffered); got != (tc.flags == nil) {
				t.Errorf("output says %q: %v, want %v:\n%s", notOffered, got, tc.flags == nil, out)
			}
			if got := balances(t, data, "ACC-00001", "ACC-00002"); !slices.Equal(got, []string{"975.00", "1025.00"}) {
				t.Errorf("balances = %v, want [975.00 1025.00]", got)
			}
		})
	}
}

func TestChatScriptFileAndREPL(t *testing.T) {
	data := t.TempDir()
	script := writeScript(t,
		"# a transfer, then a balance question",
		`{"call":"transfer_funds","arguments":{"source_account":"ACC-00003","target_account":"ACC-00004","amount":40.5}}`,
		`{"answer":"Sent 40.50."}`,
		"",
		`{"call":"get_balance","arguments":{"account":"ACC-00003"}}`,
		`{"answer":"ACC-00003 holds 959.50."}`)
	code, out, errOut := runChatCmd(t, "send 40.50 from ACC-00003 to ACC-00004\n\nand what is left on ACC-00003?\nexit\nnever read\n",
		chatArgs(data, "--backend", "scripted", "--script", script, "--offer-unconnected", "-v")...)
	if code != exitOK {
		t.Fatalf("chat = %d, stderr %s", code, errOut)
	}
	for _, want := range []string{"Sent 40.50.", "ACC-00003 holds 959.50.", `-> ok {"account":"ACC-00003","balance":959.50}`,
		"strategy progressive; scores: bank/transfer_funds", "constraint: the turn envelope as JSON Schema", "step 3: call bank/get_balance"} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		})
	}
	if n := transactions(t, data); n != 1 {
		t.Errorf("%d transactions, want 1", n)
	}
}

func TestChatFailures(t *testing.T) {
	// The script ends before an answer: the turn fails, exit 1.
	script := writeScript(t, `{"call":"get_balance","arguments":{"account":"ACC-00001"}}`)
	code, _, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), "--backend", "scripted", "--script", script, "--once", "balance?")...)
	if code != exitFailure || !strings.Contains(errOut, "no more replies") {
		t.Errorf("exhausted script: code %d, stderr %q; want 1", code, errOut)
	}
}

func TestChatApprovePrompt(t *testing.T) {
	// 500 into ACC-00001 first, so it can pay 1200 (above the 1000.00
	// approval threshold) to ACC-00003.
	script := []string{
		`{"call":"transfer_funds","arguments":{"source_account":"ACC-00002","target_account":"ACC-00001","amount":500}}`,
		`{"call":"transfer_funds","arguments":{"source_account":"ACC-00001","target_account":"ACC-00003","amount":1200}}`,
		`{"answer":"done"}`,
	}
	for _, tc := range []struct {
		name, approve, input string
		wantACC3             string
		wantOut              string
	}{
		{"yes", "prompt", "y\n", "2200.00", "approve as operator? [y/N]"},
		{"no", "prompt", "n\n", "1000.00", "refused PERMISSION_DENIED: a human declined to approve this call"},
		{"eof", "prompt", "", "1000.00", "refused CONFIRMATION_REQUIRED"},
		{"never", "never", "y\n", "1000.00", "refused CONFIRMATION_REQUIRED: this call needs a human's approval and no approver is configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			code, out, errOut := runChatCmd(t, tc.input, chatArgs(data, "--backend", "scripted", "--approve", tc.approve,
				"--script", writeScript(t, script...), "--once", "pay 1200 from ACC-00001 to ACC-00003")...)
			if code != exitOK {
				t.Fatalf("chat = %d, stderr %s", code, errOut)
			}
			asked := strings.Contains(out, "approval needed: alice asks bank/transfer_funds")
			if asked != (tc.approve == "prompt") || !strings.Contains(out, tc.wantOut) || strings.Contains(out, "declined") != (tc.approve == "prompt" && tc.name != "yes") {
				t.Errorf("output: asked %v (want %v), want %q and \"declined\" only when a human declined:\n%s", asked, tc.approve == "prompt", tc.wantOut, out)
			}
			if got := balances(t, data, "ACC-00003"); got[0] != tc.wantACC3 {
				t.Errorf("ACC-00003 = %s, want %s", got[0], tc.wantACC3)
			}
		})
	}
}

// TestChatDeclinedRepeat: a model that repeats a call the human declined
// is refused by the gateway (the denial is recorded), and the human is
// not asked again.
func TestChatDeclinedRepeat(t *testing.T) {
	big := `{"call":"transfer_funds","arguments":{"source_account":"ACC-00001","target_account":"ACC-00003","amount":1200}}`
	data := t.TempDir()
	code, out, errOut := runChatCmd(t, "n\ny\ny\n", chatArgs(data, "--backend", "scripted", "--approve", "prompt",
		"--script", writeScript(t, big, big, big, `{"answer":"done"}`), "--once", "pay 1200 from ACC-00001 to ACC-00003")...)
	if code != exitOK {
		t.Fatalf("chat = %d, stderr %s", code, errOut)
	}
	if n := strings.Count(out, "approval needed:"); n != 1 {
		t.Errorf("the human was asked %d times; want once:\n%s", n, out)
	}
	if n := strings.Count(out, "refused PERMISSION_DENIED"); n != 3 {
		t.Errorf("%d sends refused PERMISSION_DENIED; want 3 (the declined call and its two repeats):\n%s", n, out)
	}
	if got := balances(t, data, "ACC-00003"); got[0] != "1000.00" {
		t.Errorf("ACC-00003 = %s, want 1000.00 (nothing paid)", got[0])
	}
}

// wire replays model outputs in a backend's exact wire format and records
// the raw request bodies.
type wire struct {
	mu      sync.Mutex
	raw     []string
	replies []map[string]any // the assistant message of each response
	// llamaCpp makes openai answer /props as a llama.cpp server does.
	llamaCpp bool
	// numCtx makes ollama answer /api/show with that num_ctx parameter.
	numCtx int
}

func (w *wire) next(r *http.Request) map[string]any {
	data, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.raw = append(w.raw, string(data))
	msg := map[string]any{"role": "assistant", "content": `{"action":"answer","text":"script exhausted"}`}
	if len(w.replies) > 0 {
		msg, w.replies = w.replies[0], w.replies[1:]
	}
	return msg
}

func (w *wire) bodies() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.raw...)
}

// ollama speaks Ollama's /api/chat (non-streaming).
func (w *wire) ollama(rw http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api/show" && w.numCtx > 0 {
		rw.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(rw).Encode(map[string]any{"parameters": fmt.Sprintf("%-30s %d", "num_ctx", w.numCtx),
			"model_info": map[string]any{"llama.context_length": 131072}})
		return
	}
	if r.URL.Path != "/api/chat" {
		http.NotFound(rw, r)
		return
	}
	msg := w.next(r)
	rw.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(rw).Encode(map[string]any{
		"model": "qwen3:8b", "created_at": "2025-07-07T20:22:19.19314Z", "message": msg,
		"done": true, "done_reason": "stop", "prompt_eval_count": 300, "eval_count": 30,
	})
}

// openai speaks OpenAI's Chat Completions.
func (w *wire) openai(rw http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/props" && w.llamaCpp {
		io.WriteString(rw, `{"default_generation_settings":{"n_ctx":2048},"total_slots":1,"model_path":"/models/tiny.gguf","build_info":"b1-test"}`)
		return
	}
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(rw, r)
		return
	}
	msg := w.next(r)
	finish := "stop"
	if _, ok := msg["tool_calls"]; ok {
		finish = "tool_calls"
	}
	rw.Header().Set("Content-Type", "application/json")
	json.NewEncoder(rw).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1741569952, "model": "gpt-4.1-mini",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   map[string]any{"prompt_tokens": 300, "completion_tokens": 30, "total_tokens": 330},
	})
}

// TestChatOverWire runs chat --once against httptest servers speaking
// Ollama's and OpenAI's wire formats: the transfer lands once, and no
// request body names a tool or scope the principal does not hold.
func TestChatOverWire(t *testing.T) {
	// "llama.cpp" is an OpenAI-compatible local server: a base URL, no key.
	for _, name := range []string{"ollama", "openai", "llama.cpp"} {
		t.Run(name, func(t *testing.T) {
			backend := name
			if name == "llama.cpp" {
				backend = "openai"
			}
			w := &wire{}
			var srv *httptest.Server
			if backend == "ollama" {
				w.replies = []map[string]any{
					{"role": "assistant", "content": `{"action":"call","tool":"transfer_funds","arguments":{"source_account":"ACC-00001","target_account":"ACC-00002","amount":12.5}}`},
					{"role": "assistant", "content": `{"action":"answer","text":"Sent 12.50."}`},
				}
				srv = httptest.NewServer(http.HandlerFunc(w.ollama))
				t.Setenv("OLLAMA_HOST", srv.URL)
			} else {
				w.replies = []map[string]any{
					{"role": "assistant", "content": nil, "refusal": nil, "tool_calls": []any{map[string]any{
						"id": "call_abc", "type": "function", "function": map[string]any{"name": "transfer_funds",
							"arguments": `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":12.5}`}}}},
					{"role": "assistant", "content": "Sent 12.50.", "refusal": nil},
				}
				srv = httptest.NewServer(http.HandlerFunc(w.openai))
				t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
				t.Setenv("OPENAI_API_KEY", "test-key")
				if name == "llama.cpp" {
					t.Setenv("OPENAI_API_KEY", "")
				}
			}
			defer srv.Close()
			data := t.TempDir()
			code, out, errOut := runChatCmd(t, "", chatArgs(data, "--backend", backend, "--offer-unconnected", "--once", "send 12.50 dollars from ACC-00001 to ACC-00002")...)
			if code != exitOK {
				t.Fatalf("chat = %d, stderr %s\n%s", code, errOut, out)
			}
			if !strings.Contains(out, "Sent 12.50.") {
				t.Errorf("output lacks the answer:\n%s", out)
			}
			if got := balances(t, data, "ACC-00001", "ACC-00002"); !slices.Equal(got, []string{"987.50", "1012.50"}) {
				t.Errorf("balances = %v, want one transfer of 12.50", got)
			}
			if n := transactions(t, data); n != 1 {
				t.Errorf("%d transactions, want 1", n)
			}
			bodies := w.bodies()
			if len(bodies) != 2 {
				t.Fatalf("%d requests, want 2", len(bodies))
			}
			for i, raw := range bodies {
				for _, hidden := range []string{"issue_full_refund", "billing:admin"} {
					t.Run(hidden, func(t *testing.T) {
						if strings.Contains(raw, hidden) {
							t.Errorf("request %d contains %q", i, hidden)
						}
					})
				}
			}
			var first map[string]any
			if err := json.Unmarshal([]byte(bodies[0]), &first); err != nil {
				t.Fatal(err)
			}
			if backend == "ollama" {
				// Envelope mode: the turn envelope is Ollama's format.
				format, _ := json.Marshal(first["format"])
				if !strings.Contains(string(format), `"transfer_funds"`) {
					t.Errorf("format does not bind transfer_funds: %.300s", format)
				}
				return
			}
			// Native mode: the shortlist as strict tools, plus find_tools.
			var names []string
			tls, _ := first["tools"].([]any)
			for _, tl := range tls {
				fn, _ := tl.(map[string]any)["function"].(map[string]any)
				names = append(names, fn["name"].(string))
				if fn["strict"] != true {
					t.Errorf("tool %v is not strict", fn["name"])
				}
			}
			if !slices.Contains(names, "transfer_funds") || !slices.Contains(names, "find_tools") {
				t.Errorf("tools sent = %v, want transfer_funds and find_tools", names)
			}
		})
	}
}

// TestChatFitsOllamaContext: with an Ollama model whose num_ctx /api/show
// reports, chat fits each request to it, so a long conversation's later
// requests leave its first turns out (and keep the current one).
func TestChatFitsOllamaContext(t *testing.T) {
	w := &wire{numCtx: 8192}
	for range 6 {
		w.replies = append(w.replies, map[string]any{"role": "assistant", "content": `{"action":"answer","text":"Noted."}`})
	}
	srv := httptest.NewServer(http.HandlerFunc(w.ollama))
	defer srv.Close()
	t.Setenv("OLLAMA_HOST", srv.URL)
	note := strings.Repeat("The customer called about the monthly fee again and asked for a summary. ", 60)
	var stdin strings.Builder
	for i := range 6 {
		fmt.Fprintf(&stdin, "Turn %d. %s\n", i+1, note)
	}
	code, out, errOut := runChatCmd(t, stdin.String(), chatArgs(t.TempDir(), "--backend", "ollama")...)
	if code != exitOK {
		t.Fatalf("chat = %d, stderr %s\n%s", code, errOut, out)
	}
	bodies := w.bodies()
	if len(bodies) != 6 {
		t.Fatalf("%d requests, want 6\n%s", len(bodies), out)
	}
	if first := bodies[0]; !strings.Contains(first, "Turn 1.") {
		t.Fatalf("the first request lacks its own turn: %.200s", first)
	}
	last := bodies[len(bodies)-1]
	if !strings.Contains(last, "Turn 6.") {
		t.Errorf("the last request lacks the current turn: %.300s", last)
	}
	if strings.Contains(last, "Turn 1.") {
		t.Errorf("the last request still carries the first turn: %d bytes against a %d-token window", len(last), w.numCtx)
	}
	if len(last) > 4*w.numCtx {
		t.Errorf("the last request is %d bytes, far over a %d-token window", len(last), w.numCtx)
	}
}

func TestChatUsageErrors(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	bad := writeScript(t, `{"answer":"ok"}`, `{"answer":"a","text":"b"}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{aliceArgs, "--backend"},
		{[]string{"--backend", "scripted"}, "--principal and --tenant"},
		{append([]string{"--backend", "gemini"}, aliceArgs...), `--backend "gemini"`},
		{append([]string{"--backend", "scripted", "--approve", "always"}, aliceArgs...), `--approve "always"`},
		{append([]string{"--backend", "scripted", "--approver", "alice"}, aliceArgs...), "--approver"},
		{append([]string{"--backend", "ollama", "--script", bad}, aliceArgs...), "--script needs --backend scripted"},
		{append([]string{"--backend", "scripted", "--script", bad}, aliceArgs...), bad + ":2: want exactly one of"},
		{append([]string{"--backend", "scripted", "--script", "does-not-exist.jsonl"}, aliceArgs...), "--script"},
		{append([]string{"--backend", "openai"}, aliceArgs...), "OPENAI_API_KEY"},
		{append([]string{"--backend", "scripted", "--once", ""}, aliceArgs...), "--once needs a request"},
		{append([]string{"--backend", "scripted", "extra"}, aliceArgs...), `unexpected argument "extra"`},
		{append([]string{"--backend", "scripted", "--bogus"}, aliceArgs...), "bogus"},
		{append([]string{"--backend", "scripted", "--unpinned", "allow"}, aliceArgs...), "--unpinned needs --pins"},
		{append([]string{"--backend", "scripted", "--pins", "x.pins", "--unpinned", "deny"}, aliceArgs...), `--unpinned "deny"`},
		{append([]string{"--backend", "local"}, aliceArgs...), "--backend local needs --model FILE.gguf"},
		{append([]string{"--backend", "ollama", "--library", "libllama.so"}, aliceArgs...), "--library needs --backend local"},
		{append([]string{"--backend", "local", "--model", "m.gguf", "--mode", "native"}, aliceArgs...), "a local model runs in grammar or envelope mode"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			code, _, errOut := runChatCmd(t, "", tc.args...)
			if code != exitUsage || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
				t.Errorf("chat %q = %d, stderr %q; want 2 with a one-line reason naming %q", tc.args, code, errOut, tc.want)
			}
		})
	}
}

func TestParseScript(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		n       int
	}{
		{`{"call":"get_balance","arguments":{"account":"ACC-00001"}}` + "\n" + `{"find_tools":"refund"}` + "\n" + `{"text":"oops"}` + "\n" + `{"answer":"ok"}`, "", 4},
		{"# only a comment\n\n", "s.jsonl: the script has no replies", 0},
		{`{"call":"x","arguments":[1]}`, "s.jsonl:1: arguments must be a JSON object", 0},
		{`{"answer":"x","arguments":{}}`, "s.jsonl:1: arguments belong to a call", 0},
		{`{"answer":"x"}` + "\n" + `{"reply":"x"}`, `s.jsonl:2: json: unknown field "reply"`, 0},
		{`not json`, "s.jsonl:1:", 0},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := chat.ParseScript(strings.NewReader(tc.in), "s.jsonl")
			switch {
			case tc.err == "" && (err != nil || len(got) != tc.n):
				t.Errorf("chat.ParseScript(%q) = %d replies, %v; want %d", tc.in, len(got), err, tc.n)
			case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
				t.Errorf("chat.ParseScript(%q) error = %v, want %q", tc.in, err, tc.err)
			}
		})
	}
}

// blockingReader cancels a context on its first read, then blocks until
// released: a user pressing Ctrl-C at the prompt.
type blockingReader struct {
	cancel  context.CancelFunc
	release chan struct{}
}

func (r *blockingReader) Read([]byte) (int, error) {
	r.cancel()
	<-r.release
	return 0, io.EOF
}

func TestChatInterruptAtPrompt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &blockingReader{cancel: cancel, release: make(chan struct{})}
	defer close(r.release)
	old := stdin
	stdin = r
	defer func() { stdin = old }()
	var out, errOut bytes.Buffer
	code := run(ctx, append([]string{"chat", "--backend", "scripted"}, aliceArgs...), &out, &errOut)
	if code != exitOK || !strings.HasSuffix(out.String(), "> \n") {
		t.Errorf("interrupted at the prompt: code %d, stdout %q, stderr %q; want a clean exit", code, out.String(), errOut.String())
	}
}

// TestChatModes: chat picks grammar mode for a llama.cpp server (its
// /props says so), sends --temperature, --seed and a token budget, and
// --mode overrides the default.
func TestChatModes(t *testing.T) {
	envelope := map[string]any{"role": "assistant", "content": `{"action":"answer","text":"Hello."}`}
	for _, tc := range []struct {
		name     string
		llamaCpp bool
		extra    []string
		wantMode string // the key that carries the constraint
	}{
		{"llama.cpp: grammar", true, nil, "grammar"},
		{"llama.cpp --mode envelope", true, []string{"--mode", "envelope"}, "response_format"},
		{"other server: native", false, nil, "tools"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &wire{llamaCpp: tc.llamaCpp, replies: []map[string]any{envelope}}
			if tc.wantMode == "tools" {
				w.replies = []map[string]any{{"role": "assistant", "content": "Hello."}}
			}
			srv := httptest.NewServer(http.HandlerFunc(w.openai))
			defer srv.Close()
			t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
			t.Setenv("OPENAI_API_KEY", "")
			args := append([]string{"--backend", "openai", "--temperature", "0", "--seed", "7", "--once", "hello"}, tc.extra...)
			code, out, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), args...)...)
			if code != exitOK || !strings.Contains(out, "Hello.") {
				t.Fatalf("chat = %d, stderr %s\n%s", code, errOut, out)
			}
			var body map[string]any
			if err := json.Unmarshal([]byte(w.bodies()[0]), &body); err != nil {
				t.Fatal(err)
			}
			if _, ok := body[tc.wantMode]; !ok {
				t.Errorf("request has no %s: %.300s", tc.wantMode, w.bodies()[0])
			}
			if body["temperature"] != 0.0 || body["seed"] != 7.0 {
				t.Errorf("temperature, seed = %v, %v, want 0, 7", body["temperature"], body["seed"])
			}
			budget, _ := body["max_tokens"].(float64)
			if budget == 0 {
				budget, _ = body["max_completion_tokens"].(float64)
			}
			if budget <= 0 {
				t.Errorf("request carries no token budget: %.300s", w.bodies()[0])
			}
		})
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "scripted", "--mode", "json"}, `--mode "json"`},
		{[]string{"--backend", "ollama", "--mode", "grammar"}, "--mode grammar needs a llama.cpp server"},
		{[]string{"--backend", "scripted", "--temperature", "-1"}, `--temperature "-1"`},
		{[]string{"--backend", "scripted", "--seed", "x"}, `--seed "x"`},
		{[]string{"--backend", "scripted", "--mcp-url", "not a url"}, "--mcp-url"},
		{[]string{"--backend", "openai", "--api", "assistants"}, `--api "assistants": want chat or responses`},
		{[]string{"--backend", "anthropic", "--api", "responses"}, "--api responses needs --backend openai"},
		{[]string{"--backend", "openai", "--api", "responses", "--mode", "grammar"}, "the Responses API takes no GBNF grammar"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			code, _, errOut := runChatCmd(t, "", append(tc.args, aliceArgs...)...)
			if (code != exitUsage && code != exitFailure) || !strings.Contains(errOut, tc.want) {
				t.Errorf("chat %q = %d, stderr %q; want a failure naming %q", tc.args, code, errOut, tc.want)
			}
		})
	}
}

// TestChatMCP connects a real MCP server (the reference memory server)
// behind the demo catalog: its tools replace the catalog's memory entries
// and a call of one runs on the server.
func TestChatMCP(t *testing.T) {
	dir := testenv.NodeModule(t, "@modelcontextprotocol/server-memory")
	memory := "memory=env MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl") + " node " + filepath.Join(dir, "dist", "index.js")
	script := writeScript(t, `{"find_tools":"select:create_entities"}`,
		`{"call":"create_entities","arguments":{"entities":[{"name":"tea","entityType":"drink","observations":["alice likes it"]}]}}`,
		`{"answer":"Noted."}`)
	code, out, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), "--backend", "scripted", "--script", script,
		"--mcp", memory, "--once", "remember that I like tea")...)
	if code != exitOK {
		t.Fatalf("chat = %d, stderr %s\n%s", code, errOut, out)
	}
	for _, want := range []string{"call memory/create_entities", `-> ok {"entities":[{"entityType":"drink","name":"tea"`, "96 catalog tools have no MCP server connected"} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		})
	}
}

// TestChatMCPPins: with --pins, a real server's tool whose definition
// differs from its pin, and one the lock does not pin, are quarantined:
// chat warns, names them quoted, and the model cannot call them.
func TestChatMCPPins(t *testing.T) {
	dir := testenv.NodeModule(t, "@modelcontextprotocol/server-memory")
	memory := "memory=env MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl") + " node " + filepath.Join(dir, "dist", "index.js")
	pins := filepath.Join(t.TempDir(), "mcp.pins")
	// A pin no definition hashes to: create_entities "changed" upstream.
	lock := "memory/create_entities sha256:" + strings.Repeat("0", 64) + "\n"
	if err := os.WriteFile(pins, []byte(lock), 0o600); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, `{"call":"create_entities","arguments":{"entities":[{"name":"tea","entityType":"drink","observations":["alice likes it"]}]}}`,
		`{"answer":"Noted."}`)
	code, out, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), "--backend", "scripted", "--script", script,
		"--mcp", memory, "--pins", pins, "--once", "remember that I like tea")...)
	if code != exitOK {
		t.Fatalf("chat = %d, stderr %s\n%s", code, errOut, out)
	}
	for _, want := range []string{`warning: memory/"create_entities" quarantined by --pins (changed)`, `warning: memory/"read_graph" quarantined by --pins (unpinned)`,
		"may use 99 of 100 tools"} {
		t.Run(want, func(t *testing.T) { // without --pins, 109: the 9 memory tools are out
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		})
	}
	if strings.Contains(out, `-> ok {"entities"`) {
		t.Errorf("the quarantined create_entities ran:\n%s", out)
	}
}

// TestChatServerNotConnected: with --offer-unconnected, a call of a demo
// catalog tool whose MCP server is not connected is refused with a distinct, recorded domain
// error that says so, and the model reads it as the tool's result.
func TestChatServerNotConnected(t *testing.T) {
	script := writeScript(t, `{"find_tools":"search memory graph nodes"}`,
		`{"call":"search_nodes","arguments":{"query":"tea"}}`, `{"answer":"The memory server is not connected."}`)
	code, out, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), "--backend", "scripted", "--script", script, "--offer-unconnected", "--once", "what do you remember about tea?")...)
	if code != exitOK {
		t.Fatalf("chat = %d, stderr %s\n%s", code, errOut, out)
	}
	for _, want := range []string{
		"catalog tools have no MCP server connected: a call of one is refused SERVER_NOT_CONNECTED",
		`call memory/search_nodes {"query":"tea"} -> refused DOMAIN_ERROR: the MCP server "memory" is not connected`,
	} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		})
	}
}

// TestChatCardsCoverEveryTool: --cards applies to the finance tools as to
// the demo catalog, so an entry for either is applied, not reported as a
// tool the catalog lacks; a stale entry is reported once.
func TestChatCardsCoverEveryTool(t *testing.T) {
	fin := finance.Tools(nil)
	catalog, err := loadEmbeddedCatalogs()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i, e := range []cards.Entry{
		{Tool: fin[0].ID, Hash: cards.Hash(&fin[0]), Aliases: []string{"what is in my pocket"}},
		{Tool: fin[2].ID, Hash: "sha256:0000000000000000", Aliases: []string{"wire it"}},
		{Tool: finance.Namespace + "/*", Aliases: []string{"the bank"}},
		{Tool: catalog[0].ID, Hash: cards.Hash(&catalog[0]), Aliases: []string{"an alias"}},
		{Tool: catalog[0].Namespace() + "/*", Aliases: []string{"a server"}},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, string(b))
		})
	}
	overlay := filepath.Join(t.TempDir(), "team.cards.jsonl")
	if err := os.WriteFile(overlay, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), "--backend", "scripted", "--cards", overlay, "--once", "what is the balance of ACC-00001?")...)
	if code != exitOK {
		t.Fatalf("chat = %d, stderr %s\n%s", code, errOut, out)
	}
	var warnings []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "warning: ") {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], fin[2].ID+": stale entry not applied") {
		t.Errorf("chat --cards warnings = %q, want only the stale %s", warnings, fin[2].ID)
	}
}

// TestChatCardsOverMCP: --cards applies to the tools a connected server
// lists, which replace the demo catalog's entries of its namespace.
func TestChatCardsOverMCP(t *testing.T) {
	dir := testenv.NodeModule(t, "@modelcontextprotocol/server-memory")
	memory := "memory=env MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl") + " node " + filepath.Join(dir, "dist", "index.js")
	overlay := filepath.Join(t.TempDir(), "team.cards.jsonl")
	if err := os.WriteFile(overlay, []byte(`{"tool":"memory/*","aliases":["the notebook"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, `{"answer":"Noted."}`)
	code, out, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), "--backend", "scripted", "--script", script, "--cards", overlay,
		"--mcp", memory, "--once", "remember that I like tea")...)
	if code != exitOK {
		t.Fatalf("chat = %d, stderr %s\n%s", code, errOut, out)
	}
	if strings.Contains(out, "warning: ") {
		t.Errorf("chat --cards with memory/* over the connected memory server warns:\n%s", out)
	}
}

// TestChatEmbedModel runs chat with discovery's embedding model tier
// against an Ollama-format server: the catalog is embedded once into the
// cache, and the request runs as without it.
func TestChatEmbedModel(t *testing.T) {
	srv := embedtest.New(t, "concept-embed")
	cache := t.TempDir()
	for run := range 2 {
		before := len(srv.Texts())
		code, out, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), "--backend", "scripted", "--embed-model", "concept-embed", "--embed-url", srv.URL,
			"--embed-cache", cache, "--offer-unconnected", "--once", "send 25 dollars from ACC-00001 to ACC-00002")...)
		if code != exitOK || !strings.Contains(out, "Sent 25.00 USD from ACC-00001 to ACC-00002.") {
			t.Fatalf("run %d: chat = %d, %s, stderr %s", run, code, out, errOut)
		}
		// A card's text names its namespace, "name (namespace): summary".
		cards := slices.DeleteFunc(srv.Texts()[before:], func(s string) bool { return !strings.Contains(s, "): ") })
		switch {
		case run == 0 && len(cards) < 100:
			t.Errorf("first run embedded %d cards, want the catalog's 100+", len(cards))
		case run == 1 && len(cards) != 0:
			t.Errorf("second run embedded %d cards, want none (the cache)", len(cards))
		}
	}
}
