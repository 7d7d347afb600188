package ollama_test

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
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
	"github.com/toolgate/toolgate/llm/ollama"
)

// fakeOllama is an httptest server speaking Ollama's /api/chat (NDJSON
// when streaming, one JSON object otherwise) and /api/embed. It records
// every request body.
type fakeOllama struct{ *backendtest.Fake }

func newFake(t *testing.T, reply backendtest.Reply) fakeOllama {
	return fakeOllama{backendtest.NewFake(t, reply, backendtest.Wire{
		ChatPath: "/api/chat",
		Chat: func(w http.ResponseWriter, body map[string]any, reply backendtest.Reply) {
			stream, _ := body["stream"].(bool)
			writeChat(w, reply, stream)
		},
		Routes:  map[string]func(http.ResponseWriter, map[string]any){"/api/embed": embed},
		Error:   apiError,
		BadJSON: "bad json",
	})}
}

func (f fakeOllama) backend(t *testing.T, opts *ollama.Options) *ollama.Backend {
	return backendtest.NewBackend(t, ollama.New, "qwen3:8b", opts, func(o *ollama.Options) { o.BaseURL = f.URL })
}

// apiError writes an error as Ollama does: {"error":msg}.
func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// writeChat writes reply in Ollama's exact wire format.
func writeChat(w http.ResponseWriter, reply backendtest.Reply, stream bool) {
	doneReason := "stop"
	if reply.Finish == "length" {
		doneReason = "length"
	}
	var calls []map[string]any
	for _, c := range reply.Calls {
		calls = append(calls, map[string]any{"function": map[string]any{"name": c.Name, "arguments": json.RawMessage(c.Arguments)}})
	}
	final := map[string]any{
		"model": "qwen3:8b", "created_at": "2025-07-07T20:22:19.19314Z",
		"done": true, "done_reason": doneReason,
		"total_duration": 182242375, "load_duration": 41295167,
		"prompt_eval_count": 169, "prompt_eval_duration": 24573166,
		"eval_count": 15, "eval_duration": 115959084,
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		msg := map[string]any{"role": "assistant", "content": reply.Content}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		final["message"] = msg
		json.NewEncoder(w).Encode(final)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	for _, piece := range backendtest.Split(reply.Content, 3) {
		enc.Encode(map[string]any{"model": "qwen3:8b", "created_at": "2025-07-07T20:22:19.184789Z",
			"message": map[string]any{"role": "assistant", "content": piece}, "done": false})
		w.(http.Flusher).Flush()
	}
	if calls != nil {
		enc.Encode(map[string]any{"model": "qwen3:8b", "created_at": "2025-07-07T20:22:19.184789Z",
			"message": map[string]any{"role": "assistant", "content": "", "tool_calls": calls}, "done": false})
	}
	final["message"] = map[string]any{"role": "assistant", "content": ""}
	enc.Encode(final)
}

func embed(w http.ResponseWriter, body map[string]any) {
	inputs, _ := body["input"].([]any)
	var vecs [][]float32
	for i := range inputs {
		vecs = append(vecs, []float32{float32(i), 0.5, -1})
	}
	json.NewEncoder(w).Encode(map[string]any{"model": body["model"], "embeddings": vecs,
		"total_duration": 14143917, "load_duration": 1019500, "prompt_eval_count": 8})
}

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Harness{
		Modes: []llm.Mode{llm.ModeEnvelope, llm.ModeNative},
		New: func(t *testing.T, r backendtest.Reply) llm.Backend {
			return newFake(t, r).backend(t, nil)
		},
	})
}

