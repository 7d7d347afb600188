package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/anthropic"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/internal/runtimetest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
)

// messagesServer speaks Anthropic's Messages API (JSON, no streaming):
// each request gets the next of its replies' content blocks.
type messagesServer struct {
	mu      sync.Mutex
	bodies  []map[string]json.RawMessage
	replies []string // content arrays, with their stop reason after a '|'
	// noDefer makes it a model without tool search: a request with a
	// deferred tool gets the API's 400 and no reply.
	noDefer bool
}

func (m *messagesServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var body map[string]json.RawMessage
	_ = json.Unmarshal(data, &body)
	m.mu.Lock()
	m.bodies = append(m.bodies, body)
	if m.noDefer && strings.Contains(string(body["tools"]), `"defer_loading":true`) {
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"tools.1.custom.defer_loading: Extra inputs are not permitted"}}`)
		return
	}
	reply := `[{"type":"text","text":"(no more replies)"}]|end_turn`
	if len(m.bodies) <= len(m.replies) {
		reply = m.replies[len(m.bodies)-1]
	}
	m.mu.Unlock()
	content, stop, _ := strings.Cut(reply, "|")
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":`+content+
		`,"stop_reason":"`+stop+`","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":400,"cache_creation_input_tokens":0}}`)
}

// realMCPTools is the 105 tools of the 8 real MCP servers committed with
// the transfer example.
func realMCPTools(t testing.TB) []tools.Tool {
	t.Helper()
	ts, err := catalog.LoadAll(testenv.Catalogs(t)...)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// deferredRegistry holds three bank tools (the refund one needs
// billing:admin), an unscoped weather tool and real, the real MCP tools.
func deferredRegistry(t *testing.T, real []tools.Tool) *tools.Registry {
	t.Helper()
	handler := func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"account":"ACC-00001","balance":"1000.00"}`), nil
	}
	schema := json.RawMessage(`{"type":"object","properties":{"account":{"type":"string"}},"required":["account"],"additionalProperties":false}`)
	reg := tools.NewRegistry()
	err := reg.Add(
		tools.Tool{ID: "bank/get_balance", Card: tools.Card{Name: "get_balance", Summary: "Get the balance of a bank account", Scopes: []string{"accounts:read"}, ReadOnly: true}, InputSchema: schema, Handler: handler},
		tools.Tool{ID: "bank/list_transactions", Card: tools.Card{Name: "list_transactions", Summary: "List the transactions of a bank account", Scopes: []string{"accounts:read"}, ReadOnly: true}, InputSchema: schema, Handler: handler},
		tools.Tool{ID: "weather/get_forecast", Card: tools.Card{Name: "get_forecast", Summary: "Weather forecast for a city", ReadOnly: true}, InputSchema: schema, Handler: handler},
		tools.Tool{ID: "bank/issue_full_refund", Card: tools.Card{Name: "issue_full_refund", Summary: "Refund a payment in full", Scopes: []string{"billing:admin"}, Irreversible: true}, InputSchema: schema, Handler: handler},
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(real...); err != nil {
		t.Fatal(err)
	}
	return reg
}

// deferredBalanceTurn runs the turn both deferred tests start with: an
// agent over reg with opts and Options.Deferred (progressive, K 2) and an
// Anthropic backend talking to fake, is asked for the balance
// of ACC-00001; the turn must call bank/get_balance once and answer that it
// holds 1000.00 USD. It returns the session, for a next turn.
func deferredBalanceTurn(t *testing.T, reg *tools.Registry, fake *messagesServer, opts runtime.Options) *runtime.Session {
	t.Helper()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	model, err := anthropic.New("claude-test", &anthropic.Options{BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	gw, disc := runtimetest.Stack(t, reg, &gateway.Options{Logger: quiet})
	opts.Logger, opts.Mode, opts.Deferred, opts.Strategy, opts.K = quiet, llm.ModeNative, true, runtime.StrategyProgressive, 2
	agent, err := runtime.New(reg, disc, gw, model, &opts)
	if err != nil {
		t.Fatal(err)
	}
	sess := agent.NewSession(tools.Principal{ID: "u1", Tenant: "acme", Scopes: []string{"accounts:read"}}, "s1", nil)
	turn, err := sess.Run(context.Background(), "what is the balance of account ACC-00001?")
	if err != nil {
		t.Fatal(err)
	}
	if turn.Answer != "ACC-00001 holds 1000.00 USD." || len(turn.Calls) != 1 || turn.Calls[0].Tool != "bank/get_balance" || turn.Calls[0].Err != nil {
		t.Fatalf("turn = %+v, want one call of bank/get_balance and the answer", turn)
	}
	return sess
}

// TestDeferredLoading runs a turn in deferred mode over the real Anthropic
// backend and a wire-level fake: every authorized tool is deferred in every
// request and the unauthorized one in none, the step's shortlist arrives as
// a search answered with tool_reference blocks, the model calls a
// referenced tool through the gateway, and the tools and system prompt (the
// cached prefix) are byte-identical from one request to the next.
func TestDeferredLoading(t *testing.T) {
	real := realMCPTools(t)
	reg := deferredRegistry(t, real)
	fake := &messagesServer{replies: []string{
		`[{"type":"tool_use","id":"toolu_1","name":"get_balance","input":{"account":"ACC-00001"}}]|tool_use`,
		`[{"type":"text","text":"ACC-00001 holds 1000.00 USD."}]|end_turn`,
	}}
	deferredBalanceTurn(t, reg, fake, runtime.Options{})
	if len(fake.bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(fake.bodies))
	}
	for i, body := range fake.bodies {
		var ts []struct {
			Name  string `json:"name"`
			Defer bool   `json:"defer_loading"`
		}
		if err := json.Unmarshal(body["tools"], &ts); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range ts {
			names = append(names, tool.Name)
			if tool.Defer != (tool.Name != runtime.FindToolsName) {
				t.Errorf("request %d: tool %s defer_loading=%v, want only find_tools loaded up front", i, tool.Name, tool.Defer)
			}
		}
		if len(names) != 1+3+len(real) || names[0] != runtime.FindToolsName || !slices.Contains(names, "get_forecast") {
			t.Errorf("request %d tools = %d (%v), want find_tools first and every authorized tool (%d)", i, len(names), names, 3+len(real))
		}
		for k, v := range body {
			if strings.Contains(string(v), "issue_full_refund") {
				t.Errorf("request %d: %s names the unauthorized tool", i, k)
			}
		}
	}
	// The prompt names no search tool (the Responses API shows it as
	// tool_search) and no listed tools (none are).
	if sys := string(fake.bodies[0]["system"]); strings.Contains(sys, "find_tools") || !strings.Contains(sys, "loaded by search") {
		t.Errorf("system = %s, want the deferred-loading prompt, naming no search tool", sys)
	}
	if strings.Contains(string(fake.bodies[0]["tools"]), "listed tools") {
		t.Error("the search tool's description speaks of listed tools, and none are listed")
	}
	for _, k := range []string{"tools", "system"} {
		t.Run(k, func(t *testing.T) {
			if string(fake.bodies[0][k]) != string(fake.bodies[1][k]) {
				t.Errorf("%s changed between the steps:\n%s\n%s", k, fake.bodies[0][k], fake.bodies[1][k])
			}
		})
	}
	first := string(fake.bodies[0]["messages"])
	if !strings.Contains(first, `"name":"find_tools"`) || !strings.Contains(first, `{"tool_name":"get_balance","type":"tool_reference"}`) {
		t.Errorf("the first request's messages = %s, want the shortlist as a find_tools search answered with a tool_reference to get_balance", first)
	}
	// In the order the API reads a prompt (tools, system, messages), the
	// second request shares this much of its bytes with the first.
	prompt := func(b map[string]json.RawMessage) string {
		return string(b["tools"]) + string(b["system"]) + strings.TrimSuffix(string(b["messages"]), "]")
	}
	p0, p1 := prompt(fake.bodies[0]), prompt(fake.bodies[1])
	shared := 0
	for shared < len(p0) && shared < len(p1) && p0[shared] == p1[shared] {
		shared++
	}
	t.Logf("step 2 shares %d of its %d prompt bytes (%.1f%%) with step 1", shared, len(p1), 100*float64(shared)/float64(len(p1)))
	if shared != len(p0) {
		t.Errorf("step 2's prompt does not start with step 1's whole prompt (%d of %d bytes shared)", shared, len(p0))
	}
	// The second request starts with the first one's messages.
	second := string(fake.bodies[1]["messages"])
	if !strings.HasPrefix(second, strings.TrimSuffix(first, "]")) {
		t.Errorf("the second request's messages do not extend the first's:\n%s\n%s", first, second)
	}
}

// refusedBalanceReplies are a model's replies to deferredBalanceTurn
// without tool search (a messagesServer with noDefer): the deferred request
// refused, then the call of get_balance and the answer.
func refusedBalanceReplies() []string {
	return []string{
		`(refused)|`,
		`[{"type":"tool_use","id":"toolu_1","name":"get_balance","input":{"account":"ACC-00001"}}]|tool_use`,
		`[{"type":"text","text":"ACC-00001 holds 1000.00 USD."}]|end_turn`,
	}
}

// TestDeferredRefusedFallsBack: a model without tool search refuses the
// first deferred request with the API's 400; the session then sends the
// step again with its shortlist as plain native tools (no deferred tool,
// no tool reference), reports it once (EventDeferredOff), and stays so for
// its next turn.
func TestDeferredRefusedFallsBack(t *testing.T) {
	reg := deferredRegistry(t, realMCPTools(t))
	fake := &messagesServer{noDefer: true, replies: append(refusedBalanceReplies(), `[{"type":"text","text":"Still 1000.00 USD."}]|end_turn`)}
	var offs []runtime.Event
	sess := deferredBalanceTurn(t, reg, fake, runtime.Options{Observer: func(_ context.Context, e runtime.Event) {
		if e.Kind == runtime.EventDeferredOff {
			offs = append(offs, e)
		}
	}})
	if _, err := sess.Run(context.Background(), "and now?"); err != nil {
		t.Fatal(err)
	}
	if len(offs) != 1 || offs[0].Step != 1 || !strings.Contains(offs[0].Reason, "defer_loading") {
		t.Errorf("EventDeferredOff = %+v, want one, at step 1, with the API's reason", offs)
	}
	if len(fake.bodies) != 4 {
		t.Fatalf("%d requests, want the refused one and 3 more", len(fake.bodies))
	}
	for i, body := range fake.bodies[1:] {
		for k, v := range body {
			for _, bad := range []string{"defer_loading", "tool_reference", "issue_full_refund", "toolgate_shortlist"} {
				t.Run(bad, func(t *testing.T) {
					if strings.Contains(string(v), bad) {
						t.Errorf("request %d after the refusal: %s holds %s", i+2, k, bad)
					}
				})
			}
		}
		if !strings.Contains(string(body["tools"]), `"name":"get_balance"`) {
			t.Errorf("request %d after the refusal: tools %s lack the shortlisted get_balance", i+2, body["tools"])
		}
	}
}

// TestDeferredRefusedCountsAfresh: with Options.FitContext, the messages
// that take the places of the dropped search (a refusal of deferred
// loading drops the step's search and sends the step again) are counted
// afresh. Before, they kept the dropped messages' estimates: on a 460-token
// window the turn's second step counted its 72 tokens of conversation as
// the search's 122 and failed with ErrContextOverflow, though it fit.
func TestDeferredRefusedCountsAfresh(t *testing.T) {
	reg := deferredRegistry(t, realMCPTools(t))
	fake := &messagesServer{noDefer: true, replies: refusedBalanceReplies()}
	deferredBalanceTurn(t, reg, fake, runtime.Options{FitContext: true, ContextTokens: 460})
}

// TestDeferredReloadsTrimmedTools: with Options.FitContext, a request that
// leaves the oldest turns out (EventTrimmed) also leaves out the search
// results that loaded their tools, so the step's shortlisted tools are
// delivered again, as a search answered in the current turn, and the
// model can call them. Before, the session remembered them as loaded: in
// the turn that left the first one out, the shortlist (get_balance again)
// arrived nowhere in the request, and the model's call of it was refused
// as an unknown tool.
func TestDeferredReloadsTrimmedTools(t *testing.T) {
	reg := deferredRegistry(t, realMCPTools(t))
	const turns = 6
	fake := &messagesServer{}
	for i := range turns {
		fake.replies = append(fake.replies,
			fmt.Sprintf(`[{"type":"tool_use","id":"toolu_%d","name":"get_balance","input":{"account":"ACC-00001"}}]|tool_use`, i),
			`[{"type":"text","text":"ACC-00001 holds 1000.00 USD."}]|end_turn`)
	}
	trimmedAt := 0 // the step whose request first left turns out
	sess := deferredBalanceTurn(t, reg, fake, runtime.Options{FitContext: true, ContextTokens: 600,
		Observer: func(_ context.Context, e runtime.Event) {
			if e.Kind == runtime.EventTrimmed && trimmedAt == 0 {
				trimmedAt = e.Step
			}
		}})
	// The same question again, until a turn leaves the first one out.
	for i := 1; i < turns && trimmedAt == 0; i++ {
		turn, err := sess.Run(context.Background(), "what is the balance of account ACC-00001?")
		if err != nil {
			t.Fatal(err)
		}
		if len(turn.Calls) != 1 || turn.Calls[0].Tool != "bank/get_balance" || turn.Calls[0].Err != nil || turn.Steps != 2 {
			t.Fatalf("turn %d = %+v, want the shortlisted get_balance called through the gateway, then the answer", i+1, turn)
		}
	}
	if trimmedAt == 0 {
		t.Fatalf("no request of %d turns left a turn out; the test needs one", turns)
	}
	body := fake.bodies[trimmedAt-1]
	if msgs := string(body["messages"]); !strings.Contains(msgs, `{"tool_name":"get_balance","type":"tool_reference"}`) {
		t.Errorf("step %d's request, the first to leave turns out = %s, want get_balance loaded again by a tool_reference", trimmedAt, msgs)
	}
}
