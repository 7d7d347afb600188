package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
	"github.com/toolgate/toolgate/llm/openai"
)

// fakeResponses is an httptest server speaking the Responses API
// (/v1/responses, JSON or SSE) as OpenAI's does. It records every body.
type fakeResponses struct {
	*backendtest.Recorder
	reply backendtest.Reply
	// search, when set, makes the model call the client tool search
	// with these arguments instead of replying.
	search string
	// refuse, when set, answers every request with HTTP 400 and this
	// message, in the API's error body.
	refuse string
}

func newFakeResponses(t *testing.T, reply backendtest.Reply) *fakeResponses {
	f := &fakeResponses{reply: reply}
	f.Recorder = backendtest.NewRecorder(t, f.serve)
	return f
}

func (f *fakeResponses) backend(t *testing.T) *openai.ResponsesBackend {
	return backendtest.NewBackend(t, openai.NewResponses, "gpt-5-mini", nil, func(o *openai.Options) {
		o.BaseURL, o.APIKey = f.URL+"/v1", "sk-test"
	})
}

func (f *fakeResponses) serve(_ int, w http.ResponseWriter, r *http.Request, data []byte) {
	if r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	if f.refuse != "" {
		apiError(w, http.StatusBadRequest, f.refuse)
		return
	}
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		apiError(w, http.StatusBadRequest, "We could not parse the JSON body of your request.")
		return
	}
	reply := f.reply
	if _, ok := body["text"]; ok {
		reply.Content = backendtest.WireContent(reply.Content)
	}
	var output []any
	if f.search != "" {
		output = append(output, map[string]any{"type": "tool_search_call", "id": "tsc_1", "call_id": "call_search",
			"arguments": json.RawMessage(f.search), "execution": "client", "status": "completed"})
	} else {
		if reply.Content != "" {
			output = append(output, map[string]any{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
				"content": []any{map[string]any{"type": "output_text", "text": reply.Content, "annotations": []any{}}}})
		}
		for _, c := range reply.Calls {
			output = append(output, map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID,
				"name": c.Name, "arguments": string(c.Arguments), "status": "completed"})
		}
	}
	resp := map[string]any{"id": "resp_1", "object": "response", "created_at": 1741570283, "status": "completed",
		"model": "gpt-5-mini", "output": output, "incomplete_details": nil, "error": nil,
		"usage": map[string]any{"input_tokens": 412, "input_tokens_details": map[string]any{"cached_tokens": 384, "cache_write_tokens": 0},
			"output_tokens": 23, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 435}}
	if output == nil {
		resp["output"] = []any{}
	}
	done := "response.completed"
	if reply.Finish == "length" {
		resp["status"], resp["incomplete_details"], done = "incomplete", map[string]any{"reason": "max_output_tokens"}, "response.incomplete"
	}
	if stream, _ := body["stream"].(bool); stream {
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(data map[string]any) {
			d, _ := json.Marshal(data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], d)
		}
		send(map[string]any{"type": "response.created", "sequence_number": 0, "response": map[string]any{"id": "resp_1", "object": "response", "status": "in_progress", "output": []any{}}})
		for i, piece := range backendtest.Split(reply.Content, 3) {
			send(map[string]any{"type": "response.output_text.delta", "sequence_number": i + 1, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": piece})
		}
		send(map[string]any{"type": done, "sequence_number": 9, "response": resp})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func TestResponsesConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Harness{
		Modes:        []llm.Mode{llm.ModeEnvelope, llm.ModeNative},
		RawArguments: true,
		WrapEnvelope: true,
		New: func(t *testing.T, r backendtest.Reply) llm.Backend {
			return newFakeResponses(t, r).backend(t)
		},
	})
}

