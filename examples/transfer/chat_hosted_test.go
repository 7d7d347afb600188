package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Hosted tool search end to end: `transfer chat` runs a two-turn
// conversation through each API that loads deferred tools (Anthropic's
// Messages API, OpenAI's Responses API) against an httptest server
// speaking that API's wire format. The model searches, toolgate answers
// with the tools to load, the model calls a loaded tool through the
// gateway and answers; in the second turn it calls another. The checks are
// on the request bodies: every tool alice may use is sent deferred in
// every request and nothing else is (not the refund tool she lacks the
// scope for, not the demo catalog's tools, which have no server), and the
// tools and the system prompt — the prompt cache's prefix — are byte-
// identical across every step of both turns, while the conversation only
// grows at its end.

// hostedTurns is what alice asks, one turn a line.
const hostedTurns = "what is the balance of ACC-00001?\nand its transactions?\nexit\n"

// hostedOutput is what chat prints of the two turns, whatever the API:
// the model's search, the calls through the gateway and the answers.
var hostedOutput = []string{
	`find_tools "select:get_balance" found bank/get_balance`,
	`call bank/get_balance {"account":"ACC-00001"} -> ok`,
	"ACC-00001 holds 1000.00 USD.",
	`call bank/list_transactions {"account":"ACC-00001","limit":5} -> ok`,
	"No transactions yet.",
}

