package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/internal/gatewaytest"
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
	e.AddEcho("notes/tag", schema)
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
		t.Run(args, func(t *testing.T) {
			call := gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "notes/tag", Arguments: json.RawMessage(args)}
			for _, run := range []struct {
				name string
				f    func() error
			}{
				{"Execute", func() error { _, err := e.Gateway.Execute(ctx, call); return err }},
				{"Check", func() error { return e.Gateway.Check(ctx, call) }},
			} {
				t.Run(run.name, func(t *testing.T) {
					ge := wantType(t, run.name+"(50 near misses)", run.f(), gateway.ValidationError)
					if ge.Retryable || !strings.Contains(ge.Message, "longer than") {
						t.Errorf("%s(50 near misses) = %+v; want a non-retryable refusal naming the deadline", run.name, ge)
					}
				})
			}
		})
	}
	if _, err := e.Gateway.Execute(ctx, gateway.Call{Principal: alice, SessionID: "s", Step: 2, Tool: "notes/tag",
		Arguments: json.RawMessage(`{"tags":["two words","one"]}`)}); err != nil {
		t.Fatalf("a matching call after refusals: %v", err)
	}
	if n := e.Runs.Total(); n != 1 {
		t.Errorf("handler ran %d times, want once (only the valid call)", n)
	}
}

// TestNumbersValidatedOnClientText: the schema sees the number text the
// client sent, and a number the canonical form (IEEE doubles) would change
// is refused, in every notation.
func TestNumbersValidatedOnClientText(t *testing.T) {
	e := newEnv(t, nil)
	e.AddEcho("bank/pay", gatewaytest.PaySchema)
	for i, tc := range gatewaytest.NumberCases {
		res, err := e.Gateway.Execute(ctx, gateway.Call{Principal: alice, SessionID: "n", Step: i, Tool: "bank/pay", Arguments: json.RawMessage(tc.Args)})
		if tc.Ptr == "" {
			if err != nil || string(res.Value) != tc.Want {
				t.Errorf("Execute(%s) = %v, %v; want the handler to receive %s", tc.Args, res, err, tc.Want)
			}
			continue
		}
		ge := wantType(t, "Execute("+tc.Args+")", err, gateway.ValidationError)
		vs, _ := ge.Details.([]gateway.Violation)
		if len(vs) == 0 || vs[0].Pointer != tc.Ptr {
			t.Errorf("Execute(%s) violations = %+v, want one at %s", tc.Args, vs, tc.Ptr)
		}
	}
	if n, want := e.Runs.Total(), 4; n != int64(want) {
		t.Errorf("handler ran %d times, want %d (the valid cases)", n, want)
	}
}

// TestCallFieldsRefusedAsTheCall: a call's own fields (session_id, step)
// that the gateway refuses are a VALIDATION_ERROR about the call, not about
// the arguments: no violation, whose pointer would name a place in the
// arguments ("" is the whole arguments object), and a message that does
// not say the arguments are invalid. Nothing runs.
func TestCallFieldsRefusedAsTheCall(t *testing.T) {
	e := newEnv(t, nil)
	cases := []struct {
		name    string
		session string
		step    int
		want    string
	}{
		{"empty session", "", 1, "session_id must not be empty"},
		{"long session", strings.Repeat("s", 300), 1, "session_id is longer than"},
		{"control character", "s\x00", 1, "without control characters"},
		{"negative step", "s1", -1, "step must not be negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Gateway.Execute(t.Context(), transferCall(alice, tc.session, tc.step, okArgs))
			ge := gwError(t, err)
			if ge.Type != gateway.ValidationError || !strings.Contains(ge.Message, tc.want) ||
				strings.Contains(ge.Message, "arguments") || ge.Details != nil {
				t.Errorf("Execute = %s %q details %v, want VALIDATION_ERROR %q about the call, no details", ge.Type, ge.Message, ge.Details, tc.want)
			}
		})
	}
	if n := e.Runs.Total(); n != 0 {
		t.Errorf("handlers ran %d times, want 0", n)
	}
}
