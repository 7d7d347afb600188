package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/anthropic"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
)

// fakeAnthropic is an httptest server speaking the Messages API
// (/v1/messages, JSON or SSE) as Anthropic's does. It records every
// request body.
type fakeAnthropic struct {
	*backendtest.Recorder
	reply  backendtest.Reply
	usage  string // the usage object of every reply
	status int    // when set, every request fails with this status
	errMsg string
	// streamError, when set, is the type of the error event a stream
	// sends after its first text delta, in place of the rest.
	streamError string
	// cut ends every stream after its content blocks, before the
	// message_delta with the stop reason and the message_stop.
	cut bool
	// noIDs leaves the id out of every tool_use block.
	noIDs bool
}

// toolUse is the tool_use block of call c, its input as given (the
// stream's starts empty), without an id when f.noIDs.
func (f *fakeAnthropic) toolUse(c llm.ToolCall, input any) map[string]any {
	block := map[string]any{"type": "tool_use", "name": c.Name, "input": input}
	if !f.noIDs {
		block["id"] = "toolu_" + c.ID
	}
	return block
}

func newFake(t *testing.T, reply backendtest.Reply) *fakeAnthropic {
	f := &fakeAnthropic{reply: reply, usage: `{"input_tokens":120,"output_tokens":15,"cache_read_input_tokens":900,"cache_creation_input_tokens":30}`}
	f.Recorder = backendtest.NewRecorder(t, f.serve)
	return f
}

func (f *fakeAnthropic) backend(t *testing.T, opts *anthropic.Options) *anthropic.Backend {
	return backendtest.NewBackend(t, anthropic.New, "claude-sonnet-4-5", opts, func(o *anthropic.Options) {
		o.BaseURL, o.APIKey = f.URL, "sk-ant-test"
	})
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg)
}

func (f *fakeAnthropic) serve(_ int, w http.ResponseWriter, r *http.Request, data []byte) {
	if r.URL.Path != "/v1/messages" || r.Method != http.MethodPost {
		apiError(w, http.StatusNotFound, "not_found_error", "Not found")
		return
	}
	if r.Header.Get("X-Api-Key") != "sk-ant-test" || r.Header.Get("Anthropic-Version") == "" {
		apiError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		return
	}
	var body struct {
		Stream       bool            `json:"stream"`
		MaxTokens    int             `json:"max_tokens"`
		Model        string          `json:"model"`
		OutputConfig json.RawMessage `json:"output_config"`
	}
	if err := json.Unmarshal(data, &body); err != nil || body.MaxTokens <= 0 || body.Model == "" {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "max_tokens: Field required")
		return
	}
	if f.status != 0 {
		if f.status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "7")
		}
		typ := "rate_limit_error"
		if f.status == http.StatusBadRequest {
			typ = "invalid_request_error"
		}
		apiError(w, f.status, typ, f.errMsg)
		return
	}
	reply := f.reply
	if body.OutputConfig != nil {
		// The server enforces the wrapped envelope schema.
		reply.Content = backendtest.WireContent(reply.Content)
	}
	stop := map[string]string{"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "refusal": "refusal"}[reply.Finish]
	if body.Stream {
		f.stream(w, reply, stop)
		return
	}
	var content []map[string]any
	if reply.Content != "" {
		content = append(content, map[string]any{"type": "text", "text": reply.Content})
	}
	for _, c := range reply.Calls {
		content = append(content, f.toolUse(c, json.RawMessage(c.Arguments)))
	}
	msg := map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": body.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": json.RawMessage(f.usage)}
	if content == nil {
		msg["content"] = []any{}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(msg)
}

