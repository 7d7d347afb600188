// Package backendtest is the conformance kit every [llm.Backend] adapter
// runs: shared fixtures (a shortlist, its envelope schema and a tool that
// must never be sent) and Run, which plays the same well-formed and
// hostile model replies through an adapter's wire-level fake and checks
// that each is parsed, or rejected, the same way.
//
// Fake (over a [Recorder]) is the provider-independent half of such a fake:
// an adapter's test gives it the provider's [Wire] (paths, reply and error
// formats), and [NewBackend] points an adapter at it. [RunSampling],
// [RunRepair], [RunDeferredRefused], [AnswerAfterRetries] and
// [BenchBuildRequest] are the checks and the benchmark the adapters share.
package backendtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
)

// Unauthorized is the name of a tool the principal may not use: it must
// appear nowhere in any request an adapter sends.
const Unauthorized = "issue_full_refund"

// Shortlist returns the turn's shortlist used by the tests: two tools
// with full and strict schemas that set additionalProperties: false.
func Shortlist() []llm.ToolSpec {
	balance := `{"type":"object","properties":{"account":{"type":"string","pattern":"^ACC-[0-9]{5}$","description":"Account id"}},"required":["account"],"additionalProperties":false}`
	transfer := `{"type":"object","properties":{"source_account":{"type":"string"},"target_account":{"type":"string"},"amount":{"type":"string","description":"USD, at most 2 decimals"}},"required":["source_account","target_account","amount"],"additionalProperties":false}`
	return []llm.ToolSpec{
		{Name: "get_balance", Description: "Get the balance of an account", Parameters: json.RawMessage(balance), StrictParameters: json.RawMessage(balance)},
		{Name: "transfer_funds", Description: "Move money between two accounts", Parameters: json.RawMessage(transfer), StrictParameters: json.RawMessage(transfer)},
	}
}

// EnvelopeSchema is the turn envelope's JSON Schema for [Shortlist], in the
// strict form (every property required, additionalProperties false).
const EnvelopeSchema = `{"anyOf":[` +
	`{"type":"object","properties":{"action":{"const":"call"},"tool":{"const":"get_balance"},"arguments":{"type":"object","properties":{"account":{"type":"string"}},"required":["account"],"additionalProperties":false}},"required":["action","tool","arguments"],"additionalProperties":false},` +
	`{"type":"object","properties":{"action":{"const":"call"},"tool":{"const":"transfer_funds"},"arguments":{"type":"object","properties":{"source_account":{"type":"string"},"target_account":{"type":"string"},"amount":{"type":"string"}},"required":["source_account","target_account","amount"],"additionalProperties":false}},"required":["action","tool","arguments"],"additionalProperties":false},` +
	`{"type":"object","properties":{"action":{"const":"answer"},"text":{"type":"string"}},"required":["action","text"],"additionalProperties":false},` +
	`{"type":"object","properties":{"action":{"const":"find_tools"},"query":{"type":"string"}},"required":["action","query"],"additionalProperties":false}]}`

// GBNF is a stand-in envelope grammar: adapters send it verbatim.
const GBNF = `root ::= "{" ws "\"action\"" ws ":" ws "\"answer\"" ws "," ws "\"text\"" ws ":" ws string ws "}"
string ::= "\"" [^"]* "\""
ws ::= [ \t\n]*`

// Request returns a request for mode over [Shortlist], with a system and a
// user message.
func Request(mode llm.Mode) *llm.Request {
	temp := 0.0
	return &llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are a careful banking assistant."},
			{Role: llm.RoleUser, Content: "What is the balance of ACC-00001?"},
		},
		Tools:         Shortlist(),
		Constraint:    llm.Constraint{Mode: mode, EnvelopeSchema: json.RawMessage(EnvelopeSchema), GBNF: GBNF},
		MaxTokens:     256,
		Temperature:   &temp,
		CatalogTokens: 20500,
	}
}

// Reply is what the fake server makes the model say.
type Reply struct {
	Content string
	Calls   []llm.ToolCall
	// Finish is the wire finish reason: "stop", "length" or "tool_calls".
	Finish string
}