func TestEnvelopeRequestBody(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			f := newFake(t, backendtest.Reply{Content: `{"action":"answer","text":"ok"}`})
			req := backendtest.Request(llm.ModeEnvelope)
			raw, body := f.Send(t, f.backend(t, nil), req, stream)
			if !backendtest.JSONEqual(t, body["format"], backendtest.EnvelopeSchema) {
				t.Errorf("format = %v, want the envelope schema", body["format"])
			}
			if _, ok := body["tools"]; ok {
				t.Errorf("envelope request has tools: %v", body["tools"])
			}
			if body["stream"] != stream {
				t.Errorf("stream = %v, want %v", body["stream"], stream)
			}
			if body["model"] != "qwen3:8b" {
				t.Errorf("model = %v", body["model"])
			}
			opts, _ := body["options"].(map[string]any)
			if opts["num_predict"] != 256.0 || opts["temperature"] != 0.0 {
				t.Errorf("options = %v, want num_predict 256, temperature 0", opts)
			}
			// The format constraint ends the reply; the model's own stop
			// strings are cleared so that none can cut it inside a string.
			if stop, ok := opts["stop"].([]any); !ok || len(stop) != 0 {
				t.Errorf("options.stop = %#v, want [] (the model's stop sequences cleared)", opts["stop"])
			}
			msgs := body["messages"].([]any)
			if len(msgs) != 2 {
				t.Fatalf("%d messages, want 2 (the system prompt merged)", len(msgs))
			}
			sys := msgs[0].(map[string]any)
			content := sys["content"].(string)
			if sys["role"] != "system" || !strings.HasPrefix(content, "You are a careful banking assistant.") {
				t.Errorf("system message = %v", sys)
			}
			for _, want := range []string{`"name":"get_balance"`, `"name":"transfer_funds"`, `"additionalProperties":false`, `"pattern":"^ACC-[0-9]{5}$"`, `"action":"find_tools"`} {
				t.Run(want, func(t *testing.T) {
					if !strings.Contains(content, want) {
						t.Errorf("system prompt lacks %s:\n%s", want, content)
					}
				})
			}
			if bytes.Contains(raw, []byte(backendtest.Unauthorized)) {
				t.Errorf("request names the unauthorized tool:\n%s", raw)
			}
		})
	}
}

func TestNativeRequestBody(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: "hi"})
	req := backendtest.Request(llm.ModeNative)
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}},
		llm.Message{Role: llm.RoleTool, Name: "get_balance", ToolCallID: "c1", Content: `{"balance":"1000.00"}`})
	raw, body := f.Send(t, f.backend(t, nil), req, false)
	if _, ok := body["format"]; ok {
		t.Errorf("native request has format %v", body["format"])
	}
	if opts, _ := body["options"].(map[string]any); opts["stop"] != nil {
		t.Errorf("native request sets options.stop = %v, want the model's own", opts["stop"])
	}
	tools, _ := body["tools"].([]any)
	var names []string
	for _, tl := range tools {
		fn := tl.(map[string]any)["function"].(map[string]any)
		names = append(names, fn["name"].(string))
		if tl.(map[string]any)["type"] != "function" {
			t.Errorf("tool type = %v", tl.(map[string]any)["type"])
		}
		if fn["parameters"].(map[string]any)["properties"] == nil {
			t.Errorf("tool %s has no parameter properties", fn["name"])
		}
	}
	if !reflect.DeepEqual(names, []string{"get_balance", "transfer_funds"}) {
		t.Errorf("tools = %v, want exactly the shortlist", names)
	}
	msgs := body["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want 4", len(msgs))
	}
	if sys := msgs[0].(map[string]any)["content"].(string); sys != "You are a careful banking assistant." {
		t.Errorf("native mode changed the system prompt: %q", sys)
	}
	tc := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if tc["name"] != "get_balance" || !backendtest.JSONEqual(t, tc["arguments"], `{"account":"ACC-00001"}`) {
		t.Errorf("assistant tool call = %v", tc)
	}
	if tm := msgs[3].(map[string]any); tm["role"] != "tool" || tm["tool_name"] != "get_balance" {
		t.Errorf("tool message = %v", tm)
	}
	if bytes.Contains(raw, []byte(backendtest.Unauthorized)) {
		t.Errorf("request names the unauthorized tool:\n%s", raw)
	}
}