func TestResponsesToolChoice(t *testing.T) {
	backendtest.RunToolChoice(t, func(t *testing.T, req *llm.Request) map[string]any {
		f := newFakeResponses(t, backendtest.Reply{Calls: []llm.ToolCall{{ID: "call_1", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}, Finish: "tool_calls"})
		if _, err := f.backend(t).Chat(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		return backendtest.DecodeBody(t, f.Requests()[0])
	}, "", `"required"`)
}

func TestResponsesRequestBody(t *testing.T) {
	f := newFakeResponses(t, backendtest.Reply{Calls: []llm.ToolCall{{ID: "call_1", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}, Finish: "tool_calls"})
	req := backendtest.Request(llm.ModeNative)
	resp, err := f.backend(t).Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Action != llm.ActionCall || resp.Calls[0].ID != "call_1" || resp.FinishReason != llm.FinishToolCalls {
		t.Fatalf("Chat = %+v, want the call", resp)
	}
	if resp.Usage.PromptTokens != 412 || resp.Usage.CachedPromptTokens != 384 {
		t.Errorf("Usage = %+v, want 412 prompt tokens, 384 of them cached", resp.Usage)
	}
	body := backendtest.DecodeBody(t, f.Requests()[0])
	backendtest.CheckFields(t, body, map[string]string{
		"model":               `"gpt-5-mini"`,
		"store":               `false`,
		"max_output_tokens":   `256`,
		"parallel_tool_calls": `false`,
		"instructions":        `"You are a careful banking assistant."`,
		"input":               `[{"type":"message","role":"user","content":"What is the balance of ACC-00001?"}]`,
	})
	tools, _ := body["tools"].([]any)
	if len(tools) != 2 {
		t.Fatalf("tools = %v, want the shortlist", body["tools"])
	}
	for i, spec := range backendtest.Shortlist() {
		tool := tools[i].(map[string]any)
		params, _ := json.Marshal(tool["parameters"])
		if tool["type"] != "function" || tool["name"] != spec.Name || tool["strict"] != true || !backendtest.JSONEqual(t, json.RawMessage(params), string(spec.StrictParameters)) {
			t.Errorf("tools[%d] = %v, want the strict function %s", i, tool, spec.Name)
		}
	}
}

// TestResponsesDeferredToolSearch: every deferred tool is sent as a
// function with defer_loading inside its namespace (the search tool as the
// client-executed tool_search); a search is answered with a
// tool_search_output holding the loaded tools in their namespace; a call
// of a namespaced function goes back with its namespace.
func TestResponsesDeferredToolSearch(t *testing.T) {
	f := newFakeResponses(t, backendtest.Reply{})
	f.search = `{"query":"account balance"}`
	b := f.backend(t)
	req := deferredRequest()
	balance, transfer := backendtest.Shortlist()[0], backendtest.Shortlist()[1]
	fn := func(spec llm.ToolSpec, deferred bool) string {
		d := ""
		if deferred {
			d = `,"defer_loading":true`
		}
		return `{"type":"function","name":"` + spec.Name + `","description":"` + spec.Description + `","parameters":` + string(spec.StrictParameters) + `,"strict":true` + d + `}`
	}
	const nsDescription = `"Tools of bank, loaded by tool_search: get_balance, transfer_funds."`
	wantTools := `[{"type":"tool_search","execution":"client","description":"Search the tools you may use","parameters":` + searchSchema + `},` +
		`{"type":"namespace","name":"bank","description":` + nsDescription + `,"tools":[` + fn(balance, true) + `,` + fn(transfer, true) + `]}]`

	// The model searches: the reply is a call of the search tool.
	resp, err := b.Chat(context.Background(), req)
	if err != nil || resp.Action != llm.ActionCall || resp.Calls[0].Name != "find_tools" || resp.Calls[0].ID != "call_search" {
		t.Fatalf("Chat = %+v, %v; want a call of find_tools", resp, err)
	}
	body := backendtest.DecodeBody(t, f.Requests()[0])
	if !backendtest.JSONEqual(t, body["tools"], wantTools) {
		got, _ := json.Marshal(body["tools"])
		t.Errorf("tools = %s\nwant %s", got, wantTools)
	}

	// toolgate answers with references; the backend sends their
	// definitions, in their namespace.
	req.Messages = append(req.Messages, resp.Message,
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_search", Name: "find_tools", ToolReferences: []string{"get_balance"}})
	f.search, f.reply = "", backendtest.Reply{Calls: []llm.ToolCall{{ID: "call_2", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}, Finish: "tool_calls"}
	resp, err = b.Chat(context.Background(), req)
	if err != nil || resp.Calls[0].Name != "get_balance" {
		t.Fatalf("Chat after the search = %+v, %v; want the call of the loaded tool", resp, err)
	}
	body = backendtest.DecodeBody(t, f.Requests()[1])
	want := `[{"type":"message","role":"user","content":"What is the balance of ACC-00001?"},` +
		`{"type":"tool_search_call","call_id":"call_search","arguments":{"query":"account balance"},"execution":"client","status":"completed"},` +
		`{"type":"tool_search_output","call_id":"call_search","execution":"client","status":"completed","tools":[` +
		`{"type":"namespace","name":"bank","description":` + nsDescription + `,"tools":[` + fn(balance, false) + `]}]}]`
	if !backendtest.JSONEqual(t, body["input"], want) {
		in, _ := json.Marshal(body["input"])
		t.Errorf("input = %s\nwant %s", in, want)
	}
	if !backendtest.JSONEqual(t, body["tools"], wantTools) {
		t.Error("the tools changed from the first request to the second")
	}

	// The call goes back with its namespace.
	req.Messages = append(req.Messages, resp.Message,
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_2", Name: "get_balance", Content: `{"balance":"1000.00"}`})
	f.reply = backendtest.Reply{Content: "1000.00 USD", Finish: "stop"}
	if _, err := b.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	input, _ := backendtest.DecodeBody(t, f.Requests()[2])["input"].([]any)
	if len(input) != 5 || !backendtest.JSONEqual(t, input[3], `{"type":"function_call","call_id":"call_2","name":"get_balance","namespace":"bank","arguments":"{\"account\":\"ACC-00001\"}"}`) {
		in, _ := json.Marshal(input)
		t.Errorf("input = %s, want the call with its namespace as the fourth item", in)
	}

	// A deferred tool no search returned cannot be called.
	f.reply = backendtest.Reply{Calls: []llm.ToolCall{{ID: "call_3", Name: "transfer_funds", Arguments: json.RawMessage(`{}`)}}, Finish: "tool_calls"}
	var oe *llm.OutputError
	if _, err := b.Chat(context.Background(), req); !errors.As(err, &oe) || oe.Problem != llm.ProblemUnknownTool {
		t.Errorf("call of an unreturned deferred tool: error = %v, want unknown_tool", err)
	} else if !strings.Contains(oe.Reason, "available tools: get_balance;") || strings.Contains(oe.Reason, "find_tools") {
		t.Errorf("repair reason %q: want the loaded get_balance named and no find_tools, which this API shows as tool_search", oe.Reason)
	}
}

// searchSchema is the arguments' schema of deferredRequest's search tool.
const searchSchema = `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`

// deferredRequest is backendtest's native request in deferred loading: its
// shortlist deferred, in namespace bank, and a search tool, find_tools,
// the one tool loaded up front.
func deferredRequest() *llm.Request {
	req := backendtest.Request(llm.ModeNative)
	req.Deferred = req.Tools
	for i := range req.Deferred {
		req.Deferred[i].Namespace = "bank"
	}
	req.Tools = []llm.ToolSpec{{Name: "find_tools", Description: "Search the tools you may use", Search: true,
		Parameters: json.RawMessage(searchSchema), StrictParameters: json.RawMessage(searchSchema)}}
	return req
}

// TestResponsesSearchAnswers: each tool result goes out as the answer to
// the call it follows: a tool_search_output for a search, with the tools
// array the API requires even when the search loaded nothing (before, a
// select: of a tool the caller may not use went out without it), and a
// function_call_output for a function call, also when the server gave
// that call the id of an earlier search. Before, a function call under a
// search's id (a server that leaves call ids out names each step's first
// call call_0) had its result sent as an empty tool_search_output: the
// call had no output and the model never read its result.
func TestResponsesSearchAnswers(t *testing.T) {
	search := func(id, query string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "find_tools", Arguments: json.RawMessage(`{"query":"` + query + `"}`)}}}
	}
	call := func(id string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}}}
	}
	result := func(id, content string, refs ...string) llm.Message {
		return llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: content, ToolReferences: refs}
	}
	const loaded = `[{"type":"namespace","name":"bank","description":"Tools of bank, loaded by tool_search: get_balance, transfer_funds.","tools":[` +
		`{"type":"function","name":"get_balance","description":"Get the balance of an account","parameters":` + `{"type":"object","properties":{"account":{"type":"string","pattern":"^ACC-[0-9]{5}$","description":"Account id"}},"required":["account"],"additionalProperties":false}` + `,"strict":true}]}]`
	for _, tc := range []struct {
		name string
		conv []llm.Message
		want string // the last input item
	}{
		{"a search that loaded nothing", []llm.Message{search("call_1", "select:issue_full_refund"), result("call_1", `{"tools":[],"missing":["issue_full_refund"]}`)},
			`{"type":"tool_search_output","call_id":"call_1","execution":"client","status":"completed","tools":[]}`},
		{"a search that loaded a tool", []llm.Message{search("call_1", "balance"), result("call_1", `{"tools":[{"name":"get_balance"}]}`, "get_balance")},
			`{"type":"tool_search_output","call_id":"call_1","execution":"client","status":"completed","tools":` + loaded + `}`},
		{"a function call under an earlier search's id", []llm.Message{search("call_0", "balance"), result("call_0", `{}`, "get_balance"), call("call_0"), result("call_0", `{"balance":"1000.00"}`)},
			`{"type":"function_call_output","call_id":"call_0","output":"{\"balance\":\"1000.00\"}"}`},
		{"a search under an earlier function call's id", []llm.Message{search("call_1", "balance"), result("call_1", `{}`, "get_balance"), call("call_0"), result("call_0", `{}`), search("call_0", "balance"), result("call_0", `{}`, "get_balance")},
			`{"type":"tool_search_output","call_id":"call_0","execution":"client","status":"completed","tools":` + loaded + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeResponses(t, backendtest.Reply{Content: "ok", Finish: "stop"})
			req := deferredRequest()
			req.Messages = append(req.Messages, tc.conv...)
			if _, err := f.backend(t).Chat(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			input, _ := backendtest.DecodeBody(t, f.Requests()[0])["input"].([]any)
			if len(input) == 0 || !backendtest.JSONEqual(t, input[len(input)-1], tc.want) {
				in, _ := json.Marshal(input)
				t.Errorf("input = %s\nwant it to end with %s", in, tc.want)
			}
		})
	}
}

