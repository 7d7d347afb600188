package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseEnvelope(t *testing.T) {
	tests := []struct {
		in   string
		want Envelope
	}{
		{`{"action":"call","tool":"get_balance","arguments":{"account":"ACC-00001"}}`,
			Envelope{Action: ActionCall, Tool: "get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}},
		{` {"arguments":{},"tool":"t","action":"call"}` + "\n", Envelope{Action: ActionCall, Tool: "t", Arguments: json.RawMessage(`{}`)}},
		{`{"action":"answer","text":"It is 1000.00 USD."}`, Envelope{Action: ActionAnswer, Text: "It is 1000.00 USD."}},
		{`{"action":"answer","text":""}`, Envelope{Action: ActionAnswer}},
		{`{"action":"find_tools","query":"refund a payment"}`, Envelope{Action: ActionFindTools, Query: "refund a payment"}},
		{`{"action":"answer","text":"caf\u00e9 \"quoted\""}`, Envelope{Action: ActionAnswer, Text: `café "quoted"`}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseEnvelope([]byte(tt.in))
			if err != nil {
				t.Errorf("ParseEnvelope(%s) error = %v", tt.in, err)
				return
			}
			if got.Action != tt.want.Action || got.Tool != tt.want.Tool || got.Text != tt.want.Text ||
				got.Query != tt.want.Query || !bytes.Equal(got.Arguments, tt.want.Arguments) {
				t.Errorf("ParseEnvelope(%s) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseEnvelopeRejects(t *testing.T) {
	tests := []struct {
		in, why string
	}{
		{``, "empty"},
		{`null`, "null"},
		{`[]`, "array"},
		{`"answer"`, "string"},
		{`{}`, "no action"},
		{`{"action":"call","tool":"t"}`, "missing arguments"},
		{`{"action":"call","arguments":{}}`, "missing tool"},
		{`{"action":"call","tool":"t","arguments":[]}`, "arguments not an object"},
		{`{"action":"call","tool":"t","arguments":"{}"}`, "arguments a string"},
		{`{"action":"call","tool":"t","arguments":null}`, "arguments null"},
		{`{"action":"call","tool":7,"arguments":{}}`, "tool a number"},
		{`{"action":"call","tool":null,"arguments":{}}`, "tool null"},
		{`{"action":"answer","text":null}`, "text null"},
		{`{"action":"answer","text":"hi","tool":"t"}`, "extra key"},
		{`{"action":"answer","text":"hi","Text":"x"}`, "extra key differing in case"},
		{`{"Action":"answer","text":"hi"}`, "key in the wrong case"},
		{`{"action":"ANSWER","text":"hi"}`, "action in the wrong case"},
		{`{"action":"execute","text":"hi"}`, "unknown action"},
		{`{"action":"answer","action":"answer","text":"hi"}`, "repeated key"},
		{`{"action":"call","tool":"t","arguments":{"a":1,"a":2}}`, "repeated argument key"},
		{`{"action":"call","tool":"t","arguments":{"a":{"b":1,"b":2}}}`, "repeated nested key"},
		{`{"action":"answer","text":"hi"} {"action":"answer","text":"again"}`, "two objects"},
		{`{"action":"answer","text":"hi"}x`, "trailing data"},
		{`{"action":"answer","text":"hi"`, "truncated"},
		{"{\"action\":\"answer\",\"text\":\"\xff\"}", "invalid UTF-8"},
		{`{"action":"answer","text":"hi",}`, "trailing comma"},
		{"```json\n{\"action\":\"answer\",\"text\":\"hi\"}\n```", "markdown fence"},
		{`{"action":"find_tools","query":["x"]}`, "query an array"},
		{`{"action":"call","tool":"t","arguments":{},"text":"also"}`, "call with text"},
		{strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200), "deep nesting"},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			got, err := ParseEnvelope([]byte(tt.in))
			if err == nil {
				t.Errorf("ParseEnvelope(%q) (%s) = %+v, want an error", tt.in, tt.why, got)
				return
			}
			if !errors.Is(err, ErrBadEnvelope) {
				t.Errorf("ParseEnvelope(%q) (%s) error = %v, want ErrBadEnvelope", tt.in, tt.why, err)
			}
		})
	}
}

func FuzzParseEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"action":"call","tool":"get_balance","arguments":{"account":"ACC-00001"}}`,
		`{"action":"answer","text":"ok"}`,
		`{"action":"find_tools","query":"q"}`,
		`{"action":"answer","action":"answer","text":"hi"}`,
		`{"action":"call","tool":"t","arguments":{"a":[1,{"b":null}]}}`,
		`{"action":"answer","text":"hi"}x`,
		"{\"action\":\"answer\",\"text\":\"\\ud800\"}",
		``, `{`, `[`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := ParseEnvelope(data)
		if err != nil {
			if !errors.Is(err, ErrBadEnvelope) {
				t.Fatalf("error %v does not wrap ErrBadEnvelope", err)
			}
			return
		}
		// Anything accepted is one valid JSON object of exactly one shape.
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			t.Fatalf("accepted a non-object %q", data)
		}
		switch env.Action {
		case ActionCall:
			var args map[string]any
			if len(obj) != 3 || json.Unmarshal(env.Arguments, &args) != nil || args == nil {
				t.Fatalf("accepted call %q with keys %d, arguments %s", data, len(obj), env.Arguments)
			}
		case ActionAnswer, ActionFindTools:
			if len(obj) != 2 {
				t.Fatalf("accepted %s %q with %d keys", env.Action, data, len(obj))
			}
		default:
			t.Fatalf("accepted unknown action %q", env.Action)
		}
		// Parsing is deterministic and idempotent on its own output.
		again, err := ParseEnvelope(data)
		if err != nil || again.Action != env.Action || again.Tool != env.Tool || again.Text != env.Text {
			t.Fatalf("second parse differs: %+v, %v", again, err)
		}
	})
}

func TestToolPrompt(t *testing.T) {
	tools := []ToolSpec{
		{Name: "get_balance", Description: "Get a balance", Parameters: json.RawMessage("{\n  \"type\": \"object\",\n  \"additionalProperties\": false\n}")},
	}
	got := ToolPrompt(tools)
	want := `{"name":"get_balance","description":"Get a balance","parameters":{"type":"object","additionalProperties":false}}`
	if !strings.Contains(got, want) {
		t.Errorf("ToolPrompt = %q, want it to hold the line %s", got, want)
	}
	if !strings.Contains(got, `{"action":"call"`) || !strings.Contains(got, `{"action":"find_tools"`) {
		t.Errorf("ToolPrompt = %q, want the envelope shapes", got)
	}
	none := ToolPrompt(nil)
	if strings.Contains(none, `"action":"call"`) || !strings.Contains(none, "No tools") {
		t.Errorf("ToolPrompt(nil) = %q, want no call shape and a note that no tools are available", none)
	}
}

func TestWithToolPrompt(t *testing.T) {
	tools := []ToolSpec{{Name: "t", Parameters: json.RawMessage(`{"type":"object"}`)}}
	withSystem := &Request{Tools: tools, Messages: []Message{{Role: RoleSystem, Content: "Be brief."}, {Role: RoleUser, Content: "hi"}}}
	got := WithToolPrompt(withSystem)
	if len(got) != 2 || !strings.HasPrefix(got[0].Content, "Be brief.\n\n") || !strings.Contains(got[0].Content, `"name":"t"`) {
		t.Errorf("WithToolPrompt(system+user) = %+v", got)
	}
	if withSystem.Messages[0].Content != "Be brief." {
		t.Error("WithToolPrompt modified the request")
	}
	noSystem := &Request{Tools: tools, Messages: []Message{{Role: RoleUser, Content: "hi"}}}
	got = WithToolPrompt(noSystem)
	if len(got) != 2 || got[0].Role != RoleSystem || got[1].Content != "hi" {
		t.Errorf("WithToolPrompt(user) = %+v, want a system message in front", got)
	}
	if !strings.Contains(got[0].Content, `{"action":"answer"`) {
		t.Errorf("WithToolPrompt(user) = %q, want the answer shape offered", got[0].Content)
	}
	// RequireCall leaves the prompt as it is (the constraint forbids the
	// answer), so the prompt prefix stays cacheable from step to step.
	noSystem.RequireCall = true
	if p := WithToolPrompt(noSystem)[0].Content; p != got[0].Content {
		t.Errorf("WithToolPrompt(RequireCall) = %q, want the same prompt as without: %q", p, got[0].Content)
	}
	// NoToolPrompt: the caller's messages, unchanged, and a copy.
	own := &Request{Tools: tools, NoToolPrompt: true, Messages: []Message{{Role: RoleSystem, Content: "Rewrite."}, {Role: RoleUser, Content: "hi"}}}
	got = WithToolPrompt(own)
	if len(got) != 2 || got[0].Content != "Rewrite." || got[1].Content != "hi" {
		t.Errorf("WithToolPrompt(NoToolPrompt) = %+v, want the messages unchanged", got)
	}
	got[0].Content = "changed"
	if own.Messages[0].Content != "Rewrite." {
		t.Error("WithToolPrompt(NoToolPrompt) returned the request's own slice")
	}
}

func TestRequestValidate(t *testing.T) {
	good := func() *Request {
		return &Request{
			Messages:   []Message{{Role: RoleUser, Content: "hi"}},
			Tools:      []ToolSpec{{Name: "get_balance", Parameters: json.RawMessage(`{"type":"object"}`)}},
			Constraint: Constraint{EnvelopeSchema: json.RawMessage(`{"type":"object"}`)},
		}
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("Validate(good) = %v", err)
	}
	tests := []struct {
		name   string
		change func(r *Request)
	}{
		{"no messages", func(r *Request) { r.Messages = nil }},
		{"bad name", func(r *Request) { r.Tools[0].Name = "get balance" }},
		{"long name", func(r *Request) { r.Tools[0].Name = strings.Repeat("a", 65) }},
		{"duplicate", func(r *Request) { r.Tools = append(r.Tools, r.Tools[0]) }},
		{"parameters not an object", func(r *Request) { r.Tools[0].Parameters = json.RawMessage(`[]`) }},
		{"bad namespace", func(r *Request) { r.Tools[0].Namespace = "my server" }},
		{"no envelope schema", func(r *Request) { r.Constraint.EnvelopeSchema = nil }},
		{"grammar without GBNF", func(r *Request) { r.Constraint.Mode = ModeGrammar }},
		{"unknown mode", func(r *Request) { r.Constraint.Mode = 9 }},
		{"negative MaxTokens", func(r *Request) { r.MaxTokens = -1 }},
		{"RequireCall with nothing to call", func(r *Request) { r.Constraint.Mode, r.Tools, r.RequireCall = ModeNative, nil, true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := good()
			tt.change(r)
			if err := r.Validate(); !errors.Is(err, ErrInvalidRequest) {
				t.Errorf("Validate(%s) = %v, want ErrInvalidRequest", tt.name, err)
			}
		})
	}
}
