package openai_test

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
	"github.com/toolgate/toolgate/llm/openai"
)

// fakeOpenAI is an httptest server speaking Chat Completions
// (/v1/chat/completions, JSON or SSE) and /v1/embeddings exactly as the
// OpenAI API does. It records every request.
type fakeOpenAI struct{ *backendtest.Fake }

func newFake(t *testing.T, reply backendtest.Reply) fakeOpenAI {
	return fakeOpenAI{backendtest.NewFake(t, reply, backendtest.Wire{
		ChatPath: "/v1/chat/completions",
		Chat:     writeChat,
		Routes:   map[string]func(http.ResponseWriter, map[string]any){"/v1/embeddings": embeddings},
		Error:    apiError,
		BadJSON:  "We could not parse the JSON body of your request.",
	})}
}

func (f fakeOpenAI) backend(t *testing.T, opts *openai.Options) *openai.Backend {
	return backendtest.NewBackend(t, openai.New, "gpt-4.1-mini", opts, func(o *openai.Options) {
		o.BaseURL, o.APIKey = f.URL+"/v1", "sk-test"
	})
}

// writeChat writes reply as Chat Completions does: JSON, or SSE when the
// request streams; wrapped as {"envelope":...} when the request asks for
// the wrapped envelope schema.
func writeChat(w http.ResponseWriter, body map[string]any, reply backendtest.Reply) {
	if _, ok := body["response_format"]; ok {
		reply.Content = backendtest.WireContent(reply.Content)
	}
	if stream, _ := body["stream"].(bool); stream {
		writeSSE(w, reply)
		return
	}
	writeCompletion(w, reply)
}

func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
}

func wireCalls(calls []llm.ToolCall) []map[string]any {
	var out []map[string]any
	for _, c := range calls {
		out = append(out, map[string]any{"id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(c.Arguments)}})
	}
	return out
}

func writeCompletion(w http.ResponseWriter, reply backendtest.Reply) {
	msg := map[string]any{"role": "assistant", "content": reply.Content, "refusal": nil, "annotations": []any{}}
	if reply.Content == "" {
		msg["content"] = nil
	}
	if len(reply.Calls) > 0 {
		msg["tool_calls"] = wireCalls(reply.Calls)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion", "created": 1741570283,
		"model":   "gpt-4.1-mini-2025-04-14",
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": reply.Finish}},
		"usage": map[string]any{"prompt_tokens": 412, "completion_tokens": 23, "total_tokens": 435,
			"prompt_tokens_details":     map[string]any{"cached_tokens": 0, "audio_tokens": 0},
			"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
		"service_tier": "default", "system_fingerprint": "fp_fc9f1d7035",
	})
}

func writeSSE(w http.ResponseWriter, reply backendtest.Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	chunk := func(choices []any, usage any) {
		data, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741570283,
			"model": "gpt-4.1-mini-2025-04-14", "system_fingerprint": "fp_fc9f1d7035",
			"choices": choices, "usage": usage,
		})
		fmt.Fprintf(w, "data: %s\n\n", data)
		w.(http.Flusher).Flush()
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "logprobs": nil, "finish_reason": finish}}
	}
	chunk(delta(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil), nil)
	for _, piece := range backendtest.Split(reply.Content, 3) {
		chunk(delta(map[string]any{"content": piece}, nil), nil)
	}
	for i, c := range reply.Calls {
		chunk(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil), nil)
		for _, piece := range backendtest.Split(string(c.Arguments), 2) {
			chunk(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": piece}}}}, nil), nil)
		}
	}
	chunk(delta(map[string]any{}, reply.Finish), nil)
	chunk([]any{}, map[string]any{"prompt_tokens": 412, "completion_tokens": 23, "total_tokens": 435})
	io.WriteString(w, "data: [DONE]\n\n")
}

func embeddings(w http.ResponseWriter, body map[string]any) {
	inputs, _ := body["input"].([]any)
	var data []any
	// Reverse order: clients must place vectors by index.
	for i := len(inputs) - 1; i >= 0; i-- {
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": []float64{float64(i), 0.25, -1}})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": body["model"],
		"usage": map[string]any{"prompt_tokens": 8, "total_tokens": 8}})
}

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Harness{
		Modes:        []llm.Mode{llm.ModeEnvelope, llm.ModeGrammar, llm.ModeNative},
		RawArguments: true,
		WrapEnvelope: true,
		New: func(t *testing.T, r backendtest.Reply) llm.Backend {
			return newFake(t, r).backend(t, nil)
		},
	})
}

func compact(s string) string {
	var b bytes.Buffer
	json.Compact(&b, []byte(s))
	return b.String()
}