// TestResponsesDeferredRefused: a 400 that refuses tool search (a model
// before gpt-5.4) is an [*llm.ConstraintError] with Deferred set, so the
// runtime can resend the shortlist as plain tools.
func TestResponsesDeferredRefused(t *testing.T) {
	backendtest.RunDeferredRefused(t, []backendtest.DeferredRefusal{
		{Name: "tool_search refused", Msg: "Tool 'tool_search' is not supported with gpt-4.1-mini.", Deferred: true, WantDeferred: true},
		{Name: "namespace refused", Msg: "Invalid value: 'namespace'. Supported values are: 'function', 'file_search'.", Deferred: true, WantDeferred: true},
		{Name: "strict refused without deferred tools", Msg: "strict is not supported"},
	}, func(t *testing.T, msg string, deferred bool) error {
		f := newFakeResponses(t, backendtest.Reply{})
		f.refuse = msg
		req := backendtest.Request(llm.ModeNative)
		if deferred {
			req.Deferred = req.Tools
			req.Tools = []llm.ToolSpec{{Name: "find_tools", Search: true, Parameters: json.RawMessage(`{"type":"object"}`)}}
		}
		_, err := f.backend(t).Chat(context.Background(), req)
		return err
	})
}

func TestResponsesDeferredNeedsSearchTool(t *testing.T) {
	f := newFakeResponses(t, backendtest.Reply{Content: "x", Finish: "stop"})
	req := backendtest.Request(llm.ModeNative)
	req.Deferred = req.Tools[1:]
	req.Tools = req.Tools[:1]
	if _, err := f.backend(t).Chat(context.Background(), req); !errors.Is(err, llm.ErrInvalidRequest) {
		t.Errorf("Chat(Deferred without a search tool) error = %v, want ErrInvalidRequest", err)
	}
	if len(f.Requests()) != 0 {
		t.Error("an invalid request was sent")
	}
}