func TestUsage(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: `{"action":"answer","text":"ok"}`})
	resp, err := f.backend(t, nil).Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
	if err != nil {
		t.Fatal(err)
	}
	u := resp.Usage
	if u.PromptTokens != 169 || u.CompletionTokens != 15 {
		t.Errorf("Usage = %+v, want prompt 169, completion 15 from prompt_eval_count and eval_count", u)
	}
	if u.ToolDefinitionTokens < 100 || u.ToolDefinitionTokens > 1000 {
		t.Errorf("ToolDefinitionTokens = %d, want between 100 and 1000 for two tools and the envelope schema", u.ToolDefinitionTokens)
	}
}

func TestOllamaHostEnvironment(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: `{"action":"answer","text":"ok"}`})
	t.Setenv("OLLAMA_HOST", f.URL)
	b, err := ollama.New("qwen3:8b", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope)); err != nil {
		t.Fatal(err)
	}
	if n := len(f.Requests()); n != 1 {
		t.Errorf("the server at OLLAMA_HOST got %d requests, want 1", n)
	}
}

func TestGrammarModeIsRejected(t *testing.T) {
	f := newFake(t, backendtest.Reply{})
	_, err := f.backend(t, nil).Chat(context.Background(), backendtest.Request(llm.ModeGrammar))
	var ce *llm.ConstraintError
	if !errors.As(err, &ce) || !errors.Is(err, llm.ErrConstraintRejected) {
		t.Fatalf("Chat(ModeGrammar) error = %v, want *llm.ConstraintError", err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

// oldServerFormatError is what an Ollama without JSON-schema `format`
// answers when format is an object.
const oldServerFormatError = `{"error":"json: cannot unmarshal object into Go struct field ChatRequest.format of type string"}`

func rejectFormat(i int, w http.ResponseWriter, body map[string]any) bool {
	if _, ok := body["format"]; ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, oldServerFormatError)
		return true
	}
	return false
}

func TestFormatRejected(t *testing.T) {
	f := newFake(t, backendtest.Reply{})
	f.Handle = rejectFormat
	_, err := backendtest.CheckedChat(t, f.backend(t, nil), &llm.Options{Logger: slog.New(slog.DiscardHandler)}, backendtest.Request(llm.ModeEnvelope))
	var ce *llm.ConstraintError
	if !errors.As(err, &ce) {
		t.Fatalf("Chat error = %v, want *llm.ConstraintError", err)
	}
	if !strings.Contains(ce.Message, "format") || ce.Mode != llm.ModeEnvelope {
		t.Errorf("ConstraintError = %+v", ce)
	}
	if n := len(f.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: no silent retry without the constraint", n)
	}
}

func TestFormatRejectedDowngrade(t *testing.T) {
	f := newFake(t, backendtest.Reply{Calls: []llm.ToolCall{{Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}})
	f.Handle = rejectFormat
	var logs bytes.Buffer
	var validated []string
	resp, err := backendtest.CheckedChat(t, f.backend(t, nil), &llm.Options{
		AllowDowngrade: true,
		Validate: func(_ context.Context, tool string, args json.RawMessage) error {
			validated = append(validated, tool)
			return nil
		},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	}, backendtest.Request(llm.ModeEnvelope))
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Downgraded || !strings.Contains(resp.DowngradeReason, "format") {
		t.Errorf("Downgraded, DowngradeReason = %v, %q; want true and the server's reason", resp.Downgraded, resp.DowngradeReason)
	}
	if resp.Action != llm.ActionCall || resp.Calls[0].Name != "get_balance" {
		t.Errorf("reply = %+v", resp)
	}
	if !reflect.DeepEqual(validated, []string{"get_balance"}) {
		t.Errorf("validated %v, want the downgraded call validated", validated)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "downgrading") {
		t.Errorf("downgrade not logged as a warning: %s", logs.String())
	}
	reqs := f.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	second := backendtest.DecodeBody(t, reqs[1])
	if _, ok := second["format"]; ok {
		t.Error("the downgraded request still has format")
	}
	if tools, _ := second["tools"].([]any); len(tools) != 2 {
		t.Errorf("the downgraded request has %d tools, want the 2 shortlisted", len(tools))
	}
}

func TestRetryAfter(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: backendtest.Answer})
	f.FailFirst(1, http.StatusTooManyRequests, "7", "too many requests")
	backendtest.AnswerAfterRetries(t, f.backend(t, nil), false, []time.Duration{7 * time.Second})
}