func TestRequestBodies(t *testing.T) {
	for _, mode := range []llm.Mode{llm.ModeEnvelope, llm.ModeGrammar, llm.ModeNative} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", mode, stream), func(t *testing.T) {
				f := newFake(t, backendtest.Reply{Content: `{"action":"answer","text":"ok"}`, Finish: "stop"})
				req := backendtest.Request(mode)
				raw, body := f.Send(t, f.backend(t, nil), req, stream)
				checkCommon(t, body, stream)
				switch mode {
				case llm.ModeNative:
					checkNative(t, raw, body)
				case llm.ModeEnvelope:
					checkEnvelope(t, body)
				case llm.ModeGrammar:
					if body["grammar"] != backendtest.GBNF {
						t.Errorf("grammar = %v, want the GBNF verbatim", body["grammar"])
					}
					checkAbsent(t, body, "grammar", "response_format", "tools", "parallel_tool_calls")
					checkToolPrompt(t, body)
				}
				if bytes.Contains(raw, []byte(backendtest.Unauthorized)) {
					t.Errorf("request names the unauthorized tool:\n%s", raw)
				}
				if h := f.Headers()[0].Get("Authorization"); h != "Bearer sk-test" {
					t.Errorf("Authorization = %q", h)
				}
			})
		}
	}
}

// checkAbsent checks, one subtest per key, that a mode request's body
// has none of keys: the fields of the other modes.
func checkAbsent(t *testing.T, body map[string]any, mode string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		t.Run(k, func(t *testing.T) {
			if _, ok := body[k]; ok {
				t.Errorf("%s request has %s", mode, k)
			}
		})
	}
}

func checkCommon(t *testing.T, body map[string]any, stream bool) {
	t.Helper()
	if body["model"] != "gpt-4.1-mini" {
		t.Errorf("model = %v", body["model"])
	}
	if body["max_completion_tokens"] != 256.0 {
		t.Errorf("max_completion_tokens = %v, want 256", body["max_completion_tokens"])
	}
	if body["temperature"] != 0.0 {
		t.Errorf("temperature = %v, want 0", body["temperature"])
	}
	if stream {
		if body["stream"] != true || !backendtest.JSONEqual(t, body["stream_options"], `{"include_usage":true}`) {
			t.Errorf("stream, stream_options = %v, %v", body["stream"], body["stream_options"])
		}
	} else if _, ok := body["stream"]; ok {
		t.Errorf("non-streaming request has stream = %v", body["stream"])
	}
}

func checkNative(t *testing.T, raw []byte, body map[string]any) {
	t.Helper()
	if body["parallel_tool_calls"] != false {
		t.Errorf("parallel_tool_calls = %v, want false", body["parallel_tool_calls"])
	}
	checkAbsent(t, body, "native", "response_format", "grammar")
	tools, _ := body["tools"].([]any)
	shortlist := backendtest.Shortlist()
	if len(tools) != len(shortlist) {
		t.Fatalf("%d tools, want the %d shortlisted", len(tools), len(shortlist))
	}
	for i, tl := range tools {
		fn := tl.(map[string]any)["function"].(map[string]any)
		if tl.(map[string]any)["type"] != "function" || fn["name"] != shortlist[i].Name || fn["strict"] != true {
			t.Errorf("tools[%d] = %v, want function %s with strict: true", i, tl, shortlist[i].Name)
		}
		if !backendtest.JSONEqual(t, fn["parameters"], string(shortlist[i].StrictParameters)) {
			t.Errorf("tools[%d].parameters = %v, want StrictParameters", i, fn["parameters"])
		}
		if fn["parameters"].(map[string]any)["additionalProperties"] != false {
			t.Errorf("tools[%d] lost additionalProperties: false", i)
		}
		// Key order kept: strict decoding emits properties in schema order.
		if !bytes.Contains(raw, []byte(compact(string(shortlist[i].StrictParameters)))) {
			t.Errorf("tools[%d].parameters not sent verbatim", i)
		}
	}
	if sys := body["messages"].([]any)[0].(map[string]any)["content"]; sys != "You are a careful banking assistant." {
		t.Errorf("native mode changed the system prompt: %v", sys)
	}
}

func checkEnvelope(t *testing.T, body map[string]any) {
	t.Helper()
	rf, _ := body["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["strict"] != true || js["name"] != "turn_envelope" {
		t.Errorf("response_format = %v, want json_schema, strict, turn_envelope", rf)
	}
	// The envelope schema's root is a union; OpenAI strict wants an object.
	wrapped := `{"type":"object","properties":{"envelope":` + backendtest.EnvelopeSchema + `},"required":["envelope"],"additionalProperties":false}`
	if !backendtest.JSONEqual(t, js["schema"], wrapped) {
		t.Errorf("response_format schema = %v, want the envelope schema wrapped in a root object", js["schema"])
	}
	checkAbsent(t, body, "envelope", "tools", "grammar", "parallel_tool_calls")
	checkToolPrompt(t, body)
}

func checkToolPrompt(t *testing.T, body map[string]any) {
	t.Helper()
	msgs := body["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want 2", len(msgs))
	}
	sys := msgs[0].(map[string]any)
	content, _ := sys["content"].(string)
	if sys["role"] != "system" || !strings.HasPrefix(content, "You are a careful banking assistant.") {
		t.Errorf("system message = %v", sys)
	}
	for _, want := range []string{`"name":"get_balance"`, `"name":"transfer_funds"`, `"additionalProperties":false`} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(content, want) {
				t.Errorf("system prompt lacks %s", want)
			}
		})
	}
}