func TestResponsesGrammarMode(t *testing.T) {
	f := newFakeResponses(t, backendtest.Reply{Content: "x", Finish: "stop"})
	var ce *llm.ConstraintError
	if _, err := f.backend(t).Chat(context.Background(), backendtest.Request(llm.ModeGrammar)); !errors.As(err, &ce) {
		t.Errorf("Chat(grammar) error = %v, want *llm.ConstraintError", err)
	}
}

// responsesWire is a Responses server whose i-th answer write writes, given
// whether the request asked for a stream. It records every body.
func responsesWire(t *testing.T, write func(i int, w http.ResponseWriter, stream bool)) (*backendtest.Recorder, *openai.ResponsesBackend) {
	rec := backendtest.NewRecorder(t, func(i int, w http.ResponseWriter, _ *http.Request, data []byte) {
		var body struct {
			Stream bool `json:"stream"`
		}
		_ = json.Unmarshal(data, &body)
		if body.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		write(i, w, body.Stream)
	})
	return rec, backendtest.NewBackend(t, openai.NewResponses, "gpt-5-mini", nil, func(o *openai.Options) {
		o.BaseURL, o.APIKey = rec.URL+"/v1", "sk-test"
	})
}

// responseJSON is a Responses response object of status with output and
// the given incomplete_details and error (JSON, "null" for none).
func responseJSON(status, output, incomplete, errJSON string) string {
	return fmt.Sprintf(`{"id":"resp_1","object":"response","created_at":1741570283,"status":%q,"model":"gpt-5-mini","output":%s,"incomplete_details":%s,"error":%s,"usage":{"input_tokens":10,"output_tokens":3,"total_tokens":13}}`,
		status, output, incomplete, errJSON)
}

