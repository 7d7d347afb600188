package scripted_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
	"github.com/toolgate/toolgate/llm/scripted"
)

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Harness{
		Modes:        []llm.Mode{llm.ModeEnvelope, llm.ModeGrammar, llm.ModeNative},
		RawArguments: true,
		New: func(t *testing.T, r backendtest.Reply) llm.Backend {
			reply := scripted.Text(r.Content)
			if len(r.Calls) > 0 {
				reply = scripted.NativeCalls(r.Calls...)
			}
			if r.Finish == "length" {
				reply = reply.Truncated()
			}
			return scripted.New([]scripted.Reply{reply}, nil)
		},
	})
}

func TestRendersPerMode(t *testing.T) {
	tests := []struct {
		reply   scripted.Reply
		mode    llm.Mode
		raw     string
		content string
		call    string
	}{
		{scripted.Call("get_balance", `{"account":"ACC-00001"}`), llm.ModeEnvelope,
			`{"action":"call","tool":"get_balance","arguments":{"account":"ACC-00001"}}`, "", "get_balance"},
		{scripted.Call("get_balance", `{"account":"ACC-00001"}`), llm.ModeNative,
			`{"tool_calls":[{"name":"get_balance","arguments":"{\"account\":\"ACC-00001\"}"}]}`, "", "get_balance"},
		{scripted.Answer("hi"), llm.ModeGrammar, `{"action":"answer","text":"hi"}`, `{"action":"answer","text":"hi"}`, ""},
		{scripted.Answer("hi"), llm.ModeNative, "hi", "hi", ""},
		{scripted.FindTools("refunds"), llm.ModeEnvelope, `{"action":"find_tools","query":"refunds"}`, `{"action":"find_tools","query":"refunds"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			b := scripted.New([]scripted.Reply{tt.reply}, nil)
			resp, err := b.Chat(context.Background(), backendtest.Request(tt.mode))
			if err != nil {
				t.Errorf("%v in %s: %v", tt.reply, tt.mode, err)
				return
			}
			if resp.Raw != tt.raw {
				t.Errorf("%v in %s: Raw = %s, want %s", tt.reply, tt.mode, resp.Raw, tt.raw)
			}
			if tt.call != "" && (len(resp.Calls) != 1 || resp.Calls[0].Name != tt.call) {
				t.Errorf("%v in %s: Calls = %+v, want %s", tt.reply, tt.mode, resp.Calls, tt.call)
			}
			if tt.call == "" && resp.Message.Content != tt.content {
				t.Errorf("%v in %s: Content = %q, want %q", tt.reply, tt.mode, resp.Message.Content, tt.content)
			}
		})
	}
}

func TestScriptExhausted(t *testing.T) {
	b := scripted.New([]scripted.Reply{scripted.Answer("only")}, nil)
	if _, err := b.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope)); err != nil {
		t.Fatal(err)
	}
	_, err := b.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope))
	if !errors.Is(err, scripted.ErrScriptExhausted) || !strings.Contains(err.Error(), "request 1") {
		t.Fatalf("Chat after the script = %v, want ErrScriptExhausted naming request 1", err)
	}
	if got := len(b.Requests()); got != 2 {
		t.Errorf("recorded %d requests, want 2", got)
	}
}

func TestCheckHook(t *testing.T) {
	boom := errors.New("the agent sent an unexpected tool")
	b := scripted.New([]scripted.Reply{scripted.Answer("a"), scripted.Answer("b")}, &scripted.Options{
		Check: func(i int, req *llm.Request) error {
			if i == 1 {
				return boom
			}
			return nil
		},
	})
	if _, err := b.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope)); !errors.Is(err, boom) {
		t.Fatalf("Chat = %v, want the hook's error", err)
	}
}

func TestRecordsCopies(t *testing.T) {
	b := scripted.New([]scripted.Reply{scripted.Answer("a")}, nil)
	req := backendtest.Request(llm.ModeEnvelope)
	if _, err := b.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	req.Tools[0].Name = "changed"
	req.Tools[0].Parameters[0] = '['
	got := b.Requests()[0]
	if got.Tools[0].Name != "get_balance" || got.Tools[0].Parameters[0] != '{' {
		t.Error("the recorded request changed with the caller's")
	}
}

func TestFailAndCancel(t *testing.T) {
	rate := &llm.StatusError{Backend: "scripted", StatusCode: 429}
	b := scripted.New([]scripted.Reply{scripted.Fail(rate)}, nil)
	if _, err := b.Chat(context.Background(), backendtest.Request(llm.ModeEnvelope)); !errors.Is(err, rate) {
		t.Errorf("Chat = %v, want the scripted error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := scripted.New(nil, nil).Chat(ctx, backendtest.Request(llm.ModeEnvelope)); !errors.Is(err, context.Canceled) {
		t.Errorf("Chat(canceled) = %v, want context.Canceled", err)
	}
}

// An agent's test: script the model, run the agent's step, and assert
// both what the model was shown and what came back.
func Example() {
	model := scripted.New([]scripted.Reply{
		scripted.Call("get_weather", `{"city":"Paris"}`),
		scripted.Answer("It is sunny in Paris."),
	}, nil)
	backend, err := llm.Checked(model, nil)
	if err != nil {
		log.Fatal(err)
	}
	req := &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Weather in Paris?"}},
		Tools: []llm.ToolSpec{{
			Name:        "get_weather",
			Description: "Current weather for a city",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`),
		}},
		Constraint: llm.Constraint{Mode: llm.ModeNative},
	}
	ctx := context.Background()
	resp, err := backend.Chat(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	call := resp.Calls[0]
	fmt.Println(resp.Action, call.Name, string(call.Arguments))

	req.Messages = append(req.Messages, resp.Message,
		llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: `{"sky":"clear"}`})
	resp, err = backend.Chat(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Action, resp.Answer)

	for i, r := range model.Requests() {
		fmt.Println("request", i, "tools:", r.ToolNames(), "messages:", len(r.Messages))
	}
	// Output:
	// call get_weather {"city":"Paris"}
	// answer It is sunny in Paris.
	// request 0 tools: [get_weather] messages: 1
	// request 1 tools: [get_weather] messages: 3
}