func TestConversationMessages(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: "done", Finish: "stop"})
	req := backendtest.Request(llm.ModeNative)
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_9", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_9", Name: "get_balance", Content: `{"balance":"1000.00"}`})
	_, body := f.Send(t, f.backend(t, nil), req, false)
	msgs := body["messages"].([]any)
	want := `[{"role":"system","content":"You are a careful banking assistant."},
		{"role":"user","content":"What is the balance of ACC-00001?"},
		{"role":"assistant","tool_calls":[{"id":"call_9","type":"function","function":{"name":"get_balance","arguments":"{\"account\":\"ACC-00001\"}"}}]},
		{"role":"tool","tool_call_id":"call_9","content":"{\"balance\":\"1000.00\"}"}]`
	if !backendtest.JSONEqual(t, msgs, want) {
		got, _ := json.Marshal(msgs)
		t.Errorf("messages = %s\nwant %s", got, want)
	}
}

func TestUsage(t *testing.T) {
	for i, stream := range []bool{false, true} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			f := newFake(t, backendtest.Reply{Content: `{"action":"answer","text":"ok"}`, Finish: "stop"})
			req := backendtest.Request(llm.ModeEnvelope)
			if stream {
				req.OnDelta = func(string) {}
			}
			resp, err := f.backend(t, nil).Chat(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if u := resp.Usage; u.PromptTokens != 412 || u.CompletionTokens != 23 || u.ToolDefinitionTokens < 100 {
				t.Errorf("stream=%v: Usage = %+v, want prompt 412, completion 23, tool definitions > 100", stream, u)
			}
		})
	}
}

func TestEnvironment(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: `{"action":"answer","text":"ok"}`, Finish: "stop"})
	t.Setenv("OPENAI_BASE_URL", f.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	b, err := openai.New("gpt-4.1-mini", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope)); err != nil {
		t.Fatal(err)
	}
	if len(f.Headers()) != 1 || f.Headers()[0].Get("Authorization") != "Bearer sk-from-env" {
		t.Errorf("requests %d, Authorization %q; want 1 with the key from OPENAI_API_KEY", len(f.Headers()), f.Headers())
	}
}