// writeResponse writes resp as a JSON body or, streaming, as
// response.created then the terminal event its status names.
func writeResponse(w http.ResponseWriter, stream bool, resp string) {
	if !stream {
		io.WriteString(w, resp)
		return
	}
	var r struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal([]byte(resp), &r)
	done := map[string]string{"completed": "response.completed", "incomplete": "response.incomplete", "failed": "response.failed"}[r.Status]
	fmt.Fprintf(w, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":%s}\n\n", responseJSON("in_progress", "[]", "null", "null"))
	fmt.Fprintf(w, "event: %s\ndata: {\"type\":%q,\"sequence_number\":1,\"response\":%s}\n\n", done, done, resp)
}

// TestResponsesRefusal: a `refusal` content part, and a reply cut off by
// the content filter (status incomplete, reason content_filter), are
// refusals, as in Chat Completions: problem refused, asked no more. Before,
// the refusal's text was a malformed envelope (repaired twice) and a
// filtered reply finished with the unknown reason "content_filter".
func TestResponsesRefusal(t *testing.T) {
	refusal := `[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}]`
	for _, tc := range []struct {
		name   string
		resp   string
		mode   llm.Mode
		answer string // "" means problem refused
	}{
		{"refusal in envelope mode", responseJSON("completed", refusal, "null", "null"), llm.ModeEnvelope, ""},
		{"content filter", responseJSON("incomplete", "[]", `{"reason":"content_filter"}`, "null"), llm.ModeNative, ""},
		{"content filter in envelope mode", responseJSON("incomplete", "[]", `{"reason":"content_filter"}`, "null"), llm.ModeEnvelope, ""},
		{"refusal in native mode", responseJSON("completed", refusal, "null", "null"), llm.ModeNative, "I can't help with that."},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				_, b := responsesWire(t, func(_ int, w http.ResponseWriter, stream bool) { writeResponse(w, stream, tc.resp) })
				req := backendtest.Request(tc.mode)
				if stream {
					req.OnDelta = func(string) {}
				}
				resp, err := backendtest.CheckedChat(t, b, &llm.Options{Logger: slog.New(slog.DiscardHandler)}, req)
				checkRefused(t, tc.name, resp, err, tc.answer)
			})
		}
	}
}