// Harness builds an adapter whose server replies with r.
type Harness struct {
	Modes []llm.Mode
	// New returns a Backend whose next chat reply is r.
	New func(t *testing.T, r Reply) llm.Backend
	// WrapEnvelope says that the adapter asks for the envelope wrapped as
	// {"envelope":...} (OpenAI strict needs an object at the root); the
	// fake server must then wrap JSON content with [WireContent].
	WrapEnvelope bool
	// RawArguments says whether the wire format can carry arguments that
	// are not a JSON object (OpenAI's are a string; Ollama's an object).
	RawArguments bool
}

type tcase struct {
	name    string
	modes   string // "envelope" (envelope and grammar) or "native"
	reply   Reply
	action  llm.Action
	tool    string
	answer  string
	query   string
	problem llm.OutputProblem
	rawArgs bool
	// args, when set, is the call's arguments as the reply must carry them.
	args string
	// requireCall sets Request.RequireCall.
	requireCall bool
}

func cases() []tcase {
	call := func(name, args string) []llm.ToolCall {
		return []llm.ToolCall{{ID: "call_1", Name: name, Arguments: json.RawMessage(args)}}
	}
	return []tcase{
		{name: "call", modes: "envelope", reply: Reply{Content: `{"action":"call","tool":"get_balance","arguments":{"account":"ACC-00001"}}`, Finish: "stop"}, action: llm.ActionCall, tool: "get_balance"},
		{name: "answer", modes: "envelope", reply: Reply{Content: `{"action":"answer","text":"It is 1000.00 USD."}`, Finish: "stop"}, action: llm.ActionAnswer, answer: "It is 1000.00 USD."},
		{name: "find_tools", modes: "envelope", reply: Reply{Content: `{"action":"find_tools","query":"refund a payment"}`, Finish: "stop"}, action: llm.ActionFindTools, query: "refund a payment"},
		{name: "malformed JSON", modes: "envelope", reply: Reply{Content: `{"action":"call","tool":"get_balance","arguments":{"account":`, Finish: "stop"}, problem: llm.ProblemMalformed},
		{name: "prose", modes: "envelope", reply: Reply{Content: `Sure! I will check the balance.`, Finish: "stop"}, problem: llm.ProblemMalformed},
		{name: "unknown tool", modes: "envelope", reply: Reply{Content: `{"action":"call","tool":"` + Unauthorized + `","arguments":{"transaction_id":"T1"}}`, Finish: "stop"}, problem: llm.ProblemUnknownTool},
		{name: "extra key", modes: "envelope", reply: Reply{Content: `{"action":"answer","text":"hi","tool":"get_balance"}`, Finish: "stop"}, problem: llm.ProblemMalformed},
		{name: "unknown action", modes: "envelope", reply: Reply{Content: `{"action":"execute","tool":"get_balance"}`, Finish: "stop"}, problem: llm.ProblemMalformed},
		{name: "truncated", modes: "envelope", reply: Reply{Content: `{"action":"answer","text":"The bal`, Finish: "length"}, problem: llm.ProblemTruncated},
		{name: "truncated but parseable", modes: "envelope", reply: Reply{Content: `{"action":"answer","text":"ok"}`, Finish: "length"}, problem: llm.ProblemTruncated},
		{name: "answer where a call is required", modes: "envelope", requireCall: true, reply: Reply{Content: `{"action":"answer","text":"It is 1000.00 USD."}`, Finish: "stop"}, problem: llm.ProblemCallRequired},
		{name: "call where a call is required", modes: "envelope", requireCall: true, reply: Reply{Content: `{"action":"call","tool":"get_balance","arguments":{"account":"ACC-00001"}}`, Finish: "stop"}, action: llm.ActionCall, tool: "get_balance"},
		{name: "find_tools where a call is required", modes: "envelope", requireCall: true, reply: Reply{Content: `{"action":"find_tools","query":"refund a payment"}`, Finish: "stop"}, action: llm.ActionFindTools, query: "refund a payment"},

		{name: "native call", modes: "native", reply: Reply{Calls: call("transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":"5.00"}`), Finish: "tool_calls"}, action: llm.ActionCall, tool: "transfer_funds"},
		{name: "native answer", modes: "native", reply: Reply{Content: "It is 1000.00 USD.", Finish: "stop"}, action: llm.ActionAnswer, answer: "It is 1000.00 USD."},
		{name: "native unknown tool", modes: "native", reply: Reply{Calls: call(Unauthorized, `{"transaction_id":"T1"}`), Finish: "tool_calls"}, problem: llm.ProblemUnknownTool},
		{name: "native two calls", modes: "native", reply: Reply{Calls: append(call("get_balance", `{"account":"ACC-00001"}`), llm.ToolCall{ID: "call_2", Name: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00002"}`)}), Finish: "tool_calls"}, problem: llm.ProblemTooManyCalls},
		{name: "native empty", modes: "native", reply: Reply{Finish: "stop"}, problem: llm.ProblemEmpty},
		{name: "native answer where a call is required", modes: "native", requireCall: true, reply: Reply{Content: "It is 1000.00 USD.", Finish: "stop"}, problem: llm.ProblemCallRequired},
		{name: "native call where a call is required", modes: "native", requireCall: true, reply: Reply{Calls: call("get_balance", `{"account":"ACC-00001"}`), Finish: "tool_calls"}, action: llm.ActionCall, tool: "get_balance"},
		{name: "native truncated", modes: "native", reply: Reply{Content: "The balance of ACC-00001 is", Finish: "length"}, problem: llm.ProblemTruncated},
		{name: "native malformed arguments", modes: "native", reply: Reply{Calls: call("get_balance", `{"account":"ACC-0`), Finish: "tool_calls"}, problem: llm.ProblemMalformed, rawArgs: true},
		// vLLM, Gemini's and other OpenAI-compatible servers send a
		// no-argument call's arguments as "" or null, not "{}".
		{name: "native call without arguments", modes: "native", reply: Reply{Calls: call("get_balance", ``), Finish: "tool_calls"}, action: llm.ActionCall, tool: "get_balance", args: `{}`, rawArgs: true},
		{name: "native call with null arguments", modes: "native", reply: Reply{Calls: call("get_balance", ` null `), Finish: "tool_calls"}, action: llm.ActionCall, tool: "get_balance", args: `{}`, rawArgs: true},
		// A server without a tool-call parser for the model's template
		// (vLLM without --tool-call-parser, llama-server without --jinja)
		// returns the call as the model wrote it, in the text.
		{name: "native call written as Hermes text", modes: "native", reply: Reply{Content: "<tool_call>\n{\"name\": \"get_balance\", \"arguments\": {\"account\": \"ACC-00001\"}}\n</tool_call>", Finish: "stop"}, action: llm.ActionCall, tool: "get_balance", args: `{"account": "ACC-00001"}`},
		{name: "native call written as Llama text", modes: "native", reply: Reply{Content: `<|python_tag|>{"name": "get_balance", "parameters": {"account": "ACC-00001"}}<|eom_id|>`, Finish: "stop"}, action: llm.ActionCall, tool: "get_balance", args: `{"account": "ACC-00001"}`},
		{name: "native call written as Mistral text", modes: "native", reply: Reply{Content: `[TOOL_CALLS][{"name": "get_balance", "arguments": {"account": "ACC-00001"}}]`, Finish: "stop"}, action: llm.ActionCall, tool: "get_balance", args: `{"account": "ACC-00001"}`},
		{name: "native text call of an unknown tool", modes: "native", reply: Reply{Content: `<tool_call>{"name": "` + Unauthorized + `", "arguments": {}}</tool_call>`, Finish: "stop"}, problem: llm.ProblemUnknownTool},
		{name: "native two text calls", modes: "native", reply: Reply{Content: `<tool_call>{"name": "get_balance", "arguments": {"account": "ACC-00001"}}</tool_call><tool_call>{"name": "get_balance", "arguments": {"account": "ACC-00002"}}</tool_call>`, Finish: "stop"}, problem: llm.ProblemTooManyCalls},
		{name: "native text call not JSON", modes: "native", reply: Reply{Content: `<tool_call>get_balance(account="ACC-00001")</tool_call>`, Finish: "stop"}, problem: llm.ProblemMalformed},
		{name: "native repeated key", modes: "native", reply: Reply{Calls: call("get_balance", `{"account":"ACC-00001","account":"ACC-00002"}`), Finish: "tool_calls"}, problem: llm.ProblemMalformed, rawArgs: true},
	}
}