func TestConstraintRejected(t *testing.T) {
	tests := []struct {
		mode llm.Mode
		msg  string
	}{
		{llm.ModeEnvelope, "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."},
		{llm.ModeGrammar, "Unrecognized request argument supplied: grammar"},
		{llm.ModeNative, "Invalid schema for function 'get_balance': strict mode is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			f := newFake(t, backendtest.Reply{})
			f.FailFirst(-1, http.StatusBadRequest, "", tt.msg)
			_, err := backendtest.CheckedChat(t, f.backend(t, nil), &llm.Options{Logger: slog.New(slog.DiscardHandler)}, backendtest.Request(tt.mode))
			var ce *llm.ConstraintError
			if !errors.As(err, &ce) || ce.Message != tt.msg || ce.Mode != tt.mode {
				t.Fatalf("Chat error = %v, want *llm.ConstraintError with the server's message", err)
			}
			if n := len(f.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestDowngrade(t *testing.T) {
	f := newFake(t, backendtest.Reply{Calls: []llm.ToolCall{{ID: "call_1", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}, Finish: "tool_calls"})
	f.Handle = func(i int, w http.ResponseWriter, body map[string]any) bool {
		if _, ok := body["response_format"]; ok {
			apiError(w, http.StatusBadRequest, "response_format json_schema is not supported")
			return true
		}
		return false
	}
	var logs bytes.Buffer
	resp, err := backendtest.CheckedChat(t, f.backend(t, nil), &llm.Options{
		AllowDowngrade: true,
		Validate:       func(context.Context, string, json.RawMessage) error { return nil },
		Logger:         slog.New(slog.NewTextHandler(&logs, nil)),
	}, backendtest.Request(llm.ModeEnvelope))
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Downgraded || resp.Action != llm.ActionCall {
		t.Errorf("Downgraded, Action = %v, %q", resp.Downgraded, resp.Action)
	}
	if !strings.Contains(logs.String(), "downgrading") {
		t.Errorf("downgrade not logged: %s", logs.String())
	}
	second := backendtest.DecodeBody(t, f.Requests()[1])
	tools := second["tools"].([]any)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	if fn["strict"] != false || !backendtest.JSONEqual(t, fn["parameters"], string(backendtest.Shortlist()[0].Parameters)) {
		t.Errorf("downgraded tool = %v, want strict false with the full Parameters", fn)
	}
}

func TestStrictParametersRequired(t *testing.T) {
	f := newFake(t, backendtest.Reply{})
	req := backendtest.Request(llm.ModeNative)
	req.Tools[1].StrictParameters = nil
	_, err := f.backend(t, nil).Chat(context.Background(), req)
	if !errors.Is(err, llm.ErrInvalidRequest) || !strings.Contains(err.Error(), "transfer_funds") {
		t.Fatalf("Chat error = %v, want ErrInvalidRequest naming transfer_funds", err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none: never send a non-strict tool silently", n)
	}
}

func TestRetries(t *testing.T) {
	t.Run("429 Retry-After then success", func(t *testing.T) {
		f := newFake(t, backendtest.Reply{Content: backendtest.Answer, Finish: "stop"})
		f.FailFirst(2, http.StatusTooManyRequests, "2", "Rate limit reached for gpt-4.1-mini")
		backendtest.AnswerAfterRetries(t, f.backend(t, nil), false, []time.Duration{2 * time.Second, 2 * time.Second})
	})
	t.Run("Retry-After beyond MaxDelay", func(t *testing.T) {
		f := newFake(t, backendtest.Reply{})
		f.FailFirst(-1, http.StatusTooManyRequests, "3600", "quota")
		cb, _ := llm.Checked(f.backend(t, nil), &llm.Options{
			Sleep: func(context.Context, time.Duration) error { t.Error("slept"); return nil },
		})
		_, err := cb.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
		var se *llm.StatusError
		if !errors.As(err, &se) || se.StatusCode != 429 || se.RetryAfter != time.Hour {
			t.Fatalf("Chat error = %v, want *llm.StatusError 429 with RetryAfter 1h", err)
		}
	})
	t.Run("500s exhausted", func(t *testing.T) {
		f := newFake(t, backendtest.Reply{})
		f.FailFirst(-1, http.StatusBadGateway, "", "upstream")
		var slept []time.Duration
		cb, _ := llm.Checked(f.backend(t, nil), &llm.Options{
			BaseDelay: 100 * time.Millisecond,
			Jitter:    func() float64 { return 0.5 },
			Sleep:     func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return nil },
		})
		_, err := cb.Chat(context.Background(), backendtest.Request(llm.ModeNative))
		var se *llm.StatusError
		if !errors.As(err, &se) || se.StatusCode != 502 {
			t.Fatalf("Chat error = %v, want *llm.StatusError 502", err)
		}
		if n := len(f.Requests()); n != 4 {
			t.Errorf("%d requests, want 4 (1 + default MaxRetries 3)", n)
		}
		want := []time.Duration{75 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond}
		if !reflect.DeepEqual(slept, want) {
			t.Errorf("slept %v, want %v", slept, want)
		}
	})
	t.Run("cancel while waiting", func(t *testing.T) {
		f := newFake(t, backendtest.Reply{})
		f.FailFirst(-1, http.StatusServiceUnavailable, "", "overloaded")
		ctx, cancel := context.WithCancel(context.Background())
		cb, _ := llm.Checked(f.backend(t, nil), &llm.Options{
			Sleep: func(ctx context.Context, d time.Duration) error { cancel(); <-ctx.Done(); return ctx.Err() },
		})
		_, err := cb.Chat(ctx, backendtest.Request(llm.ModeEnvelope))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Chat error = %v, want context.Canceled", err)
		}
		if n := len(f.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

func TestEmbed(t *testing.T) {
	f := newFake(t, backendtest.Reply{})
	b := f.backend(t, &openai.Options{EmbeddingModel: "text-embedding-3-small"})
	vecs, err := b.Embed(context.Background(), []string{"check balance", "send money", "refund"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{0, 0.25, -1}, {1, 0.25, -1}, {2, 0.25, -1}}
	if !reflect.DeepEqual(vecs, want) {
		t.Errorf("Embed = %v, want %v", vecs, want)
	}
	body := backendtest.DecodeBody(t, f.Requests()[0])
	if body["model"] != "text-embedding-3-small" || body["encoding_format"] != "float" ||
		!backendtest.JSONEqual(t, body["input"], `["check balance","send money","refund"]`) {
		t.Errorf("embeddings request = %v", body)
	}
}

func TestNewOptions(t *testing.T) {
	if _, err := openai.New("", nil); err == nil {
		t.Error(`New("") succeeded`)
	}
	if _, err := openai.New("m", &openai.Options{BaseURL: "localhost:8080"}); err == nil {
		t.Error("New with a BaseURL without scheme succeeded")
	}
}

// TestNewAPIKey: OpenAI's own API without a key is refused at New, with
// ErrNoAPIKey; a key from Options or OPENAI_API_KEY, or a server at
// another host (a local OpenAI-compatible one), is not.
func TestNewAPIKey(t *testing.T) {
	tests := []struct {
		name            string
		envKey, envBase string
		opts            *openai.Options
		wantErr         bool
	}{
		{"nothing set: OpenAI without a key", "", "", nil, true},
		{"OpenAI's URL without a key", "", "", &openai.Options{BaseURL: "https://api.openai.com/v1"}, true},
		{"OPENAI_BASE_URL is OpenAI's", "", "https://api.openai.com/v1", nil, true},
		{"key in Options", "", "", &openai.Options{APIKey: "sk-x"}, false},
		{"key in OPENAI_API_KEY", "sk-env", "", nil, false},
		{"local server in OPENAI_BASE_URL", "", "http://127.0.0.1:8080/v1", nil, false},
		{"local server in Options", "", "", &openai.Options{BaseURL: "http://localhost:11434/v1"}, false},
		{"a host merely ending in openai.com", "", "", &openai.Options{BaseURL: "http://notopenai.com/v1"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", tc.envKey)
			t.Setenv("OPENAI_BASE_URL", tc.envBase)
			_, err := openai.New("gpt-4.1-mini", tc.opts)
			if got := errors.Is(err, openai.ErrNoAPIKey); got != tc.wantErr || (err != nil && !tc.wantErr) {
				t.Errorf("New = %v; want ErrNoAPIKey %v", err, tc.wantErr)
			}
			if tc.wantErr && !strings.Contains(err.Error(), "OPENAI_API_KEY") {
				t.Errorf("New = %v; want the error to name OPENAI_API_KEY", err)
			}
		})
	}
}

func TestEnvelopeWrapping(t *testing.T) {
	t.Run("$defs move to the root", func(t *testing.T) {
		withDefs := `{"anyOf":[{"type":"object","properties":{"action":{"const":"call"},"tool":{"const":"get_balance"},"arguments":{"$ref":"#/$defs/get_balance"}},"required":["action","tool","arguments"],"additionalProperties":false},{"type":"object","properties":{"action":{"const":"answer"},"text":{"type":"string"}},"required":["action","text"],"additionalProperties":false}],"$defs":{"get_balance":{"type":"object","properties":{"account":{"type":"string"}},"required":["account"],"additionalProperties":false}}}`
		f := newFake(t, backendtest.Reply{Content: `{"action":"call","tool":"get_balance","arguments":{"account":"ACC-00001"}}`, Finish: "stop"})
		req := backendtest.Request(llm.ModeEnvelope)
		req.Constraint.EnvelopeSchema = json.RawMessage(withDefs)
		resp, err := f.backend(t, nil).Chat(context.Background(), req)
		if err != nil || resp.Action != llm.ActionCall {
			t.Fatalf("Chat = %+v, %v", resp, err)
		}
		schema := backendtest.DecodeBody(t, f.Requests()[0])["response_format"].(map[string]any)["json_schema"].(map[string]any)["schema"].(map[string]any)
		inner := schema["properties"].(map[string]any)["envelope"].(map[string]any)
		if _, ok := inner["$defs"]; ok {
			t.Error("$defs left inside the wrapped schema, where #/$defs/... does not point")
		}
		if !backendtest.JSONEqual(t, schema["$defs"], `{"get_balance":{"type":"object","properties":{"account":{"type":"string"}},"required":["account"],"additionalProperties":false}}`) {
			t.Errorf("root $defs = %v", schema["$defs"])
		}
		if inner["anyOf"] == nil {
			t.Errorf("wrapped schema lost its anyOf: %v", inner)
		}
	})
	t.Run("object root is sent as is", func(t *testing.T) {
		objectRoot := `{"type":"object","properties":{"action":{"type":"string","enum":["answer"]},"text":{"type":"string"}},"required":["action","text"],"additionalProperties":false}`
		f := newFake(t, backendtest.Reply{Finish: "stop"})
		f.Handle = func(i int, w http.ResponseWriter, body map[string]any) bool {
			writeCompletion(w, backendtest.Reply{Content: `{"action":"answer","text":"ok"}`, Finish: "stop"})
			return true
		}
		req := backendtest.Request(llm.ModeEnvelope)
		req.Constraint.EnvelopeSchema = json.RawMessage(objectRoot)
		resp, err := f.backend(t, nil).Chat(context.Background(), req)
		if err != nil || resp.Answer != "ok" {
			t.Fatalf("Chat = %+v, %v", resp, err)
		}
		schema := backendtest.DecodeBody(t, f.Requests()[0])["response_format"].(map[string]any)["json_schema"].(map[string]any)["schema"]
		if !backendtest.JSONEqual(t, schema, objectRoot) {
			t.Errorf("schema = %v, want the object-rooted schema unwrapped", schema)
		}
	})
	for _, content := range []string{
		`{"envelope":{"action":"answer","text":"ok"},"extra":1}`,
		`{"wrapper":{"action":"answer","text":"ok"}}`,
	} {
		t.Run(content, func(t *testing.T) {
			f := newFake(t, backendtest.Reply{})
			f.Handle = func(i int, w http.ResponseWriter, body map[string]any) bool {
				writeCompletion(w, backendtest.Reply{Content: content, Finish: "stop"})
				return true
			}
			_, err := f.backend(t, nil).Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
			var oe *llm.OutputError
			if !errors.As(err, &oe) || oe.Problem != llm.ProblemMalformed {
				t.Errorf("Chat(%s) error = %v, want a malformed-output error", content, err)
			}
		})
	}
}

func TestStreamingStatusErrors(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: backendtest.Answer, Finish: "stop"})
	f.FailFirst(1, http.StatusTooManyRequests, "3", "Rate limit reached")
	deltas := backendtest.AnswerAfterRetries(t, f.backend(t, nil), true, []time.Duration{3 * time.Second})
	if deltas != backendtest.WireContent(backendtest.Answer) {
		t.Errorf("deltas = %q", deltas)
	}
}

// TestStreamCutOff: a stream that ends before the chunk with the
// finish_reason (a dropped connection, a proxy's timeout) is an error, not
// a reply: the text so far would be taken for a complete answer, and the
// arguments so far for a complete call.
func TestStreamCutOff(t *testing.T) {
	type cut struct {
		name, delta string
		done        bool // a [DONE] after the delta
	}
	for _, tc := range []cut{
		{"answer", `{"content":"The balance of ACC-00001 is"}`, false},
		{"answer then DONE", `{"content":"The balance of ACC-00001 is"}`, true},
		{"call", `{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_balance","arguments":"{\"account\":\"ACC-00001\"}"}}]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, backendtest.Reply{})
			f.Handle = func(_ int, w http.ResponseWriter, _ map[string]any) bool {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", tc.delta)
				if tc.done {
					fmt.Fprint(w, "data: [DONE]\n\n")
				}
				return true
			}
			req := backendtest.Request(llm.ModeNative)
			req.OnDelta = func(string) {}
			resp, err := f.backend(t, nil).Chat(context.Background(), req)
			if err == nil || !strings.HasPrefix(err.Error(), "openai: chat: the stream ended before") || strings.Count(err.Error(), "openai:") != 1 {
				t.Fatalf("Chat(stream cut off after %s) = %+v, %v; want one error saying the stream ended early, prefixed once", tc.delta, resp, err)
			}
		})
	}
}

// TestReplySizeBounded: a server that sends more than
// wire.MaxReplyBytes (64 MiB), streamed in pieces or as one argument
// string, costs no more than that: the reply fails with an error naming
// the limit instead of being read whole.
func TestReplySizeBounded(t *testing.T) {
	const mib = 1 << 20
	piece := strings.Repeat("a", mib)
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			f := newFake(t, backendtest.Reply{})
			f.Handle = func(_ int, w http.ResponseWriter, _ map[string]any) bool {
				if !stream {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_balance","arguments":"{\"account\":\"`)
					for range 65 {
						io.WriteString(w, piece)
					}
					io.WriteString(w, `\"}"}}]}}]}`)
					return true
				}
				w.Header().Set("Content-Type", "text/event-stream")
				for range 65 {
					fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", piece)
				}
				fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
				return true
			}
			req := backendtest.Request(llm.ModeNative)
			if stream {
				req.OnDelta = func(string) {}
			}
			resp, err := f.backend(t, nil).Chat(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), "exceeds") {
				got := 0
				if resp != nil {
					got = len(resp.Raw)
				}
				t.Fatalf("Chat(a 65 MiB reply) = a reply of %d bytes, %v; want an error naming the limit", got, err)
			}
		})
	}
}

func TestRepairNeverSendsTheUnknownTool(t *testing.T) {
	backendtest.RunRepair(t, []llm.Mode{llm.ModeEnvelope, llm.ModeGrammar, llm.ModeNative}, func(t *testing.T) (*backendtest.Fake, llm.Backend) {
		f := newFake(t, backendtest.Reply{})
		return f.Fake, f.backend(t, nil)
	})
}

func TestConcurrentChats(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: `{"action":"answer","text":"ok"}`, Finish: "stop"})
	cb, _ := llm.Checked(f.backend(t, nil), &llm.Options{Logger: slog.New(slog.DiscardHandler)})
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			resp, err := cb.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
			if err == nil && resp.Answer != "ok" {
				err = fmt.Errorf("Answer = %q", resp.Answer)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := len(f.Requests()); n != 8 {
		t.Errorf("%d requests, want 8", n)
	}
}

func TestToolChoice(t *testing.T) {
	backendtest.RunToolChoice(t, func(t *testing.T, req *llm.Request) map[string]any {
		f := newFake(t, backendtest.Reply{Calls: []llm.ToolCall{{ID: "call_1", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}, Finish: "tool_calls"})
		_, body := f.Send(t, f.backend(t, nil), req, false)
		return body
	}, "", `"required"`)
}

func TestSamplingOptions(t *testing.T) {
	backendtest.RunSampling(t, llm.ModeGrammar, func(t *testing.T, temp *float64, seed *int64, req *llm.Request) map[string]any {
		f := newFake(t, backendtest.Reply{Content: backendtest.Answer})
		_, body := f.Send(t, f.backend(t, &openai.Options{Temperature: temp, Seed: seed}), req, false)
		return body
	})
	if _, err := openai.New("m", &openai.Options{Temperature: new(-1.0)}); err == nil || !strings.Contains(err.Error(), "Options.Temperature") {
		t.Errorf("New with Temperature -1 = %v, want an error naming Options.Temperature", err)
	}
}

func TestProbeLlamaCpp(t *testing.T) {
	mux := http.NewServeMux()
	// The shape of llama.cpp's /props (tools/server), trimmed.
	mux.HandleFunc("GET /llama/props", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"default_generation_settings":{"n_ctx":2048,"params":{"temperature":0.8}},"total_slots":1,"model_path":"/m/tiny.gguf","chat_template":"x","build_info":"b1-abc"}`)
	})
	mux.HandleFunc("GET /other/props", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"object":"list"}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	props, err := openai.ProbeLlamaCpp(context.Background(), srv.URL+"/llama/v1", nil)
	if err != nil || props.ModelPath != "/m/tiny.gguf" || props.BuildInfo != "b1-abc" || props.ContextSize != 2048 {
		t.Errorf("ProbeLlamaCpp(llama.cpp) = %+v, %v; want its model, build and n_ctx", props, err)
	}
	for _, base := range []string{srv.URL + "/other/v1", srv.URL + "/missing/v1", "http://127.0.0.1:1/v1"} {
		t.Run(base, func(t *testing.T) {
			if props, err := openai.ProbeLlamaCpp(context.Background(), base, nil); err == nil {
				t.Errorf("ProbeLlamaCpp(%s) = %+v, want an error: not llama.cpp", base, props)
			}
		})
	}
}

// TestStreamParallelCalls: parallel tool calls streamed without an "index",
// or under one index with different ids, are separate calls (a new id
// starts a new call), so the reply is refused as too_many_calls; before,
// openai-go's accumulator joined them into one call of
// "get_balanceget_balance" with arguments "{..}{..}", refused as an
// unknown tool. Continuation deltas (no id) still extend the call they
// follow.
func TestStreamParallelCalls(t *testing.T) {
	const (
		c1 = `{"id":"c1","type":"function","function":{"name":"get_balance","arguments":"{\"account\":\"ACC-00001\"}"}}`
		c2 = `{"id":"c2","type":"function","function":{"name":"get_balance","arguments":"{\"account\":\"ACC-00002\"}"}}`
	)
	var (
		c1i0 = `{"index":0,` + c1[1:]
		c2i0 = `{"index":0,` + c2[1:]
	)
	for _, tc := range []struct {
		name    string
		deltas  []string
		problem llm.OutputProblem
		args    string
	}{
		{"no index", []string{`[` + c1 + `]`, `[` + c2 + `]`}, llm.ProblemTooManyCalls, ""},
		{"no index, one chunk", []string{`[` + c1 + `,` + c2 + `]`}, llm.ProblemTooManyCalls, ""},
		{"same index, new id", []string{`[` + c1i0 + `]`, `[` + c2i0 + `]`}, llm.ProblemTooManyCalls, ""},
		{"same index, same chunk", []string{`[` + c1i0 + `,` + c2i0 + `]`}, llm.ProblemTooManyCalls, ""},
		{"one call in pieces", []string{
			`[{"index":0,"id":"c1","type":"function","function":{"name":"get_balance","arguments":""}}]`,
			`[{"index":0,"function":{"arguments":"{\"account\":"}}]`,
			`[{"index":0,"id":"c1","function":{"arguments":"\"ACC-00001\"}"}}]`}, "", `{"account":"ACC-00001"}`},
		{"one call in pieces, no index", []string{
			`[{"id":"c1","type":"function","function":{"name":"get_balance","arguments":"{\"account\":"}}]`,
			`[{"function":{"arguments":"\"ACC-00001\"}"}}]`}, "", `{"account":"ACC-00001"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, backendtest.Reply{})
			f.Handle = func(_ int, w http.ResponseWriter, _ map[string]any) bool {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, d := range tc.deltas {
					fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":%s},\"finish_reason\":null}]}\n\n", d)
				}
				fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
				return true
			}
			req := backendtest.Request(llm.ModeNative)
			req.OnDelta = func(string) {}
			resp, err := f.backend(t, nil).Chat(context.Background(), req)
			if tc.problem != "" {
				var oe *llm.OutputError
				if !errors.As(err, &oe) || oe.Problem != tc.problem {
					t.Fatalf("Chat(%s) = %+v, %v; want problem %s", tc.name, resp, err, tc.problem)
				}
				return
			}
			if err != nil || len(resp.Calls) != 1 || string(resp.Calls[0].Arguments) != tc.args || resp.Calls[0].ID != "c1" {
				t.Fatalf("Chat(%s) = %+v, %v; want one call c1 with %s", tc.name, resp, err, tc.args)
			}
		})
	}
}