func TestServerErrorsExhaustRetries(t *testing.T) {
	f := newFake(t, backendtest.Reply{})
	f.FailFirst(-1, http.StatusInternalServerError, "", "model runner crashed")
	var slept []time.Duration
	_, err := backendtest.CheckedChat(t, f.backend(t, nil), &llm.Options{
		MaxRetries: 2,
		BaseDelay:  time.Second,
		Jitter:     func() float64 { return 0 },
		Sleep:      func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return nil },
	}, backendtest.Request(llm.ModeEnvelope))
	var se *llm.StatusError
	if !errors.As(err, &se) || se.StatusCode != 500 || se.Message != "model runner crashed" {
		t.Fatalf("Chat error = %v, want *llm.StatusError 500", err)
	}
	if n := len(f.Requests()); n != 3 {
		t.Errorf("%d requests, want 3 (1 + MaxRetries 2)", n)
	}
	// Equal jitter with Jitter 0: half of 1s, then half of 2s.
	if want := []time.Duration{500 * time.Millisecond, time.Second}; !reflect.DeepEqual(slept, want) {
		t.Errorf("slept %v, want %v", slept, want)
	}
}

func TestCancelDuringStream(t *testing.T) {
	arrived := make(chan struct{})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"model":"m","created_at":"2025-07-07T20:22:19Z","message":{"role":"assistant","content":"{\"action\""},"done":false}`+"\n")
		w.(http.Flusher).Flush()
		close(arrived)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	b, err := ollama.New("m", &ollama.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	req := backendtest.Request(llm.ModeEnvelope)
	req.OnDelta = func(string) {
		<-arrived
		cancel()
	}
	_, err = b.Chat(ctx, req)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Chat error = %v, want context.Canceled", err)
	}
}

func TestEmbed(t *testing.T) {
	f := newFake(t, backendtest.Reply{})
	b := f.backend(t, &ollama.Options{EmbedModel: "nomic-embed-text"})
	vecs, err := b.Embed(context.Background(), []string{"check balance", "send money"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{0, 0.5, -1}, {1, 0.5, -1}}
	if !reflect.DeepEqual(vecs, want) {
		t.Errorf("Embed = %v, want %v", vecs, want)
	}
	body := backendtest.DecodeBody(t, f.Requests()[0])
	if body["model"] != "nomic-embed-text" || !backendtest.JSONEqual(t, body["input"], `["check balance","send money"]`) {
		t.Errorf("embed request = %v", body)
	}
	var nomodel *ollama.Backend = f.backend(t, nil)
	if _, err := nomodel.Embed(context.Background(), []string{"x"}); err == nil {
		t.Error("Embed without EmbedModel succeeded")
	}
}

func TestNewOptions(t *testing.T) {
	tests := []struct {
		model string
		opts  *ollama.Options
	}{
		{"", nil},
		{"m", &ollama.Options{BaseURL: "localhost:11434"}},
		{"m", &ollama.Options{NumCtx: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			if _, err := ollama.New(tt.model, tt.opts); err == nil {
				t.Errorf("New(%q, %+v) succeeded, want an error", tt.model, tt.opts)
			}
		})
	}
}

func TestStreamingStatusErrors(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: backendtest.Answer})
	f.FailFirst(1, http.StatusServiceUnavailable, "4", "server busy, please try again.  maximum pending requests exceeded")
	backendtest.AnswerAfterRetries(t, f.backend(t, nil), true, []time.Duration{4 * time.Second})
}

func TestMidStreamError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"model":"m","created_at":"2025-07-07T20:22:19Z","message":{"role":"assistant","content":"{\"act"},"done":false}`+"\n")
		io.WriteString(w, `{"error":"an error was encountered while running the model: unexpected EOF"}`+"\n")
	}))
	defer srv.Close()
	b, _ := ollama.New("m", &ollama.Options{BaseURL: srv.URL})
	req := backendtest.Request(llm.ModeEnvelope)
	req.OnDelta = func(string) {}
	_, err := b.Chat(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Fatalf("Chat error = %v, want the server's mid-stream error", err)
	}
	var oe *llm.OutputError
	if errors.As(err, &oe) {
		t.Errorf("a broken stream is an OutputError: %v", err)
	}
}