// Run plays every case through h in each of its modes, without and with
// streaming.
func Run(t *testing.T, h Harness) {
	for _, mode := range h.Modes {
		for _, tc := range cases() {
			if (tc.modes == "native") != (mode == llm.ModeNative) || (tc.rawArgs && !h.RawArguments) {
				continue
			}
			for _, stream := range []bool{false, true} {
				name := mode.String() + "/" + tc.name
				if stream {
					name += "/stream"
				}
				t.Run(name, func(t *testing.T) {
					runCase(t, h, mode, tc, stream)
				})
			}
		}
	}
}

func runCase(t *testing.T, h Harness, mode llm.Mode, tc tcase, stream bool) {
	b := h.New(t, tc.reply)
	req := Request(mode)
	req.RequireCall = tc.requireCall
	var deltas strings.Builder
	if stream {
		req.OnDelta = func(d string) { deltas.WriteString(d) }
	}
	resp, err := b.Chat(context.Background(), req)
	wire := tc.reply.Content
	if h.WrapEnvelope && mode == llm.ModeEnvelope {
		wire = WireContent(wire)
	}
	if stream && deltas.String() != wire {
		t.Errorf("streamed deltas = %q, want %q", deltas.String(), wire)
	}
	if tc.problem != "" {
		var oe *llm.OutputError
		if !errors.As(err, &oe) {
			t.Fatalf("Chat(%s) error = %v, want *llm.OutputError %s", tc.name, err, tc.problem)
		}
		if oe.Problem != tc.problem {
			t.Errorf("Chat(%s) problem = %s, want %s (%v)", tc.name, oe.Problem, tc.problem, err)
		}
		if !errors.Is(err, llm.ErrInvalidOutput) {
			t.Errorf("errors.Is(%v, ErrInvalidOutput) = false", err)
		}
		if strings.Contains(oe.Reason, Unauthorized) {
			t.Errorf("the reason %q names the unknown tool", oe.Reason)
		}
		if resp == nil {
			t.Fatal("Chat returned a nil Response with an OutputError; want the raw output")
		}
		if len(resp.Calls) != 0 || resp.Action != "" {
			t.Errorf("rejected reply still carries Action %q, Calls %v", resp.Action, resp.Calls)
		}
		if tc.reply.Content != "" && !strings.Contains(resp.Raw, tc.reply.Content) {
			t.Errorf("Raw = %q, want it to hold the model output %q", resp.Raw, tc.reply.Content)
		}
		return
	}
	if err != nil {
		t.Fatalf("Chat(%s) error = %v", tc.name, err)
	}
	if resp.Action != tc.action {
		t.Fatalf("Chat(%s).Action = %q, want %q", tc.name, resp.Action, tc.action)
	}
	switch tc.action {
	case llm.ActionCall:
		if len(resp.Calls) != 1 || resp.Calls[0].Name != tc.tool {
			t.Fatalf("Calls = %+v, want one call of %s", resp.Calls, tc.tool)
		}
		if !json.Valid(resp.Calls[0].Arguments) {
			t.Errorf("Arguments %s are not JSON", resp.Calls[0].Arguments)
		}
		if tc.args != "" && string(resp.Calls[0].Arguments) != tc.args {
			t.Errorf("Arguments = %s, want %s", resp.Calls[0].Arguments, tc.args)
		}
	case llm.ActionAnswer:
		if resp.Answer != tc.answer {
			t.Errorf("Answer = %q, want %q", resp.Answer, tc.answer)
		}
	case llm.ActionFindTools:
		if resp.FindTools != tc.query {
			t.Errorf("FindTools = %q, want %q", resp.FindTools, tc.query)
		}
	}
	if resp.Raw == "" {
		t.Error("Raw is empty; want the model output for the audit")
	}
	if resp.Message.Role != llm.RoleAssistant {
		t.Errorf("Message.Role = %q, want assistant", resp.Message.Role)
	}
	if resp.Usage.ToolDefinitionTokens <= 0 {
		t.Errorf("Usage.ToolDefinitionTokens = %d, want > 0 for a 2-tool shortlist", resp.Usage.ToolDefinitionTokens)
	}
	if resp.Usage.CatalogTokens != req.CatalogTokens {
		t.Errorf("Usage.CatalogTokens = %d, want %d", resp.Usage.CatalogTokens, req.CatalogTokens)
	}
}