// TestErrorsWithStatus200: an error a server sends with HTTP 200 (OpenAI's
// error chunk after a stream began, OpenRouter's error body, vLLM's
// {"object":"error"}) is the [*llm.StatusError] it would have been before
// the response began, with the server's message (escaped, bounded) and a
// status by its code or type, so that [llm.Checked] retries a server error
// and not an invalid request. Before, the stream's was openai-go's
// "received error while streaming" and a body's "the response has no
// choices", neither retried.
func TestErrorsWithStatus200(t *testing.T) {
	for _, tc := range []struct {
		name          string
		stream        bool
		body, message string
		status        int
	}{
		{"stream server_error", true, `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`, "The server had an error while processing your request.", 500},
		{"stream invalid_request_error", true, `{"error":{"message":"Invalid 'messages'.","type":"invalid_request_error","param":null,"code":null}}`, "Invalid 'messages'.", 400},
		{"stream rate limit", true, `{"error":{"message":"Rate limit reached","type":"rate_limit_exceeded"}}`, "Rate limit reached", 429},
		{"stream vLLM", true, `{"object":"error","message":"The engine is overloaded.","type":"ServiceUnavailableError","param":null,"code":503}`, "The engine is overloaded.", 503},
		{"OpenRouter body", false, `{"error":{"message":"Provider returned error","code":502,"metadata":{"provider_name":"x"}}}`, "Provider returned error", 502},
		{"vLLM body", false, `{"object":"error","message":"This model's maximum context length is 2048 tokens.","type":"BadRequestError","param":null,"code":400}`, "This model's maximum context length is 2048 tokens.", 400},
		{"overloaded body", false, `{"error":{"message":"Overloaded","type":"overloaded_error"}}`, "Overloaded", 503},
		{"escaped message", false, `{"error":{"message":"bad\u001b[2J\nthing","type":"server_error"}}`, `bad\u001b[2J\nthing`, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, backendtest.Reply{})
			f.Handle = func(_ int, w http.ResponseWriter, _ map[string]any) bool {
				if tc.stream {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"The\"},\"finish_reason\":null}]}\n\ndata: %s\n\n", tc.body)
					return true
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.body)
				return true
			}
			req := backendtest.Request(llm.ModeNative)
			if tc.stream {
				req.OnDelta = func(string) {}
			}
			resp, err := f.backend(t, nil).Chat(context.Background(), req)
			var se *llm.StatusError
			if !errors.As(err, &se) || se.StatusCode != tc.status || se.Message != tc.message || se.Temporary() != (tc.status >= 429 && tc.status != 400) {
				t.Fatalf("Chat(200 with %s) = %+v, %v; want an *llm.StatusError %d %q", tc.body, resp, err, tc.status, tc.message)
			}
		})
	}
	t.Run("retried", func(t *testing.T) {
		f := newFake(t, backendtest.Reply{Content: backendtest.Answer, Finish: "stop"})
		f.Handle = func(i int, w http.ResponseWriter, _ map[string]any) bool {
			if i > 0 {
				return false
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}\n\n")
			return true
		}
		retries := 0
		cb, err := llm.Checked(f.backend(t, nil), &llm.Options{Logger: slog.New(slog.DiscardHandler),
			Sleep: func(context.Context, time.Duration) error { retries++; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		req := backendtest.Request(llm.ModeEnvelope)
		req.OnDelta = func(string) {}
		resp, err := cb.Chat(context.Background(), req)
		if err != nil || resp.Answer != "ok" || retries != 1 {
			t.Fatalf("Checked Chat(a server_error chunk, then ok) = %+v, %v after %d retries; want ok after 1", resp, err, retries)
		}
	})
}

// TestRefusal: OpenAI's `refusal` message where an envelope was asked for,
// and a reply stopped by the content filter, are refusals: problem
// refused, not asked again. Before, the refusal text was a malformed
// envelope, repaired twice, and a filtered empty reply "empty". In native
// mode the refusal's text stays the answer.
func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		name, message, finish string
		mode                  llm.Mode
		answer                string // "" means problem refused
	}{
		{"refusal in envelope mode", `{"role":"assistant","content":null,"refusal":"I can't help with that."}`, "stop", llm.ModeEnvelope, ""},
		{"content filter", `{"role":"assistant","content":null}`, "content_filter", llm.ModeNative, ""},
		{"refusal in native mode", `{"role":"assistant","content":null,"refusal":"I can't help with that."}`, "stop", llm.ModeNative, "I can't help with that."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, backendtest.Reply{})
			f.Handle = func(_ int, w http.ResponseWriter, _ map[string]any) bool {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":%q,"message":%s}]}`, tc.finish, tc.message)
				return true
			}
			cb, err := llm.Checked(f.backend(t, nil), &llm.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := cb.Chat(context.Background(), backendtest.Request(tc.mode))
			checkRefused(t, tc.name, resp, err, tc.answer)
		})
	}
}