// TestResponsesErrorEvents: an error the Responses API reports after HTTP
// 200 (a `type: "error"` stream event, a `response.failed` event or a
// failed response body) is the [*llm.StatusError] it would have been before
// the response began, so [llm.Checked] retries a server error and not an
// invalid prompt. Before, the error event was skipped ("the stream ended
// without the response") and a failed response was a plain error.
func TestResponsesErrorEvents(t *testing.T) {
	failed := func(code, msg string) string {
		return responseJSON("failed", "[]", "null", fmt.Sprintf(`{"code":%q,"message":%q}`, code, msg))
	}
	errorEvent := func(code, msg string) string {
		return fmt.Sprintf("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":%s}\n\nevent: error\ndata: {\"type\":\"error\",\"code\":%s,\"message\":%q,\"param\":null,\"sequence_number\":1}\n\n",
			responseJSON("in_progress", "[]", "null", "null"), code, msg)
	}
	for _, tc := range []struct {
		name    string
		stream  bool
		body    string // for a stream, the whole stream; else a response to write either way
		message string
		status  int
	}{
		{"error event server_error", true, errorEvent(`"server_error"`, "The server had an error."), "The server had an error.", 500},
		{"error event rate limit", true, errorEvent(`"rate_limit_exceeded"`, "Rate limit reached."), "Rate limit reached.", 429},
		{"error event without code", true, errorEvent(`null`, "Something went wrong."), "Something went wrong.", 500},
		{"error event invalid prompt", true, errorEvent(`"invalid_prompt"`, "Invalid prompt."), "Invalid prompt.", 400},
		{"nested error event", true, "event: error\ndata: {\"type\":\"error\",\"sequence_number\":1,\"error\":{\"type\":\"server_error\",\"code\":\"server_error\",\"message\":\"Oops.\",\"param\":null}}\n\n", "Oops.", 500},
		{"response.failed server_error", true, failed("server_error", "The model failed."), "The model failed.", 500},
		{"response.failed invalid_prompt", true, failed("invalid_prompt", "Invalid prompt."), "Invalid prompt.", 400},
		{"failed body rate limit", false, failed("rate_limit_exceeded", "Slow down."), "Slow down.", 429},
		{"failed body policy", false, failed("bio_policy", "Refused by policy."), "Refused by policy.", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, b := responsesWire(t, func(_ int, w http.ResponseWriter, stream bool) {
				if strings.HasPrefix(tc.body, "event:") {
					io.WriteString(w, tc.body)
					return
				}
				writeResponse(w, stream, tc.body)
			})
			req := backendtest.Request(llm.ModeNative)
			if tc.stream {
				req.OnDelta = func(string) {}
			}
			resp, err := b.Chat(context.Background(), req)
			var se *llm.StatusError
			if !errors.As(err, &se) || se.StatusCode != tc.status || se.Message != tc.message || se.Backend != "openai-responses" || se.Temporary() != (tc.status >= 429 && tc.status != 400) {
				t.Fatalf("Chat(%s) = %+v, %v; want an *llm.StatusError %d %q of openai-responses", tc.name, resp, err, tc.status, tc.message)
			}
		})
	}
	t.Run("retried", func(t *testing.T) {
		_, b := responsesWire(t, func(i int, w http.ResponseWriter, stream bool) {
			if i == 0 {
				io.WriteString(w, errorEvent(`"server_error"`, "The server had an error."))
				return
			}
			writeResponse(w, stream, responseJSON("completed", `[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[]}]}]`, "null", "null"))
		})
		req := backendtest.Request(llm.ModeNative)
		req.OnDelta = func(string) {}
		slept := 0
		resp, err := backendtest.CheckedChat(t, b, &llm.Options{Logger: slog.New(slog.DiscardHandler),
			Sleep: func(context.Context, time.Duration) error { slept++; return nil }}, req)
		if err != nil || resp.Answer != "ok" || slept != 1 {
			t.Fatalf("Checked Chat(an error event, then ok) = %+v, %v after %d retries; want ok after 1", resp, err, slept)
		}
	})
}

