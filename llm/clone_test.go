package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/llm"
)

func TestRequestCloneIsDeep(t *testing.T) {
	r := &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "get_balance", Arguments: json.RawMessage(`{"a":1}`)}}}},
		Tools:    []llm.ToolSpec{{Name: "get_balance", Parameters: json.RawMessage(`{"p":1}`), StrictParameters: json.RawMessage(`{"s":1}`)}},
	}
	c := r.Clone()
	c.Messages[0].ToolCalls[0].Arguments[1] = 'X'
	c.Tools[0].Parameters[1] = 'X'
	c.Tools[0].StrictParameters[1] = 'X'
	if got := string(r.Messages[0].ToolCalls[0].Arguments); got != `{"a":1}` {
		t.Errorf("after a change to the clone, the call's Arguments = %s, want {\"a\":1}", got)
	}
	if got := string(r.Tools[0].Parameters) + string(r.Tools[0].StrictParameters); got != `{"p":1}{"s":1}` {
		t.Errorf("after a change to the clone, the tool's schemas = %s, want {\"p\":1}{\"s\":1}", got)
	}
	if c.Deferred != nil || c.Messages[0].ToolCalls == nil {
		t.Errorf("Clone: Deferred = %v (want nil, as in r), ToolCalls = %v", c.Deferred, c.Messages[0].ToolCalls)
	}
}