// checkRefused fails t unless Checked Chat of the reply called name
// returned answer or, where answer is "", a RepairError with one attempt,
// refused.
func checkRefused(t *testing.T, name string, resp *llm.Response, err error, answer string) {
	t.Helper()
	if answer != "" {
		if err != nil || resp.Answer != answer {
			t.Fatalf("Checked Chat(%s) = %+v, %v; want the answer %q", name, resp, err, answer)
		}
		return
	}
	var re *llm.RepairError
	if !errors.As(err, &re) || len(re.Attempts) != 1 || re.Attempts[0].Problem != llm.ProblemRefused {
		t.Fatalf("Checked Chat(%s) = %+v, %v; want one attempt refused", name, resp, err)
	}
}

// TestStreamIdle: a stream that sends nothing, or only keep-alive
// comments, fails after Options.StreamIdleTimeout with an [*llm.IdleError]
// (retried by [llm.Checked]); before, only the caller's context ended it.
func TestStreamIdle(t *testing.T) {
	t.Run("chat", func(t *testing.T) {
		backendtest.RunStreamIdle(t, backendtest.SSESilences, func(t *testing.T, url string, idle time.Duration) llm.Backend {
			return backendtest.NewBackend(t, openai.New, "m", &openai.Options{StreamIdleTimeout: idle}, func(o *openai.Options) { o.BaseURL, o.APIKey = url+"/v1", "sk-test" })
		})
	})
	t.Run("responses", func(t *testing.T) {
		backendtest.RunStreamIdle(t, backendtest.SSESilences, func(t *testing.T, url string, idle time.Duration) llm.Backend {
			return backendtest.NewBackend(t, openai.NewResponses, "m", &openai.Options{StreamIdleTimeout: idle}, func(o *openai.Options) { o.BaseURL, o.APIKey = url+"/v1", "sk-test" })
		})
	})
}