// WireContent is content as a server enforcing the wrapped envelope
// schema sends it: {"envelope":content} when content is JSON, else as it
// is (a hostile or broken server).
func WireContent(content string) string {
	if !json.Valid([]byte(content)) {
		return content
	}
	return `{"envelope":` + content + `}`
}

// CatalogTools returns the tools of the real MCP catalogs committed with
// the transfer example ([testenv.CatalogTools], read with plain
// encoding/json), as ToolSpecs named <file stem>_<tool name> so that
// the GitHub and GitLab servers' tools stay distinct. StrictParameters is
// a copy of Parameters: the strict transform belongs to the grammar
// package, and its output is of the same size.
func CatalogTools(tb testing.TB) []llm.ToolSpec {
	tb.Helper()
	var out []llm.ToolSpec
	for _, t := range testenv.CatalogTools(tb) {
		name := t.Catalog + "_" + t.Name
		if len(name) > 64 {
			name = name[:64]
		}
		out = append(out, llm.ToolSpec{Name: name, Description: t.Description, Parameters: t.InputSchema, StrictParameters: t.InputSchema})
	}
	return out
}

// EnvelopeSchemaFor builds a turn-envelope schema for tools the way the
// grammar package does in shape: a union of one call object per tool
// (with the tool's parameters as "arguments"), the answer and find_tools.
func EnvelopeSchemaFor(tools []llm.ToolSpec) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"anyOf":[`)
	for _, t := range tools {
		name, _ := json.Marshal(t.Name)
		fmt.Fprintf(&b, `{"type":"object","properties":{"action":{"const":"call"},"tool":{"const":%s},"arguments":%s},"required":["action","tool","arguments"],"additionalProperties":false},`, name, t.Parameters)
	}
	b.WriteString(`{"type":"object","properties":{"action":{"const":"answer"},"text":{"type":"string"}},"required":["action","text"],"additionalProperties":false},`)
	b.WriteString(`{"type":"object","properties":{"action":{"const":"find_tools"},"query":{"type":"string"}},"required":["action","query"],"additionalProperties":false}]}`)
	return json.RawMessage(b.String())
}

// ShortlistNames are five tools of the real catalogs a request about a
// GitHub bug report would shortlist.
var ShortlistNames = []string{"github_create_issue", "github_search_issues", "github_get_issue", "github_update_issue", "github_add_issue_comment"}

// CatalogRequests returns two requests in mode over the real catalogs:
// one with the 5-tool shortlist, one with every tool.
func CatalogRequests(tb testing.TB, mode llm.Mode) (shortlist, all *llm.Request) {
	tb.Helper()
	tools := CatalogTools(tb)
	var short []llm.ToolSpec
	for _, want := range ShortlistNames {
		for _, t := range tools {
			if t.Name == want {
				short = append(short, t)
			}
		}
	}
	if len(short) != len(ShortlistNames) {
		tb.Fatalf("found %d of the shortlist %v in the catalogs", len(short), ShortlistNames)
	}
	mk := func(ts []llm.ToolSpec) *llm.Request {
		return &llm.Request{
			Messages: []llm.Message{
				{Role: llm.RoleSystem, Content: "You are a helpful engineering assistant."},
				{Role: llm.RoleUser, Content: "Open a bug report about the login page timing out."},
			},
			Tools:      ts,
			Constraint: llm.Constraint{Mode: mode, EnvelopeSchema: EnvelopeSchemaFor(ts), GBNF: GBNF},
			MaxTokens:  512,
		}
	}
	return mk(short), mk(tools)
}

// Split cuts s into up to n pieces on UTF-8 boundaries, as a server
// streams a reply.
func Split(s string, n int) []string {
	var out []string
	size := max(1, len(s)/max(1, n))
	for len(s) > 0 {
		k := min(size, len(s))
		for k < len(s) && s[k]&0xC0 == 0x80 {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// DecodeBody decodes a recorded request body.
func DecodeBody(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, data)
	}
	return m
}

// JSONEqual reports whether got, marshaled, is the same JSON value as want.
func JSONEqual(t *testing.T, got any, want string) bool {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	g, err := json.Marshal(got)
	if err != nil {
		return false
	}
	var gv any
	if err := json.Unmarshal(g, &gv); err != nil {
		return false
	}
	return reflect.DeepEqual(gv, w)
}

// BenchBuildRequest runs one benchmark per mode of build, an adapter's
// translation of an [llm.Request] into its wire request, over the real
// catalogs' 5-tool shortlist and over all their tools (see
// [CatalogRequests]), and reports the tokens of tool definitions build
// counts and the number of tools.
func BenchBuildRequest(b *testing.B, modes []llm.Mode, build func(*llm.Request) (tokens int, err error)) {
	for _, mode := range modes {
		short, all := CatalogRequests(b, mode)
		for _, c := range []struct {
			name string
			req  *llm.Request
		}{{"5-tools", short}, {"all-tools", all}} {
			b.Run(mode.String()+"/"+c.name, func(b *testing.B) {
				tokens, err := build(c.req)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := build(c.req); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(tokens), "tooldef-tokens")
				b.ReportMetric(float64(len(c.req.Tools)), "tools")
			})
		}
	}
}

// CheckFields reports each top-level field of body that does not hold
// the JSON want gives for it, in the order of the field names.
func CheckFields(t *testing.T, body map[string]any, want map[string]string) {
	t.Helper()
	for _, path := range slices.Sorted(maps.Keys(want)) {
		if !JSONEqual(t, body[path], want[path]) {
			t.Errorf("body.%s = %v, want %s", path, body[path], want[path])
		}
	}
}

// RunSampling checks that a request's temperature and seed override the
// backend's defaults and that none is sent when neither sets one. send
// sends req (in mode) to a backend whose default temperature and seed are
// temp and seed, and returns the object of the request body that carries
// the "temperature" and "seed" fields.
func RunSampling(t *testing.T, mode llm.Mode, send func(t *testing.T, temp *float64, seed *int64, req *llm.Request) map[string]any) {
	f64 := func(v float64) *float64 { return &v }
	i64 := func(v int64) *int64 { return &v }
	cases := []struct {
		name             string
		temp             *float64
		seed             *int64
		reqTemp          *float64
		reqSeed          *int64
		wantTemp, wantSd any
	}{
		{"none", nil, nil, nil, nil, nil, nil},
		{"backend defaults", f64(0), i64(42), nil, nil, 0.0, 42.0},
		{"request overrides", f64(0.7), i64(42), f64(0.2), i64(7), 0.2, 7.0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := Request(mode)
			req.Temperature, req.Seed = tc.reqTemp, tc.reqSeed
			got := send(t, tc.temp, tc.seed, req)
			if got["temperature"] != tc.wantTemp || got["seed"] != tc.wantSd {
				t.Errorf("temperature, seed = %v, %v, want %v, %v", got["temperature"], got["seed"], tc.wantTemp, tc.wantSd)
			}
		})
	}
}

// RunToolChoice checks a backend's native tool choice under
// Request.RequireCall. send sends req (ModeNative, the shortlist) to a
// backend whose server replies with a call and returns the decoded request
// body; auto is the body's tool_choice without RequireCall and required
// its tool_choice with it, as JSON ("" for no tool_choice field).
func RunToolChoice(t *testing.T, send func(t *testing.T, req *llm.Request) map[string]any, auto, required string) {
	for _, tc := range []struct {
		require bool
		want    string
	}{{false, auto}, {true, required}} {
		t.Run(fmt.Sprintf("RequireCall=%v", tc.require), func(t *testing.T) {
			req := Request(llm.ModeNative)
			req.RequireCall = tc.require
			body := send(t, req)
			got, ok := body["tool_choice"]
			switch {
			case tc.want == "" && ok:
				t.Errorf("tool_choice = %v, want none", got)
			case tc.want != "" && !JSONEqual(t, got, tc.want):
				t.Errorf("tool_choice = %v, want %s", got, tc.want)
			}
		})
	}
}

// Answer is the envelope reply the retry checks expect after the retries.
const Answer = `{"action":"answer","text":"ok"}`

// AnswerAfterRetries sends an envelope request (streaming when stream)
// through [llm.Checked] over b, whose server fails the first requests and
// then replies [Answer], and checks that the answer is "ok" after exactly
// the sleeps want, which [llm.Checked] takes from the servers' Retry-After.
// It returns the text streamed.
func AnswerAfterRetries(t *testing.T, b llm.Backend, stream bool, want []time.Duration) string {
	t.Helper()
	var slept []time.Duration
	cb, err := llm.Checked(b, &llm.Options{
		Sleep:  func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return nil },
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	req := Request(llm.ModeEnvelope)
	var deltas strings.Builder
	if stream {
		req.OnDelta = func(d string) { deltas.WriteString(d) }
	}
	resp, err := cb.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Answer != "ok" || !reflect.DeepEqual(slept, want) {
		t.Errorf("Answer %q, slept %v; want ok after %v from Retry-After", resp.Answer, slept, want)
	}
	return deltas.String()
}