// outputHas reports each of wants that out lacks.
func outputHas(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// hostedFake is an httptest server for one API: it records each request
// body and answers the i-th request with reply(i, body).
type hostedFake struct {
	mu     sync.Mutex
	bodies []map[string]json.RawMessage
	raw    []string
}

func (f *hostedFake) serve(t *testing.T, path, auth string, reply func(i int, w http.ResponseWriter)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]json.RawMessage
		if r.URL.Path != path || !strings.Contains(r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"), auth) || json.Unmarshal(data, &body) != nil {
			t.Errorf("unexpected request %s %s: %.200s", r.Method, r.URL.Path, data)
			w.WriteHeader(http.StatusNotFound)
			return
		}
		f.mu.Lock()
		i := len(f.bodies)
		f.bodies, f.raw = append(f.bodies, body), append(f.raw, string(data))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		reply(i, w)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// checkHosted asserts what both APIs share: the requests' count, that no
// request names a tool alice may not be offered, and that the prefix
// fields are the same in every request.
func checkHosted(t *testing.T, f *hostedFake, want int, prefix ...string) {
	t.Helper()
	if len(f.bodies) != want {
		t.Fatalf("%d requests, want %d", len(f.bodies), want)
	}
	for i, raw := range f.raw {
		// issue_full_refund needs billing:admin; the others are demo
		// catalog tools (GitHub, memory) with no server connected.
		for _, absent := range []string{"issue_full_refund", "create_issue", "search_nodes", "read_graph"} {
			t.Run(absent, func(t *testing.T) {
				if strings.Contains(raw, absent) {
					t.Errorf("request %d names %s, which alice may not be offered", i, absent)
				}
			})
		}
	}
	for _, k := range prefix {
		for i, body := range f.bodies[1:] {
			if string(body[k]) != string(f.bodies[0][k]) {
				t.Errorf("request %d: %s differs from the first request's:\n%s\n%s", i+1, k, body[k], f.bodies[0][k])
			}
		}
	}
}

// growing asserts that each request's conversation (field k, a JSON array)
// starts with the previous request's.
func growing(t *testing.T, f *hostedFake, k string) {
	t.Helper()
	for i := 1; i < len(f.bodies); i++ {
		prev, cur := strings.TrimSuffix(string(f.bodies[i-1][k]), "]"), string(f.bodies[i][k])
		if !strings.HasPrefix(cur, prev) {
			t.Errorf("request %d: %s does not extend request %d's:\n%s\n%s", i, k, i-1, prev, cur)
		}
	}
}

func TestChatHostedAnthropic(t *testing.T) {
	replies := []string{
		`[{"type":"tool_use","id":"toolu_s","name":"find_tools","input":{"query":"select:get_balance"}}]|tool_use`,
		`[{"type":"tool_use","id":"toolu_1","name":"get_balance","input":{"account":"ACC-00001"}}]|tool_use`,
		`[{"type":"text","text":"ACC-00001 holds 1000.00 USD."}]|end_turn`,
		`[{"type":"tool_use","id":"toolu_2","name":"list_transactions","input":{"account":"ACC-00001","limit":5}}]|tool_use`,
		`[{"type":"text","text":"No transactions yet."}]|end_turn`,
	}
	f := &hostedFake{}
	srv := f.serve(t, "/v1/messages", "test-key", func(i int, w http.ResponseWriter) {
		reply := `[{"type":"text","text":"(no more replies)"}]|end_turn`
		if i < len(replies) {
			reply = replies[i]
		}
		content, stop, _ := strings.Cut(reply, "|")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":`+content+
			`,"stop_reason":"`+stop+`","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":900,"cache_creation_input_tokens":0}}`)
	})
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "test-key")

	code, out, errOut := runChatCmd(t, hostedTurns, chatArgs(t.TempDir(), "--backend", "anthropic")...)
	if code != exitOK {
		t.Fatalf("chat = %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	outputHas(t, out, hostedOutput...)
	outputHas(t, out, "backend anthropic (claude-sonnet-4-5, native mode)")
	checkHosted(t, f, len(replies), "tools", "system", "model", "tool_choice")
	growing(t, f, "messages")

	var tools []struct {
		Name  string `json:"name"`
		Defer bool   `json:"defer_loading"`
	}
	if err := json.Unmarshal(f.bodies[0]["tools"], &tools); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range tools {
		got = append(got, fmt.Sprintf("%s deferred=%v", tool.Name, tool.Defer))
	}
	want := []string{"find_tools deferred=false", "get_balance deferred=true", "list_transactions deferred=true", "transfer_funds deferred=true"}
	if !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	if sys := string(f.bodies[0]["system"]); !strings.Contains(sys, "loaded by search") || !strings.Contains(sys, `"cache_control"`) {
		t.Errorf("system = %s, want the deferred-loading prompt with a cache breakpoint", sys)
	}
	// The first request delivers the shortlist as a search; the second
	// carries the model's own search and toolgate's answer.
	if first := string(f.bodies[0]["messages"]); !strings.Contains(first, `"id":"toolgate_shortlist_1"`) || !strings.Contains(first, `"type":"tool_reference"`) {
		t.Errorf("first request's messages = %s, want the shortlist's search answered with tool references", first)
	}
	if second := string(f.bodies[1]["messages"]); !strings.Contains(second, `"tool_use_id":"toolu_s"`) ||
		!strings.Contains(second, `{"tool_name":"get_balance","type":"tool_reference"}`) {
		t.Errorf("second request's messages = %s, want the model's search answered with a reference to get_balance", second)
	}
}

// responsesReply is the Responses API's response around output items.
func responsesReply(output string) string {
	return `{"id":"resp_1","object":"response","created_at":1741570283,"status":"completed","model":"gpt-5.4","output":` + output +
		`,"incomplete_details":null,"error":null,"usage":{"input_tokens":412,"input_tokens_details":{"cached_tokens":384},"output_tokens":23,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":435}}`
}

func TestChatHostedResponses(t *testing.T) {
	message := func(text string) string {
		return `[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"` + text + `","annotations":[]}]}]`
	}
	call := func(id, name, args string) string {
		return `[{"type":"function_call","id":"fc_` + id + `","call_id":"` + id + `","namespace":"bank","name":"` + name + `","arguments":` + args + `,"status":"completed"}]`
	}
	replies := []string{
		`[{"type":"tool_search_call","id":"tsc_1","call_id":"call_s","arguments":{"query":"select:get_balance"},"execution":"client","status":"completed"}]`,
		call("call_1", "get_balance", `"{\"account\":\"ACC-00001\"}"`),
		message("ACC-00001 holds 1000.00 USD."),
		call("call_2", "list_transactions", `"{\"account\":\"ACC-00001\",\"limit\":5}"`),
		message("No transactions yet."),
	}
	f := &hostedFake{}
	srv := f.serve(t, "/v1/responses", "Bearer sk-test", func(i int, w http.ResponseWriter) {
		out := message("(no more replies)")
		if i < len(replies) {
			out = replies[i]
		}
		io.WriteString(w, responsesReply(out))
	})
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-test")

	code, out, errOut := runChatCmd(t, hostedTurns, chatArgs(t.TempDir(), "--backend", "openai", "--api", "responses")...)
	if code != exitOK {
		t.Fatalf("chat = %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	outputHas(t, out, hostedOutput...)
	outputHas(t, out, "backend openai (Responses API) (gpt-5.4, native mode)")
	checkHosted(t, f, len(replies), "tools", "instructions", "model", "store", "parallel_tool_calls")
	growing(t, f, "input")

	// The tools: the client-executed tool search, and alice's tools as
	// deferred functions in their namespace.
	var tools []struct {
		Type      string `json:"type"`
		Execution string `json:"execution"`
		Name      string `json:"name"`
		Tools     []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Defer bool   `json:"defer_loading"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(f.bodies[0]["tools"], &tools); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range tools {
		got = append(got, tool.Type+" "+tool.Execution+tool.Name)
		for _, fn := range tool.Tools {
			got = append(got, fmt.Sprintf("  %s %s deferred=%v", fn.Type, fn.Name, fn.Defer))
		}
	}
	want := []string{"tool_search client", "namespace bank", "  function get_balance deferred=true",
		"  function list_transactions deferred=true", "  function transfer_funds deferred=true"}
	if !slices.Equal(got, want) {
		t.Errorf("tools = %q, want %q", got, want)
	}
	// The instructions name no tool the request lacks: the search is the
	// built-in tool_search here, not find_tools.
	if ins := string(f.bodies[0]["instructions"]); strings.Contains(ins, "find_tools") || !strings.Contains(ins, "loaded by search") {
		t.Errorf("instructions = %s, want the deferred-loading prompt, naming no find_tools", ins)
	}
	// The first request delivers the shortlist as a client tool search; the
	// second carries the model's own and toolgate's answer: get_balance's
	// definition, in its namespace; later requests send the calls back
	// with their namespace.
	first, second, last := string(f.bodies[0]["input"]), string(f.bodies[1]["input"]), string(f.bodies[len(f.bodies)-1]["input"])
	if !strings.Contains(first, `"type":"tool_search_call","call_id":"toolgate_shortlist_1"`) || !strings.Contains(first, `"type":"tool_search_output"`) {
		t.Errorf("first request's input = %s, want the shortlist as a tool search and its output", first)
	}
	if !strings.Contains(second, `{"type":"tool_search_output","call_id":"call_s","execution":"client","status":"completed","tools":[{"type":"namespace","name":"bank"`) ||
		!strings.Contains(second[strings.Index(second, `"call_id":"call_s","execution"`):], `"name":"get_balance"`) {
		t.Errorf("second request's input = %s, want the model's search answered with get_balance in its namespace", second)
	}
	for _, id := range []string{"call_1", "call_2"} {
		t.Run(id, func(t *testing.T) {
			if !strings.Contains(last, `"type":"function_call","call_id":"`+id+`","name":`) || !strings.Contains(last, `"namespace":"bank"`) {
				t.Errorf("last request's input = %s, want the call %s sent back with its namespace", last, id)
			}
		})
	}
}

// TestChatHostedRefused: a model without tool search refuses deferred
// loading with the API's 400; chat says so in one line and goes on with
// the shortlist as plain tools.
func TestChatHostedRefused(t *testing.T) {
	f := &hostedFake{}
	srv := f.serve(t, "/v1/messages", "test-key", func(i int, w http.ResponseWriter) {
		f.mu.Lock()
		deferred := strings.Contains(string(f.bodies[i]["tools"]), `"defer_loading":true`)
		f.mu.Unlock()
		if deferred {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"tools.1.custom.defer_loading: Extra inputs are not permitted"}}`)
			return
		}
		content := `[{"type":"tool_use","id":"toolu_1","name":"get_balance","input":{"account":"ACC-00001"}}]`
		stop := "tool_use"
		if i > 1 {
			content, stop = `[{"type":"text","text":"ACC-00001 holds 1000.00 USD."}]`, "end_turn"
		}
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-3-haiku","content":`+content+
			`,"stop_reason":"`+stop+`","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`)
	})
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "test-key")

	code, out, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), "--backend", "anthropic", "--model", "claude-3-haiku", "--once", "what is the balance of ACC-00001?")...)
	if code != exitOK {
		t.Fatalf("chat = %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	warning := `warning: the model refused deferred tool loading ("tools.1.custom.defer_loading: Extra inputs are not permitted"); sending each step's shortlist as native tools`
	if strings.Count(out, "warning:") != 1 || !strings.Contains(out, warning) {
		t.Errorf("output = %s\nwant the one warning %q", out, warning)
	}
	outputHas(t, out, `call bank/get_balance {"account":"ACC-00001"} -> ok`, "ACC-00001 holds 1000.00 USD.")
	if len(f.raw) != 3 {
		t.Fatalf("%d requests, want the refused one and 2 more", len(f.raw))
	}
	for i, raw := range f.raw[1:] {
		if strings.Contains(raw, "defer_loading") || strings.Contains(raw, "tool_reference") || strings.Contains(raw, "issue_full_refund") {
			t.Errorf("request %d after the refusal still defers, references or names the refund tool: %.300s", i+1, raw)
		}
	}
}

// TestChatHostedResponsesNamespaces: with the demo catalog offered
// (--offer-unconnected), the Responses API gets alice's 108 tools as
// deferred functions grouped in one namespace per MCP server, and the
// refund tool in none.
func TestChatHostedResponsesNamespaces(t *testing.T) {
	f := &hostedFake{}
	srv := f.serve(t, "/v1/responses", "Bearer sk-test", func(_ int, w http.ResponseWriter) {
		io.WriteString(w, responsesReply(`[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello.","annotations":[]}]}]`))
	})
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	code, out, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), "--backend", "openai", "--api", "responses", "--offer-unconnected", "--once", "hello")...)
	if code != exitOK {
		t.Fatalf("chat = %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	checkHostedFunctions(t, f.bodies[0]["tools"], 108)
	if strings.Contains(f.raw[0], "issue_full_refund") {
		t.Error("the request names the refund tool alice may not use")
	}
}

// checkHostedFunctions asserts a Responses tools array: the tool search
// first, then namespaces only, each named once, holding want deferred
// functions in all.
func checkHostedFunctions(t *testing.T, raw json.RawMessage, want int) {
	t.Helper()
	var tools []struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Tools []struct {
			Defer bool `json:"defer_loading"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) < 2 || tools[0].Type != "tool_search" {
		t.Fatalf("tools = %s, want the tool search first", raw)
	}
	var names []string
	functions := 0
	for _, tool := range tools[1:] {
		if tool.Type != "namespace" || slices.Contains(names, tool.Name) {
			t.Errorf("tool %s %s: want namespaces only, each once", tool.Type, tool.Name)
		}
		names = append(names, tool.Name)
		for _, fn := range tool.Tools {
			functions++
			if !fn.Defer {
				t.Errorf("a function of namespace %s is not deferred", tool.Name)
			}
		}
	}
	if functions != want {
		t.Errorf("%d deferred functions in namespaces %v, want %d", functions, names, want)
	}
	t.Logf("namespaces: %v", names)
}