// stream sends the reply as the API's server-sent events, the text in
// three pieces.
func (f *fakeAnthropic) stream(w http.ResponseWriter, reply backendtest.Reply, stop string) {
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event string, data any) {
		d, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, d)
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message",
		"role": "assistant", "model": "claude-sonnet-4-5", "content": []any{}, "stop_reason": nil, "usage": json.RawMessage(f.usage)}})
	index := 0
	if reply.Content != "" {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, piece := range backendtest.Split(reply.Content, 3) {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": piece}})
			if f.streamError != "" {
				send("error", map[string]any{"type": "error", "error": map[string]any{"type": f.streamError, "message": "Overloaded"}})
				return
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, c := range reply.Calls {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": f.toolUse(c, map[string]any{})})
		for _, piece := range backendtest.Split(string(c.Arguments), 2) {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if f.cut {
		return
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 15}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Harness{
		Modes:        []llm.Mode{llm.ModeEnvelope, llm.ModeNative},
		WrapEnvelope: true,
		New: func(t *testing.T, r backendtest.Reply) llm.Backend {
			return newFake(t, r).backend(t, nil)
		},
	})
}

func TestToolChoice(t *testing.T) {
	backendtest.RunToolChoice(t, func(t *testing.T, req *llm.Request) map[string]any {
		f := newFake(t, backendtest.Reply{Calls: []llm.ToolCall{{ID: "1", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}, Finish: "tool_calls"})
		if _, err := f.backend(t, nil).Chat(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		return backendtest.DecodeBody(t, f.Requests()[0])
	}, `{"type":"auto","disable_parallel_tool_use":true}`, `{"type":"any","disable_parallel_tool_use":true}`)
}

func TestRequestBodyNative(t *testing.T) {
	f := newFake(t, backendtest.Reply{Calls: []llm.ToolCall{{ID: "1", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}, Finish: "tool_calls"})
	b := f.backend(t, nil)
	req := backendtest.Request(llm.ModeNative)
	resp, err := b.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Action != llm.ActionCall || resp.Calls[0].ID != "toolu_1" {
		t.Fatalf("Chat = %+v, want the call with the API's id", resp)
	}
	body := backendtest.DecodeBody(t, f.Requests()[0])
	backendtest.CheckFields(t, body, map[string]string{
		"model":       `"claude-sonnet-4-5"`,
		"max_tokens":  `256`,
		"temperature": `0`,
		"tool_choice": `{"type":"auto","disable_parallel_tool_use":true}`,
		"system":      `[{"type":"text","text":"You are a careful banking assistant.","cache_control":{"type":"ephemeral"}}]`,
		"messages":    `[{"role":"user","content":[{"type":"text","text":"What is the balance of ACC-00001?"}]}]`,
	})
	tools, _ := body["tools"].([]any)
	if len(tools) != 2 {
		t.Fatalf("tools = %v, want the 2 shortlisted tools", body["tools"])
	}
	for i, spec := range backendtest.Shortlist() {
		tool := tools[i].(map[string]any)
		if tool["name"] != spec.Name || tool["strict"] != true || tool["defer_loading"] != nil {
			t.Errorf("tools[%d] = %v, want %s, strict, not deferred", i, tool, spec.Name)
		}
		schema, _ := json.Marshal(tool["input_schema"])
		if !backendtest.JSONEqual(t, json.RawMessage(schema), string(spec.StrictParameters)) {
			t.Errorf("tools[%d].input_schema = %s, want the strict parameters %s", i, schema, spec.StrictParameters)
		}
	}
	if strings.Contains(string(f.Requests()[0]), backendtest.Unauthorized) {
		t.Error("the request names the unauthorized tool")
	}
	u := resp.Usage
	if u.PromptTokens != 120+900+30 || u.CompletionTokens != 15 || u.CachedPromptTokens != 900 || u.CacheWriteTokens != 30 {
		t.Errorf("Usage = %+v, want prompt 1050 (120 + 900 cached + 30 written), completion 15", u)
	}
}

func TestRequestBodyEnvelope(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: `{"action":"answer","text":"1000.00 USD"}`, Finish: "stop"})
	b := f.backend(t, &anthropic.Options{NoCache: true})
	resp, err := b.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Answer != "1000.00 USD" || resp.Raw != `{"action":"answer","text":"1000.00 USD"}` {
		t.Errorf("Chat = answer %q raw %q, want the unwrapped envelope", resp.Answer, resp.Raw)
	}
	body := backendtest.DecodeBody(t, f.Requests()[0])
	oc, _ := body["output_config"].(map[string]any)
	format, _ := oc["format"].(map[string]any)
	if format["type"] != "json_schema" {
		t.Fatalf("output_config = %v, want a json_schema format", body["output_config"])
	}
	wrapped, _ := llm.WrapEnvelopeSchema(json.RawMessage(backendtest.EnvelopeSchema))
	got, _ := json.Marshal(format["schema"])
	if !backendtest.JSONEqual(t, json.RawMessage(got), string(wrapped)) {
		t.Errorf("format.schema = %s, want the wrapped envelope schema", got)
	}
	if body["tools"] != nil {
		t.Errorf("tools = %v, want none in envelope mode", body["tools"])
	}
	system, _ := json.Marshal(body["system"])
	if !strings.Contains(string(system), "get_balance") || strings.Contains(string(system), "cache_control") {
		t.Errorf("system = %s, want the tool prompt and no cache breakpoint (NoCache)", system)
	}
}

func TestGrammarModeIsAConstraintError(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: "x", Finish: "stop"})
	_, err := f.backend(t, nil).Chat(context.Background(), backendtest.Request(llm.ModeGrammar))
	var ce *llm.ConstraintError
	if !errors.As(err, &ce) || ce.Mode != llm.ModeGrammar {
		t.Fatalf("Chat(grammar) error = %v, want *llm.ConstraintError", err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

// deferredRequest is a native request whose shortlist is the runtime's
// search tool, with the two banking tools deferred.
func deferredRequest() *llm.Request {
	req := backendtest.Request(llm.ModeNative)
	search := `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`
	req.Deferred = req.Tools
	req.Tools = []llm.ToolSpec{{Name: "find_tools", Description: "Search the tools you may use", Parameters: json.RawMessage(search), StrictParameters: json.RawMessage(search)}}
	return req
}

func TestDeferredLoading(t *testing.T) {
	call := func(name, args string) backendtest.Reply {
		return backendtest.Reply{Calls: []llm.ToolCall{{ID: "2", Name: name, Arguments: json.RawMessage(args)}}, Finish: "tool_calls"}
	}
	// Before any reference, a call of a deferred tool is refused.
	f := newFake(t, call("get_balance", `{"account":"ACC-00001"}`))
	b := f.backend(t, nil)
	req := deferredRequest()
	_, err := b.Chat(context.Background(), req)
	var oe *llm.OutputError
	if !errors.As(err, &oe) || oe.Problem != llm.ProblemUnknownTool {
		t.Fatalf("call of an unreferenced deferred tool: error = %v, want unknown_tool", err)
	}
	body := backendtest.DecodeBody(t, f.Requests()[0])
	tools, _ := body["tools"].([]any)
	if len(tools) != 3 {
		t.Fatalf("tools = %v, want find_tools and the 2 deferred tools", body["tools"])
	}
	for i, want := range []struct {
		name     string
		deferred bool
	}{{"find_tools", false}, {"get_balance", true}, {"transfer_funds", true}} {
		t.Run(want.name, func(t *testing.T) {
			tool := tools[i].(map[string]any)
			if tool["name"] != want.name || (tool["defer_loading"] == true) != want.deferred {
				t.Errorf("tools[%d] = %v, want %s deferred=%v", i, tool, want.name, want.deferred)
			}
		})
	}

	// After find_tools answered with a reference, the model may call it.
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "find_tools", Arguments: json.RawMessage(`{"query":"balance"}`)}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_1", Name: "find_tools", Content: "1 tool found", ToolReferences: []string{"get_balance"}},
	)
	resp, err := b.Chat(context.Background(), req)
	if err != nil || resp.Action != llm.ActionCall || resp.Calls[0].Name != "get_balance" {
		t.Fatalf("call of a referenced deferred tool = %+v, %v; want the call", resp, err)
	}
	body = backendtest.DecodeBody(t, f.Requests()[1])
	msgs, _ := json.Marshal(body["messages"])
	want := `[{"role":"user","content":[{"type":"text","text":"What is the balance of ACC-00001?"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","input":{"query":"balance"},"name":"find_tools"}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"1 tool found"},{"type":"tool_reference","tool_name":"get_balance"}]}]}]`
	if !backendtest.JSONEqual(t, json.RawMessage(msgs), want) {
		t.Errorf("messages = %s\nwant %s", msgs, want)
	}
	// The tools and system prompt, the cached prefix, did not change.
	first, second := backendtest.DecodeBody(t, f.Requests()[0]), body
	for _, k := range []string{"tools", "system"} {
		t.Run(k, func(t *testing.T) {
			a, _ := json.Marshal(first[k])
			c, _ := json.Marshal(second[k])
			if string(a) != string(c) {
				t.Errorf("%s changed between the steps:\n%s\n%s", k, a, c)
			}
		})
	}

	// Still not callable: the other deferred tool, never referenced.
	f.reply = call("transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":"1.00"}`)
	if _, err := b.Chat(context.Background(), req); !errors.As(err, &oe) || oe.Problem != llm.ProblemUnknownTool {
		t.Errorf("call of the unreferenced transfer_funds: error = %v, want unknown_tool", err)
	}
}

// TestDeferredRefused: a model or API version without tool search answers
// HTTP 400 with the API's error body; the backend returns an
// [*llm.ConstraintError] with Deferred set (the runtime then sends the
// shortlist as plain tools), and a refusal of something else stays what
// it was.
func TestDeferredRefused(t *testing.T) {
	backendtest.RunDeferredRefused(t, []backendtest.DeferredRefusal{
		{Name: "defer_loading not permitted", Msg: "tools.1.custom.defer_loading: Extra inputs are not permitted", Deferred: true, WantDeferred: true},
		{Name: "tool_reference not supported", Msg: "messages.2.content.0.tool_result.content.1: tool_reference blocks are not supported by this model", Deferred: true, WantDeferred: true},
		{Name: "strict refused", Msg: "tools.0.strict: Extra inputs are not permitted"},
	}, func(t *testing.T, msg string, deferred bool) error {
		f := newFake(t, backendtest.Reply{})
		f.status, f.errMsg = http.StatusBadRequest, msg
		req := backendtest.Request(llm.ModeNative)
		if deferred {
			req = deferredRequest()
		}
		_, err := f.backend(t, nil).Chat(context.Background(), req)
		return err
	})
}

// TestReferencesNeedDeferredTools: without deferred tools a tool result's
// references are not sent (there is nothing to load, and a model without
// tool search refuses the blocks).
func TestReferencesNeedDeferredTools(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: "ok", Finish: "stop"})
	req := backendtest.Request(llm.ModeNative)
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_1", Name: "get_balance", Content: "1000.00", ToolReferences: []string{"transfer_funds"}})
	if _, err := f.backend(t, nil).Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if body := string(f.Requests()[0]); strings.Contains(body, "tool_reference") {
		t.Errorf("a request without deferred tools sends a tool reference: %s", body)
	}
}

func TestDeferredNeedsNativeMode(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: "x", Finish: "stop"})
	req := deferredRequest()
	req.Constraint.Mode = llm.ModeEnvelope
	if _, err := f.backend(t, nil).Chat(context.Background(), req); !errors.Is(err, llm.ErrInvalidRequest) {
		t.Errorf("Chat(envelope with Deferred) error = %v, want ErrInvalidRequest", err)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		status    int
		msg       string
		mode      llm.Mode
		constrain bool
	}{
		{http.StatusTooManyRequests, "rate limited", llm.ModeNative, false},
		{http.StatusInternalServerError, "internal", llm.ModeNative, false},
		{529, "Overloaded", llm.ModeNative, false},
		{http.StatusBadRequest, "tools.0.strict: Extra inputs are not permitted", llm.ModeNative, true},
		{http.StatusBadRequest, "output_config.format: not supported for this model", llm.ModeEnvelope, true},
		{http.StatusBadRequest, "messages: text content blocks must be non-empty", llm.ModeNative, false},
	} {
		t.Run(tc.msg, func(t *testing.T) {
			f := newFake(t, backendtest.Reply{})
			f.status, f.errMsg = tc.status, tc.msg
			_, err := f.backend(t, nil).Chat(context.Background(), backendtest.Request(tc.mode))
			var ce *llm.ConstraintError
			var se *llm.StatusError
			switch {
			case tc.constrain:
				if !errors.As(err, &ce) {
					t.Errorf("%d %q: error = %v, want *llm.ConstraintError", tc.status, tc.msg, err)
				}
			case !errors.As(err, &se) || se.StatusCode != tc.status || se.Message != tc.msg:
				t.Errorf("%d %q: error = %v, want *llm.StatusError with the API's message", tc.status, tc.msg, err)
			case tc.status == http.StatusTooManyRequests && se.RetryAfter.Seconds() != 7:
				t.Errorf("429: RetryAfter = %v, want 7s", se.RetryAfter)
			}
		})
	}
}

// TestStreamErrors: an error the API sends as an `event: error` in a
// stream that began with HTTP 200 (an overloaded_error in the middle of a
// reply, the common case) is the [*llm.StatusError] of the status its type
// stands for, so that [llm.Checked] retries the temporary ones as it does
// the same error sent before the stream.
func TestStreamErrors(t *testing.T) {
	statusOf := map[string]int{
		"overloaded_error":      529,
		"api_error":             http.StatusInternalServerError,
		"rate_limit_error":      http.StatusTooManyRequests,
		"invalid_request_error": http.StatusBadRequest,
		"some_new_error":        http.StatusInternalServerError,
	}
	for typ, status := range statusOf {
		t.Run(typ, func(t *testing.T) {
			f := newFake(t, backendtest.Reply{Content: "The balance is 1000.00 USD.", Finish: "stop"})
			f.streamError = typ
			req := backendtest.Request(llm.ModeNative)
			req.OnDelta = func(string) {}
			_, err := f.backend(t, nil).Chat(context.Background(), req)
			var se *llm.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("stream with error %s: error = %v, want *llm.StatusError", typ, err)
			}
			if se.StatusCode != status || se.Message != "Overloaded" {
				t.Errorf("stream with error %s: StatusCode %d, Message %q; want %d, %q", typ, se.StatusCode, se.Message, status, "Overloaded")
			}
		})
	}
}

// TestStreamCutOff: a stream that ends before its message_stop (a
// dropped connection, a proxy's timeout) is an error, not a reply: the
// text so far would be taken for a complete answer.
func TestStreamCutOff(t *testing.T) {
	for name, reply := range map[string]backendtest.Reply{
		"answer": {Content: "The balance of ACC-00001 is", Finish: "stop"},
		"call":   {Calls: []llm.ToolCall{{ID: "1", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}, Finish: "tool_calls"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, reply)
			f.cut = true
			req := backendtest.Request(llm.ModeNative)
			req.OnDelta = func(string) {}
			resp, err := f.backend(t, nil).Chat(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), "ended before") {
				t.Fatalf("Chat(stream cut off) = %+v, %v; want an error saying the stream ended early", resp, err)
			}
		})
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	if _, err := anthropic.New("", nil); err == nil {
		t.Error("New(\"\") = nil error")
	}
	if _, err := anthropic.New("m", &anthropic.Options{BaseURL: "ftp://x"}); err == nil || !strings.Contains(err.Error(), "BaseURL") {
		t.Errorf("New(BaseURL ftp) error = %v, want one naming BaseURL", err)
	}
	if _, err := anthropic.New("m", &anthropic.Options{MaxTokens: -1}); err == nil || !strings.Contains(err.Error(), "MaxTokens") {
		t.Errorf("New(MaxTokens -1) error = %v, want one naming MaxTokens", err)
	}
}

// TestRefusal: a reply the API stopped with stop_reason "refusal" and no
// content is a refusal, not an empty reply: its reason says the model
// refused, and [llm.Checked] does not ask again in the same conversation
// (which refuses again), so the request is sent once. Before, it was
// "the reply was empty; call one tool or answer", repaired twice.
func TestRefusal(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			f := newFake(t, backendtest.Reply{Finish: "refusal"})
			cb, err := llm.Checked(f.backend(t, nil), &llm.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			req := backendtest.Request(llm.ModeNative)
			if stream {
				req.OnDelta = func(string) {}
			}
			resp, err := cb.Chat(context.Background(), req)
			var re *llm.RepairError
			if !errors.As(err, &re) || len(re.Attempts) != 1 || re.Attempts[0].Problem != llm.ProblemRefused ||
				!strings.Contains(re.Attempts[0].Reason, "refused") {
				t.Fatalf("Checked Chat(a refusal) = %+v, %v; want one attempt with problem %s saying so", resp, err, llm.ProblemRefused)
			}
			if n := len(f.Requests()); n != 1 {
				t.Errorf("%d requests sent for a refusal, want 1", n)
			}
		})
	}
}

// TestStreamIdle: a stream that sends nothing, or only keep-alive
// comments, fails after Options.StreamIdleTimeout with an [*llm.IdleError]
// (retried by [llm.Checked]); before, only the caller's context ended it.
func TestStreamIdle(t *testing.T) {
	backendtest.RunStreamIdle(t, backendtest.SSESilences, func(t *testing.T, url string, idle time.Duration) llm.Backend {
		return backendtest.NewBackend(t, anthropic.New, "m", &anthropic.Options{StreamIdleTimeout: idle}, func(o *anthropic.Options) { o.BaseURL, o.APIKey = url, "sk-ant-test" })
	})
}

// TestDeferredStaleReference: a tool result that references a tool the
// request no longer defers (removed from the view since the search, or a
// name never offered) sends no tool_reference for it: the API expands a
// reference only to a tool in `tools`, and answers one to any other with
// a 400 that, naming tool_reference, would pass for a model without tool
// search. Before, every name went out as a tool_reference block.
func TestDeferredStaleReference(t *testing.T) {
	f := newFake(t, backendtest.Reply{Content: "ok", Finish: "stop"})
	req := deferredRequest()
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "find_tools", Arguments: json.RawMessage(`{"query":"balance"}`)}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_1", Name: "find_tools", Content: "2 tools found", ToolReferences: []string{"get_balance", "removed_tool", "find_tools"}},
	)
	if _, err := f.backend(t, nil).Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body := backendtest.DecodeBody(t, f.Requests()[0])
	msgs, _ := json.Marshal(body["messages"])
	if got := strings.Count(string(msgs), `"type":"tool_reference"`); got != 1 || !strings.Contains(string(msgs), `{"tool_name":"get_balance","type":"tool_reference"}`) {
		t.Errorf("messages = %s\nwant one tool_reference, to get_balance", msgs)
	}
}

// TestCallWithoutID: a tool_use block without an id (a Messages-compatible
// server that leaves it out) gets one, as a call does in the OpenAI
// adapters, so that its result goes back as the tool_result of that
// tool_use. Before, the call kept the empty id: the runtime sent its
// result as a user message (a search's tool references with it, so the
// tools it found never loaded), and the next request carried a tool_use
// with id "" that no tool_result answered, which the API refuses.
func TestCallWithoutID(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			f := newFake(t, backendtest.Reply{Calls: []llm.ToolCall{{Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}, Finish: "tool_calls"})
			f.noIDs = true
			id := backendtest.CallWithoutID(t, f.backend(t, nil), stream)
			msgs, _ := backendtest.DecodeBody(t, f.Requests()[1])["messages"].([]any)
			want := `[{"role":"user","content":[{"type":"text","text":"What is the balance of ACC-00001?"}]},` +
				`{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"get_balance","input":{"account":"ACC-00001"}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":[{"type":"text","text":"{\"balance\":\"1.00\"}"}]}]}]`
			if !backendtest.JSONEqual(t, msgs, want) {
				got, _ := json.Marshal(msgs)
				t.Errorf("messages of the second request = %s\nwant %s", got, want)
			}
		})
	}
}