// TestStoppedWithoutDone: Ollama's server answers a generation it stopped
// itself (a token repeated more than 30 times) with the text so far and
// "done": false, streaming or not. That is a truncated reply, repaired as
// one, not a transport error.
func TestStoppedWithoutDone(t *testing.T) {
	const partial = `{"action":"answer","text":"main main main main`
	for i, stream := range []bool{false, true} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				msg, _ := json.Marshal(map[string]any{"model": "m", "created_at": "2025-07-07T20:22:19Z",
					"message": map[string]any{"role": "assistant", "content": partial}, "done": false})
				w.Write(append(msg, '\n'))
			}))
			b, _ := ollama.New("m", &ollama.Options{BaseURL: srv.URL})
			req := backendtest.Request(llm.ModeEnvelope)
			if stream {
				req.OnDelta = func(string) {}
			}
			resp, err := b.Chat(context.Background(), req)
			srv.Close()
			var oe *llm.OutputError
			if !errors.As(err, &oe) || oe.Problem != llm.ProblemTruncated {
				t.Fatalf("stream %v: Chat error = %v, want a truncated *llm.OutputError", stream, err)
			}
			if oe.Raw != partial || resp == nil || resp.Raw != partial || resp.Action != "" {
				t.Errorf("stream %v: Raw %q, response %+v: want the partial text kept for the audit and nothing to act on", stream, oe.Raw, resp)
			}
		})
	}
}

func TestRepairNeverSendsTheUnknownTool(t *testing.T) {
	backendtest.RunRepair(t, []llm.Mode{llm.ModeEnvelope, llm.ModeNative}, func(t *testing.T) (*backendtest.Fake, llm.Backend) {
		f := newFake(t, backendtest.Reply{})
		return f.Fake, f.backend(t, nil)
	})
}

// Ollama's API has no tool choice: RequireCall is enforced on the reply
// (backendtest's "native answer where a call is required").
func TestToolChoice(t *testing.T) {
	backendtest.RunToolChoice(t, func(t *testing.T, req *llm.Request) map[string]any {
		f := newFake(t, backendtest.Reply{Calls: []llm.ToolCall{{ID: "call_1", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}, Finish: "tool_calls"})
		_, body := f.Send(t, f.backend(t, nil), req, false)
		return body
	}, "", "")
}

func TestSamplingOptions(t *testing.T) {
	backendtest.RunSampling(t, llm.ModeEnvelope, func(t *testing.T, temp *float64, seed *int64, req *llm.Request) map[string]any {
		f := newFake(t, backendtest.Reply{Content: backendtest.Answer})
		_, body := f.Send(t, f.backend(t, &ollama.Options{Temperature: temp, Seed: seed}), req, false)
		opts, _ := body["options"].(map[string]any)
		return opts
	})
	if _, err := ollama.New("m", &ollama.Options{Temperature: new(-1.0)}); err == nil || !strings.Contains(err.Error(), "Options.Temperature") {
		t.Errorf("New with Temperature -1 = %v, want an error naming Options.Temperature", err)
	}
}

// TestStreamIdle: a stream that sends nothing, or headers and then
// nothing, fails after Options.StreamIdleTimeout with an [*llm.IdleError]
// (retried by [llm.Checked]); before, only the caller's context ended it.
func TestStreamIdle(t *testing.T) {
	backendtest.RunStreamIdle(t, []backendtest.Silence{{Name: "nothing"}, {Name: "headers only", ContentType: "application/x-ndjson"}},
		func(t *testing.T, url string, idle time.Duration) llm.Backend {
			return backendtest.NewBackend(t, ollama.New, "m", &ollama.Options{StreamIdleTimeout: idle}, func(o *ollama.Options) { o.BaseURL = url })
		})
}
