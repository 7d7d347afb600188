package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func replyRequest(mode Mode) *Request {
	return &Request{
		Messages:   []Message{{Role: RoleUser, Content: "hi"}},
		Tools:      []ToolSpec{{Name: "get_balance", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Constraint: Constraint{Mode: mode, EnvelopeSchema: json.RawMessage(`{}`)},
	}
}

// FuzzParseReply checks ParseReply's guarantees on any model output, in
// envelope and native modes: a reply either fails with an [*OutputError]
// and carries nothing to act on, or is exactly one action, and a call
// names a shortlisted tool with a JSON object as arguments.
func FuzzParseReply(f *testing.F) {
	f.Add(`{"action":"call","tool":"get_balance","arguments":{"account":"A"}}`, "get_balance", `{"account":"A"}`, false)
	f.Add(`{"action":"call","tool":"other","arguments":{}}`, "other", `{}`, true)
	f.Add(`hello`, "", ``, false)
	f.Add(``, "get_balance", `{"a":1,"a":2}`, true)
	f.Add(`{"action":"answer","text":"x"}`, "get_balance", `[1]`, false)
	f.Add(`<tool_call>{"name":"get_balance","arguments":{"account":"A"}}</tool_call>`, "", ``, false)
	f.Add(`<|python_tag|>{"name":"get_balance","parameters":"{\"a\":1}"}<|eom_id|>`, "", ``, false)
	f.Add(`[TOOL_CALLS][{"name":"get_balance","arguments":{}}]`, "", ``, false)
	f.Fuzz(func(t *testing.T, content, callName, callArgs string, truncated bool) {
		for i, mode := range []Mode{ModeEnvelope, ModeNative} {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				req := replyRequest(mode)
				resp := &Response{Message: Message{Role: RoleAssistant, Content: content}, FinishReason: FinishStop}
				if mode == ModeEnvelope {
					resp.Raw = content
				}
				if callName != "" && mode == ModeNative {
					resp.Message.ToolCalls = []ToolCall{{Name: callName, Arguments: json.RawMessage(callArgs)}}
				}
				if truncated {
					resp.FinishReason = FinishLength
				}
				err := ParseReply(req, resp)
				if err != nil {
					var oe *OutputError
					if !errors.As(err, &oe) || !errors.Is(err, ErrInvalidOutput) {
						t.Fatalf("%s: error %v is not an *OutputError", mode, err)
					}
					if resp.Action != "" || resp.Calls != nil || resp.Answer != "" || resp.FindTools != "" {
						t.Fatalf("%s: rejected reply still carries %+v", mode, resp)
					}
					return
				}
				if truncated {
					t.Fatalf("%s: a truncated reply was accepted", mode)
				}
				switch resp.Action {
				case ActionCall:
					if len(resp.Calls) != 1 || resp.Calls[0].Name != "get_balance" {
						t.Fatalf("%s: accepted call %+v", mode, resp.Calls)
					}
					var obj map[string]any
					if json.Unmarshal(resp.Calls[0].Arguments, &obj) != nil || obj == nil {
						t.Fatalf("%s: accepted arguments %s", mode, resp.Calls[0].Arguments)
					}
				case ActionAnswer, ActionFindTools:
					if len(resp.Calls) != 0 {
						t.Fatalf("%s: %s with calls", mode, resp.Action)
					}
				default:
					t.Fatalf("%s: accepted reply with action %q", mode, resp.Action)
				}
			})
		}
	})
}

// TestUnknownToolReason: the repair of a call of a tool the request does
// not offer names what may be called (the shortlist, and in deferred
// loading the tools a search loaded), never the search tool, which an API
// may show under another name, and says to search when there is a search.
func TestUnknownToolReason(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	search := ToolSpec{Name: "find_tools", Search: true, Parameters: obj}
	deferred := []ToolSpec{{Name: "get_balance", Parameters: obj}, {Name: "transfer_funds", Parameters: obj}}
	loaded := Message{Role: RoleTool, ToolCallID: "s1", ToolReferences: []string{"get_balance"}}
	const prefix = "the reply named a tool that is not available for this step; available tools: "
	for _, tc := range []struct {
		name     string
		tools    []ToolSpec
		deferred []ToolSpec
		msgs     []Message
		want     string
	}{
		{"shortlist", []ToolSpec{{Name: "get_balance", Parameters: obj}}, nil, nil, prefix + "get_balance"},
		{"no tools", nil, nil, nil, prefix + "none"},
		{"deferred, nothing loaded", []ToolSpec{search}, deferred, nil, prefix + "none; search for the tool you need before calling it"},
		{"deferred, one loaded", []ToolSpec{search}, deferred, []Message{loaded}, prefix + "get_balance; search for the tool you need before calling it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := replyRequest(ModeNative)
			req.Tools, req.Deferred = tc.tools, tc.deferred
			req.Messages = append(req.Messages, tc.msgs...)
			resp := &Response{Message: Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c", Name: "issue_full_refund", Arguments: json.RawMessage(`{}`)}}}}
			var oe *OutputError
			if err := ParseReply(req, resp); !errors.As(err, &oe) || oe.Problem != ProblemUnknownTool || oe.Reason != tc.want {
				t.Errorf("ParseReply(call of issue_full_refund) = %v, want unknown_tool %q", err, tc.want)
			}
		})
	}
}
