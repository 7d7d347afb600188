package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

// TestValidationDeadline: the regex budget is per call, not per match.
// Many strings against a backtracking pattern are refused once the call's
// validation deadline passes — VALIDATION_ERROR, not retryable (the same
// arguments would fail the same way) — and nothing runs.
func TestValidationDeadline(t *testing.T) {
	e := newEnv(t, func(o *gateway.Options) { o.ValidationTimeout = 20 * time.Millisecond })
	const schema = `{"type":"object","properties":{
		"tags":{"type":"array","items":{"type":"string","pattern":"^(\\w+\\s?)*$"}},
		"labels":{"type":"object","patternProperties":{"^(\\w+\\s?)*$":{"type":"string"}}}}}`
	if err := e.reg.Add(tools.Tool{ID: "notes/tag", Card: tools.Card{Name: "tag"}, InputSchema: json.RawMessage(schema),
		Handler: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			e.runs.add(ctx, args)
			return args, nil
		}}); err != nil {
		t.Fatal(err)
	}
	nearMiss := strings.Repeat("a", 40) + "!"
	strs := make([]string, 50)
	members := make([]string, 50)
	for i := range strs {
		strs[i] = `"` + nearMiss + `"`
		members[i] = `"` + nearMiss + string(rune('a'+i%26)) + strings.Repeat("b", i) + `":"x"`
	}
	for _, args := range []string{
		`{"tags":[` + strings.Join(strs, ",") + `]}`,
		`{"labels":{` + strings.Join(members, ",") + `}}`,
	} {
		call := gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "notes/tag", Arguments: json.RawMessage(args)}
		for _, run := range []struct {
			name string
			f    func() error
		}{
			{"Execute", func() error { _, err := e.gw.Execute(ctx, call); return err }},
			{"Check", func() error { return e.gw.Check(ctx, call) }},
		} {
			ge := wantType(t, run.name+"(50 near misses)", run.f(), gateway.ValidationError)
			if ge.Retryable || !strings.Contains(ge.Message, "longer than") {
				t.Errorf("%s(50 near misses) = %+v; want a non-retryable refusal naming the deadline", run.name, ge)
			}
		}
	}
	if _, err := e.gw.Execute(ctx, gateway.Call{Principal: alice, SessionID: "s", Step: 2, Tool: "notes/tag",
		Arguments: json.RawMessage(`{"tags":["two words","one"]}`)}); err != nil {
		t.Fatalf("a matching call after refusals: %v", err)
	}
	if n := e.runs.total(); n != 1 {
		t.Errorf("handler ran %d times, want once (only the valid call)", n)
	}
}
