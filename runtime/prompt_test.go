package runtime_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
)

// conversation is a four-turn session over the bank tools and the real MCP
// catalogs: a balance, a transfer, a note in the knowledge graph whose tool
// is loaded through find_tools, and a follow-up balance.
var conversation = struct {
	inputs  []string
	replies []scripted.Reply
}{
	inputs: []string{
		"What is the balance of ACC-00001?",
		"Move 25.00 from ACC-00001 to ACC-00002.",
		"Also keep a note of it for later.",
		"And what is the balance of ACC-00001 now?",
	},
	replies: []scripted.Reply{
		scripted.Call("get_balance", `{"account":"ACC-00001"}`),
		scripted.Answer("ACC-00001 holds 5000.00."),
		scripted.Call("transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":25}`),
		scripted.Answer("Moved 25.00."),
		scripted.FindTools("select:create_entities"),
		scripted.Call("create_entities", `{"entities":[{"name":"tx-1","entityType":"transfer","observations":["25.00 from ACC-00001 to ACC-00002"]}]}`),
		scripted.Answer("Noted."),
		scripted.Call("get_balance", `{"account":"ACC-00001"}`),
		scripted.Answer("ACC-00001 holds 4975.00."),
	},
}

// prefixShare runs the conversation and returns, per request after the
// first, the share of its prompt bytes that the previous request had as
// its start, as the runtime reports it, and the requests.
func prefixShare(t *testing.T, mode llm.Mode) ([]float64, []runtime.Event, []*llm.Request) {
	t.Helper()
	e := newEnv(t, conversation.replies, true, &runtime.Options{Mode: mode, Strategy: runtime.StrategyProgressive})
	sess := e.agent.NewSession(teller, "cache-1", nil)
	for _, in := range conversation.inputs {
		if _, err := sess.Run(t.Context(), in); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
	}
	var shares []float64
	var reqs []runtime.Event
	for _, ev := range e.events {
		if ev.Kind != runtime.EventRequest {
			continue
		}
		if len(reqs) > 0 {
			shares = append(shares, float64(ev.PrefixBytes)/float64(ev.PromptBytes))
		} else if ev.PrefixBytes != 0 {
			t.Errorf("the first request reports %d shared bytes, want 0", ev.PrefixBytes)
		}
		reqs = append(reqs, ev)
	}
	return shares, reqs, e.model.Requests()
}

// TestPromptsAreCacheStable: across every step of a session the system
// prompt and the earlier tool definitions stay byte-identical, tools found
// later are appended after them, and the previous request's prompt is the
// start of the next one: always in the envelope modes (tools found later
// are introduced in the conversation), and in native mode whenever the
// step shows no new tool (a new tool is appended to the tools array, before
// the messages). The shares are recorded in docs/benchmarks.md.
func TestPromptsAreCacheStable(t *testing.T) {
	for _, mode := range []llm.Mode{llm.ModeEnvelope, llm.ModeGrammar, llm.ModeNative} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			shares, events, reqs := prefixShare(t, mode)
			if len(reqs) != len(conversation.replies) || len(events) != len(reqs) {
				t.Fatalf("%d requests, %d request events; want %d", len(reqs), len(events), len(conversation.replies))
			}
			for i := 1; i < len(reqs); i++ {
				prev, cur := reqs[i-1], reqs[i]
				if prev.Messages[0].Content != cur.Messages[0].Content {
					t.Errorf("request %d: the system prompt changed", i)
				}
				pn, cn := prev.ToolNames(), cur.ToolNames()
				if len(cn) < len(pn) || !slices.Equal(cn[:len(pn)], pn) {
					t.Errorf("request %d shows %v after %v: earlier tools must stay first, in order", i, cn, pn)
				}
				for j, spec := range prev.Tools {
					if !bytes.Equal(spec.Parameters, cur.Tools[j].Parameters) || spec.Description != cur.Tools[j].Description {
						t.Errorf("request %d: the definition of %s changed", i, spec.Name)
					}
				}
				if !slices.EqualFunc(prev.Messages[1:], cur.Messages[1:len(prev.Messages)], func(a, b llm.Message) bool {
					return a.Content == b.Content && a.Role == b.Role
				}) {
					t.Errorf("request %d: the earlier conversation changed", i)
				}
				whole := events[i].PrefixBytes == events[i-1].PromptBytes
				if (mode != llm.ModeNative || len(cn) == len(pn)) && !whole {
					t.Errorf("request %d shares %d bytes with the previous request's %d, want all of them", i, events[i].PrefixBytes, events[i-1].PromptBytes)
				}
			}
			var shared, total int
			for _, ev := range events[1:] {
				shared += ev.PrefixBytes
				total += ev.PromptBytes
			}
			overall := float64(shared) / float64(total)
			t.Logf("%v: shared prefix per request %.3f, overall %.3f (%d of %d bytes)", mode, shares, overall, shared, total)
			if mode != llm.ModeNative && overall < 0.85 {
				t.Errorf("%.1f%% of the prompt bytes were the previous request's, want at least 85%%", 100*overall)
			}
		})
	}
}

// TestPromptPrefixOverWire measures the same conversation on the bytes an
// OpenAI-compatible server receives (httptest speaking Chat Completions,
// envelope mode): each recorded request's messages start with the previous
// request's messages, byte for byte, so the server's prompt cache holds.
func TestPromptPrefixOverWire(t *testing.T) {
	w := &wireServer{outputs: []string{
		`{"action":"call","tool":"get_balance","arguments":{"account":"ACC-00001"}}`,
		`{"action":"answer","text":"ACC-00001 holds 5000.00."}`,
		`{"action":"call","tool":"transfer_funds","arguments":{"source_account":"ACC-00001","target_account":"ACC-00002","amount":25}}`,
		`{"action":"answer","text":"Moved 25.00."}`,
		`{"action":"find_tools","query":"select:create_entities"}`,
		`{"action":"call","tool":"create_entities","arguments":{"entities":[{"name":"tx-1","entityType":"transfer","observations":["25.00"]}]}}`,
		`{"action":"answer","text":"Noted."}`,
		`{"action":"call","tool":"get_balance","arguments":{"account":"ACC-00001"}}`,
		`{"action":"answer","text":"ACC-00001 holds 4975.00."}`,
	}}
	srv := httptest.NewServer(http.HandlerFunc(w.openai))
	defer srv.Close()
	_, agent := openAIAgent(t, srv.URL, &runtime.Options{Logger: quiet, Strategy: runtime.StrategyProgressive})
	sess := agent.NewSession(teller, "cache-wire", nil)
	for _, in := range conversation.inputs {
		if _, err := sess.Run(t.Context(), in); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
	}
	if len(w.bodies) != 9 {
		t.Fatalf("%d requests, want 9", len(w.bodies))
	}
	var prev []byte
	var shared, total int
	var shares []float64
	for i, body := range w.bodies {
		var cur []byte
		msgs, _ := body["messages"].([]any)
		for _, m := range msgs {
			line, _ := json.Marshal(m)
			cur = append(append(cur, line...), '\n')
		}
		if i > 0 {
			if !bytes.HasPrefix(cur, prev) {
				t.Errorf("request %d's messages do not start with request %d's", i, i-1)
			}
			n := len(prev)
			if !bytes.HasPrefix(cur, prev) {
				n = 0
			}
			shared += n
			total += len(cur)
			shares = append(shares, float64(n)/float64(len(cur)))
		}
		prev = cur
	}
	t.Logf("over the wire (OpenAI envelope mode, messages as sent): shared prefix per request %.3f, overall %.3f (%d of %d bytes)",
		shares, float64(shared)/float64(total), shared, total)
}

// TestShownToolsStayInBudget: the tools a session keeps shown start again
// from the step's own when their definitions would pass MaxToolShare of
// ContextTokens, so a small window keeps room for the conversation; with
// the default window the same conversation keeps every tool it showed.
func TestShownToolsStayInBudget(t *testing.T) {
	// shown runs the conversation and returns, per step, the tools shown,
	// their tokens and the step's own tools: its shortlist and the tools
	// find_tools has loaded so far.
	shown := func(opts *runtime.Options) (steps [][]string, tokens []int, own [][]string) {
		e := newEnv(t, conversation.replies, true, opts)
		sess := e.agent.NewSession(teller, "budget-1", nil)
		for _, in := range conversation.inputs {
			if _, err := sess.Run(t.Context(), in); err != nil {
				t.Fatalf("%q: %v", in, err)
			}
		}
		var loaded []string
		for _, ev := range e.events {
			switch ev.Kind {
			case runtime.EventFindTools:
				loaded = append(loaded, ev.Found...)
			case runtime.EventShortlist:
				steps = append(steps, ev.Tools)
				tokens = append(tokens, ev.ShortlistTokens)
				ids := slices.Clone(loaded)
				for _, c := range ev.Shortlist.Candidates {
					ids = append(ids, c.Tool.ID)
				}
				own = append(own, ids)
			}
		}
		return steps, tokens, own
	}
	wide, wideTokens, _ := shown(&runtime.Options{Strategy: runtime.StrategyProgressive})
	for i := 1; i < len(wide); i++ {
		if len(wide[i]) < len(wide[i-1]) || !slices.Equal(wide[i][:len(wide[i-1])], wide[i-1]) {
			t.Fatalf("default window, step %d shows %v after %v: earlier tools must stay", i+1, wide[i], wide[i-1])
		}
	}
	// A window whose quarter holds about two steps' tools.
	const window = 2400
	budget := window / 4
	if last := wideTokens[len(wideTokens)-1]; last <= budget {
		t.Fatalf("the conversation's tools reach only %d tokens; the test needs more than the %d budget", last, budget)
	}
	narrow, tokens, own := shown(&runtime.Options{Strategy: runtime.StrategyProgressive, ContextTokens: window})
	restarts := 0
	for i, ids := range narrow {
		earlier := slices.ContainsFunc(ids, func(id string) bool { return !slices.Contains(own[i], id) })
		if tokens[i] > budget && earlier {
			t.Errorf("step %d shows %d tokens of tools (%v), over the %d budget, with tools of earlier steps", i+1, tokens[i], ids, budget)
		}
		if i > 0 && len(narrow[i-1]) > 0 && !slices.Contains(ids, narrow[i-1][0]) {
			restarts++
		}
	}
	if restarts == 0 {
		t.Errorf("the shown tools never started again (tokens per step %v, budget %d)", tokens, budget)
	}
	t.Logf("tokens of the shown tools per step: default window %v, %d-token window %v", wideTokens, window, tokens)
}
