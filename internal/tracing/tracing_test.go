package tracing

import "testing"

// TestOperation: the span names and the operation attribute follow the
// GenAI conventions' "{operation} {target}".
func TestOperation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		op     Operation
		target string
		want   string
	}{
		{"turn", OpInvokeAgent, "toolgate", "invoke_agent toolgate"},
		{"chat", OpChat, "openai", "chat openai"},
		{"tool", OpExecuteTool, "bank/pay", "execute_tool bank/pay"},
		{"no target", OpExecuteTool, "", "execute_tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.op.SpanName(tc.target); got != tc.want {
				t.Errorf("%s.SpanName(%q) = %q, want %q", tc.op, tc.target, got, tc.want)
			}
			if kv := tc.op.Attribute(); kv.Key != OperationName || kv.Value.AsString() != string(tc.op) {
				t.Errorf("%s.Attribute() = %v, want %s=%s", tc.op, kv, OperationName, tc.op)
			}
		})
	}
}