// TestResponsesStreamAfterTheEnd: events a stream sends after its
// terminal event (a late text delta, an error) are not part of the reply.
// Before, the late delta reached OnDelta, so the text shown ("hello
// late") was not the answer ("hello"), and a late error event would fail
// a reply that had completed.
func TestResponsesStreamAfterTheEnd(t *testing.T) {
	msg := `[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"hello","annotations":[]}]}]`
	_, b := responsesWire(t, func(_ int, w http.ResponseWriter, _ bool) {
		fmt.Fprint(w, "event: response.brand_new_event\ndata: {\"type\":\"response.brand_new_event\",\"sequence_number\":0,\"x\":{\"y\":1}}\n\n")
		fmt.Fprint(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"hello\"}\n\n")
		fmt.Fprintf(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":%s}\n\n", responseJSON("completed", msg, "null", "null"))
		fmt.Fprint(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":3,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\" late\"}\n\n")
		fmt.Fprint(w, "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"late\",\"param\":null,\"sequence_number\":4}\n\n")
	})
	req := backendtest.Request(llm.ModeNative)
	var shown strings.Builder
	req.OnDelta = func(d string) { shown.WriteString(d) }
	resp, err := b.Chat(context.Background(), req)
	if err != nil || resp.Answer != "hello" || shown.String() != "hello" {
		t.Fatalf("Chat(a stream with events after response.completed) = %+v, %v, shown %q; want the answer hello, shown hello", resp, err, shown.String())
	}
}

// TestResponsesStreamCutOff: a stream that ends before its terminal event
// is one error naming that, prefixed once. Before, it read "openai:
// responses: openai: responses: the stream ended without the response".
func TestResponsesStreamCutOff(t *testing.T) {
	_, b := responsesWire(t, func(_ int, w http.ResponseWriter, _ bool) {
		fmt.Fprintf(w, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":%s}\n\n", responseJSON("in_progress", "[]", "null", "null"))
		fmt.Fprint(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"The balance is\"}\n\n")
	})
	req := backendtest.Request(llm.ModeNative)
	req.OnDelta = func(string) {}
	resp, err := b.Chat(context.Background(), req)
	if err == nil || !strings.HasPrefix(err.Error(), "openai: responses: the stream ended") || strings.Count(err.Error(), "openai:") != 1 {
		t.Fatalf("Chat(a stream cut off before its terminal event) = %+v, %v; want one error saying the stream ended, prefixed once", resp, err)
	}
}

// TestResponsesCallWithoutID: a function_call item without a call_id (an
// OpenAI-compatible server that leaves it out) gets an id, as a Chat
// Completions call does, so that its result goes back as the
// function_call_output of that call. Before, the call kept the empty id:
// the runtime sent the result as a user message, and the next request
// carried a function_call with call_id "" that no output answered.
func TestResponsesCallWithoutID(t *testing.T) {
	call := `[{"type":"function_call","id":"fc_1","name":"get_balance","arguments":"{\"account\":\"ACC-00001\"}","status":"completed"}]`
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			rec, b := responsesWire(t, func(_ int, w http.ResponseWriter, stream bool) {
				writeResponse(w, stream, responseJSON("completed", call, "null", "null"))
			})
			id := backendtest.CallWithoutID(t, b, stream)
			input, _ := backendtest.DecodeBody(t, rec.Requests()[1])["input"].([]any)
			ids := map[string]any{}
			for _, it := range input {
				it, _ := it.(map[string]any)
				if typ, _ := it["type"].(string); typ == "function_call" || typ == "function_call_output" {
					ids[typ] = it["call_id"]
				}
			}
			if ids["function_call"] != id || ids["function_call_output"] != id {
				t.Errorf("call ids of the second request = %v, want the call and its output under %q", ids, id)
			}
		})
	}
}
