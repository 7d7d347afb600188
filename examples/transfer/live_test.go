package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/examples/transfer/internal/agent"
	"github.com/toolgate/toolgate/examples/transfer/internal/chat"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/local"
	"github.com/toolgate/toolgate/llm/ollama"
	"github.com/toolgate/toolgate/llm/openai"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

// recorder is an [http.RoundTripper] that keeps every request body sent to
// the engine.
type recorder struct {
	mu     sync.Mutex
	bodies []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		data, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, string(data))
		r.mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(data))
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...)
}

// TestLiveAgent runs the transfer agent end to end on real engines
// (llama.cpp in grammar mode and in envelope mode through response_format,
// Ollama in envelope mode through format, and the GGUF model in this
// process through llm/local in grammar mode), greedy with a fixed seed. It
// asserts the plumbing, not the model's judgement: the turn ends with an
// answer within the step budget; every reply was usable or repaired within
// the repair budget; every call went through the gateway and has a
// recorded outcome; no request sent to the engine names a tool or scope
// the principal does not hold. Each engine also runs one step under
// [runtime.Options.CallFirst] ("…/call-first"): the constraint has no
// answer branch there, so the step is a call, which goes through the
// gateway and has an outcome, or a find_tools search; that run is not
// asked to finish its turn (a weak model may search again and again).
func TestLiveAgent(t *testing.T) {
	temp, seed := 0.0, int64(1)
	llamaCpp := func(t *testing.T, hc *http.Client) llm.Backend {
		b, err := openai.New("local", &openai.Options{BaseURL: testenv.LlamaCpp(t), APIKey: "none", HTTPClient: hc,
			LegacyMaxTokens: true, Temperature: &temp, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ollamaBackend := func(t *testing.T, hc *http.Client) llm.Backend {
		model := testenv.Ollama(t)
		b, err := ollama.New(model, &ollama.Options{HTTPClient: hc, Temperature: &temp, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// The GGUF model in this process (llm/local): no HTTP, so the
	// recorder sees each request as the backend received it.
	localBackend := func(t *testing.T, hc *http.Client) llm.Backend {
		lib, model := testenv.LocalModel(t)
		b, err := local.New(model, &local.Options{Library: lib, Threads: 2, Temperature: &temp, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return &recordedBackend{b: b, rec: hc.Transport.(*recorder)}
	}
	for _, tc := range []struct {
		name      string
		mode      llm.Mode
		open      func(t *testing.T, hc *http.Client) llm.Backend
		callFirst bool
	}{
		{"llama.cpp/grammar", llm.ModeGrammar, llamaCpp, false},
		{"llama.cpp/envelope", llm.ModeEnvelope, llamaCpp, false},
		{"ollama/envelope", llm.ModeEnvelope, ollamaBackend, false},
		{"llama.cpp/grammar/call-first", llm.ModeGrammar, llamaCpp, true},
		{"llama.cpp/envelope/call-first", llm.ModeEnvelope, llamaCpp, true},
		{"ollama/envelope/call-first", llm.ModeEnvelope, ollamaBackend, true},
		{"local/grammar", llm.ModeGrammar, localBackend, false},
		{"local/grammar/call-first", llm.ModeGrammar, localBackend, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			backend := tc.open(t, &http.Client{Transport: rec})
			liveAgent(t, tc.name, backend, tc.mode, rec, tc.callFirst)
		})
	}
}

// recordedBackend keeps each request an in-process backend receives in
// rec, as the JSON of its messages, tools and constraint with its budget
// as "max_tokens",
// so that liveAgent checks it as it checks a server's request bodies.
type recordedBackend struct {
	b   llm.Backend
	rec *recorder
}

func (r *recordedBackend) Chat(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	data, err := json.Marshal(struct {
		Messages   []llm.Message
		Tools      []llm.ToolSpec
		Constraint llm.Constraint
	}{req.Messages, req.Tools, req.Constraint})
	if err != nil {
		return nil, err
	}
	body := string(data)
	if req.MaxTokens > 0 {
		body = fmt.Sprintf(`{"max_tokens":%d,"request":%s}`, req.MaxTokens, data)
	}
	r.rec.mu.Lock()
	r.rec.bodies = append(r.rec.bodies, body)
	r.rec.mu.Unlock()
	return r.b.Chat(ctx, req)
}

// liveRun is what one end-to-end run recorded; it is written to
// $TOOLGATE_LIVE_REPORT/agent-<name>.json when that is set.
type liveRun struct {
	Name            string
	Steps, Calls    int
	Requests        int // model requests, repairs included
	Repaired        int // steps whose reply needed a repair
	Seconds         float64
	SecondsPerStep  float64
	PromptTokens    int
	CompletionToken int
	Answer          string
}

func liveAgent(t *testing.T, name string, backend llm.Backend, mode llm.Mode, rec *recorder, callFirst bool) {
	catalog, err := chat.DemoCatalog(loadEmbeddedCatalogs, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	var (
		mu     sync.Mutex
		events []runtime.Event
	)
	observe := func(_ context.Context, e runtime.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	maxSteps := 6
	if callFirst {
		maxSteps = 1 // the step CallFirst constrains
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b, err := agent.Open(ctx, t.TempDir(), backend, &agent.Options{Catalog: catalog, Runtime: &runtime.Options{
		Mode: mode, MaxSteps: maxSteps, Observer: observe, CallFirst: callFirst,
		LLM: &llm.Options{Registerer: reg},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	alice := tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"accounts:read", "payments:write"}}
	sess := b.Agent.NewSession(alice, "live-"+strings.ReplaceAll(name, "/", "-"), nil)
	start := time.Now()
	turn, err := sess.Run(ctx, "What is the balance of account ACC-00001?")
	elapsed := time.Since(start)
	if err != nil && strings.Contains(err.Error(), "failed to parse grammar") {
		// See llm/livetest: llama-server refuses the grammar package's GBNF.
		t.Skipf("KNOWN ISSUE, SKIPPED: llama-server cannot parse the grammar package's GBNF: %v", err)
	}
	// Every request carried a token budget and named nothing alice may not
	// use, and every reply cut off at the budget was answered by a repair
	// asking for a shorter one (under tighter bounds: the runtime's
	// constraint has a Tighten hook), whether the turn ended or not.
	bodies := rec.all()
	for i, body := range bodies {
		if !strings.Contains(body, `"max_tokens"`) && !strings.Contains(body, `"num_predict"`) {
			t.Errorf("request %d carries no token budget", i)
		}
		for _, hidden := range []string{"issue_full_refund", "billing:admin"} {
			t.Run(hidden, func(t *testing.T) {
				if strings.Contains(body, hidden) {
					t.Errorf("request %d names %q, which alice may not use", i, hidden)
				}
			})
		}
	}
	rejected := counts(t, reg, "toolgate_llm_rejected_replies_total", "problem")
	shorter := 0
	for _, body := range bodies {
		if strings.Contains(body, "reply again, shorter") {
			shorter++
		}
	}
	if err == nil && shorter < rejected[string(llm.ProblemTruncated)] {
		t.Errorf("%d replies cut off at the budget, %d repairs asking for a shorter one", rejected[string(llm.ProblemTruncated)], shorter)
	}
	// What the model did, step by step, for the log (and a failure's
	// diagnosis).
	for _, e := range events {
		if e.Kind == runtime.EventReply {
			t.Logf("  step %d: %s %.160s", e.Step, e.Response.Action, e.Response.Raw)
		}
	}
	if callFirst && errors.Is(err, runtime.ErrStepBudget) {
		err = nil // one step was asked for, not the whole turn
	}
	if err != nil {
		t.Fatalf("Run: %v (a weak model must still end within %d steps, repairs included; rejected replies by problem: %v)", err, maxSteps, rejected)
	}
	t.Logf("%s: %d steps, %d calls in %v; answer %q", name, turn.Steps, len(turn.Calls), elapsed.Round(time.Millisecond), turn.Answer)

	// Every call went through the gateway and has an outcome: a result, or
	// the gateway's typed refusal.
	calls := 0
	for _, e := range events {
		if e.Kind != runtime.EventCall {
			continue
		}
		calls++
		var ge *gateway.Error
		switch {
		case e.Err == nil && !json.Valid(e.Result):
			t.Errorf("call %s %s: no result and no error", e.Tool, e.Arguments)
		case e.Err != nil && !errors.As(e.Err, &ge):
			t.Errorf("call %s %s: %v is not a gateway outcome", e.Tool, e.Arguments, e.Err)
		}
		t.Logf("  call %s %s -> %s %v", e.Tool, e.Arguments, e.Result, e.Err)
	}
	if calls != len(turn.Calls) {
		t.Errorf("%d call events, %d calls in the turn", calls, len(turn.Calls))
	}
	// Under CallFirst the first step was a call or a search, never an
	// answer: the constraint had no answer branch.
	for _, e := range events {
		if callFirst && e.Kind == runtime.EventReply && e.Step == 1 {
			if a := e.Response.Action; a != llm.ActionCall && a != llm.ActionFindTools {
				t.Errorf("step 1 replied %q under CallFirst, want a call or find_tools", a)
			}
			break
		}
	}

	// Every reply was usable or repaired: Checked counts the outcome of
	// each step's request.
	outcomes := counts(t, reg, "toolgate_llm_requests_total", "outcome")
	if outcomes["ok"]+outcomes["repaired"] != turn.Steps || len(outcomes) > 2 {
		t.Errorf("request outcomes %v for %d steps: want every step ok or repaired", outcomes, turn.Steps)
	}

	// Every step's request was recorded (and checked above).
	if len(bodies) < turn.Steps {
		t.Errorf("%d requests recorded for %d steps", len(bodies), turn.Steps)
	}

	run := liveRun{Name: name, Steps: turn.Steps, Calls: len(turn.Calls), Requests: len(bodies),
		Repaired: outcomes["repaired"], Seconds: elapsed.Seconds(), SecondsPerStep: elapsed.Seconds() / float64(max(1, turn.Steps)),
		PromptTokens: turn.Usage.PromptTokens, CompletionToken: turn.Usage.CompletionTokens, Answer: turn.Answer}
	if dir := os.Getenv("TOOLGATE_LIVE_REPORT"); dir != "" {
		data, _ := json.MarshalIndent(run, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, "agent-"+strings.ReplaceAll(name, "/", "-")+".json"), data, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// counts sums a counter family by one label.
func counts(t *testing.T, reg *prometheus.Registry, family, label string) map[string]int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label {
					out[lp.GetValue()] += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return out
}

// TestLiveFitContext runs a conversation longer than llama-server's window
// (the -c its /props reports) with [runtime.Options.FitContext], counting
// tokens as chat does ([chat.SmallVocabTokens]), greedy with a fixed seed. It
// asserts the plumbing: every turn ends (an answer, or the step budget)
// without the engine refusing a request, the conversation sent never
// starts with a tool result, and the oldest turns were left out on the
// way.
func TestLiveFitContext(t *testing.T) {
	base := testenv.LlamaCpp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	props, err := openai.ProbeLlamaCpp(ctx, base, nil)
	if err != nil || props.ContextSize == 0 {
		t.Fatalf("llama-server's /props: %+v, %v; want its context size", props, err)
	}
	temp, seed := 0.0, int64(1)
	rec := &recorder{}
	backend, err := openai.New("local", &openai.Options{BaseURL: base, APIKey: "none", HTTPClient: &http.Client{Transport: rec},
		LegacyMaxTokens: true, Temperature: &temp, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := chat.DemoCatalog(loadEmbeddedCatalogs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var trimmed []runtime.Event
	b, err := agent.Open(ctx, t.TempDir(), backend, &agent.Options{Catalog: catalog, Runtime: &runtime.Options{
		Mode: llm.ModeGrammar, K: 3, MaxSteps: 2, FitContext: true, ContextTokens: props.ContextSize, CountTokens: chat.SmallVocabTokens,
		Observer: func(_ context.Context, e runtime.Event) {
			if e.Kind == runtime.EventTrimmed {
				trimmed = append(trimmed, e)
			}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	alice := tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"accounts:read", "payments:write"}}
	sess := b.Agent.NewSession(alice, "live-fit", nil)
	note := strings.Repeat("Note from the branch: the customer called about the monthly fee again. ", 12)
	for i := range 5 {
		turn, err := sess.Run(ctx, fmt.Sprintf("%sQuestion %d: what is the balance of account ACC-00001?", note, i+1))
		if err != nil && !errors.Is(err, runtime.ErrStepBudget) {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		t.Logf("turn %d: %d steps, %d calls, %d prompt tokens by the engine's count, answer %.60q", i+1, turn.Steps, len(turn.Calls), turn.Usage.PromptTokens, turn.Answer)
	}
	if len(trimmed) == 0 {
		t.Fatalf("no turn was left out of %d requests: the conversation never outgrew the %d-token window", len(rec.all()), props.ContextSize)
	}
	for _, body := range rec.all() {
		var req struct {
			Messages []struct{ Role, Content string }
		}
		if err := json.Unmarshal([]byte(body), &req); err != nil || len(req.Messages) < 2 {
			t.Fatalf("request body %.200q: %v", body, err)
		}
		if first := req.Messages[1]; first.Role != "user" || strings.HasPrefix(first.Content, "<tool-result") {
			t.Errorf("a request's conversation starts with %s %.60q, want a user's input", first.Role, first.Content)
		}
	}
	last := trimmed[len(trimmed)-1]
	t.Logf("%d requests; the last trim, at step %d: %d messages left out, about %d prompt tokens + %d for the reply",
		len(rec.all()), last.Step, last.Omitted, last.PromptTokens, last.ReplyTokens)
}

// TestLiveChatLocal runs `transfer chat --backend local` on the live GGUF
// model and llama.cpp's library (TOOLGATE_LIVE_LOCAL_MODEL,
// TOOLGATE_LIVE_LIBLLAMA): no server runs, and every token the model
// writes is masked by toolgate's own engine. It asserts the plumbing: the
// program starts the local backend in grammar mode, the turn ends (an
// answer or the step budget) without an error, and the chat says so.
func TestLiveChatLocal(t *testing.T) {
	lib, model := testenv.LocalModel(t)
	code, out, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), "--backend", "local", "--model", model, "--library", lib,
		"--temperature", "0", "--seed", "1", "--once", "What is the balance of ACC-00001?")...)
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	if code != 0 {
		t.Fatalf("chat --backend local exited %d", code)
	}
	if !strings.Contains(out, "backend local (local "+filepath.Base(model)+", grammar mode)") {
		t.Errorf("the banner does not name the local backend in grammar mode")
	}
}
