package gateway_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
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
	e.addEcho("notes/tag", schema)
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

const paySchema = `{"type":"object","properties":{
	"amount":{"type":"number","multipleOf":0.01,"exclusiveMinimum":0},
	"id":{"type":"integer"},
	"meta":{"type":"object"}},"required":["amount"]}`

// numberCases are arguments of bank/pay: each number is validated on the
// text sent, and what the handler would receive must be the same number.
var numberCases = []struct {
	args string
	ptr  string // "" : valid, and the handler receives want
	want string
}{
	{`{"amount":1.0000000000000000001}`, "/amount", ""},
	{`{"amount":1.00000000000000000001}`, "/amount", ""},
	{`{"amount":1.001}`, "/amount", ""},
	{`{"amount":0.005}`, "/amount", ""},
	{`{"amount":10.10}`, "", `{"amount":10.1}`},
	{`{"amount":1e2}`, "", `{"amount":100}`},
	{`{"amount":0.1e1}`, "", `{"amount":1}`},
	{`{"amount":1.50,"id":9007199254740992}`, "", `{"amount":1.5,"id":9007199254740992}`},
	{`{"amount":1,"id":9007199254740993}`, "/id", ""},
	{`{"amount":1,"id":9007199254740993.0}`, "/id", ""},
	{`{"amount":1,"id":9.007199254740993e15}`, "/id", ""},
	{`{"amount":1,"id":90071992547409930e-1}`, "/id", ""},
	{`{"amount":1,"id":-9007199254740993E0}`, "/id", ""},
	{`{"amount":1,"id":9007199254740994}`, "/id", ""},
	{`{"amount":1,"id":1e20}`, "/id", ""},
	{`{"amount":1,"meta":{"list":[2,1.00000000000000000001]}}`, "/meta/list/1", ""},
	{`{"amount":1,"meta":{"big":12345678901234567890}}`, "/meta/big", ""},
}

// TestNumbersValidatedOnClientText: the schema sees the number text the
// client sent, and a number the canonical form (IEEE doubles) would change
// is refused, in every notation.
func TestNumbersValidatedOnClientText(t *testing.T) {
	e := newEnv(t, nil)
	e.addEcho("bank/pay", paySchema)
	for i, tc := range numberCases {
		res, err := e.gw.Execute(ctx, gateway.Call{Principal: alice, SessionID: "n", Step: i, Tool: "bank/pay", Arguments: json.RawMessage(tc.args)})
		if tc.ptr == "" {
			if err != nil || string(res.Value) != tc.want {
				t.Errorf("Execute(%s) = %v, %v; want the handler to receive %s", tc.args, res, err, tc.want)
			}
			continue
		}
		ge := wantType(t, "Execute("+tc.args+")", err, gateway.ValidationError)
		vs, _ := ge.Details.([]gateway.Violation)
		if len(vs) == 0 || vs[0].Pointer != tc.ptr {
			t.Errorf("Execute(%s) violations = %+v, want one at %s", tc.args, vs, tc.ptr)
		}
	}
	if n, want := e.runs.total(), 4; n != int64(want) {
		t.Errorf("handler ran %d times, want %d (the valid cases)", n, want)
	}
}

// TestHTTPNumbersValidatedOnClientText sends the same cases over HTTP: the
// handler passes the arguments' bytes on, never a re-encoding.
func TestHTTPNumbersValidatedOnClientText(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	h.addEcho("bank/pay", paySchema)
	for i, tc := range numberCases {
		r := h.do(t, "POST", "/v1/tools/call", "tok-alice", `{"session_id":"n","step":`+strconv.Itoa(i)+`,"tool":"bank/pay","arguments":`+tc.args+`}`)
		if tc.ptr == "" {
			got, _ := json.Marshal(r.body["result"])
			if r.status != 200 || string(got) != tc.want {
				t.Errorf("POST %s = %d %s; want 200 with result %s", tc.args, r.status, r.raw, tc.want)
			}
			continue
		}
		wantError(t, "POST "+tc.args, r, 422, gateway.ValidationError, r.body["retryable"] == true)
		if !strings.Contains(r.raw, `"pointer":"`+tc.ptr+`"`) {
			t.Errorf("POST %s = %s; want a violation at %s", tc.args, r.raw, tc.ptr)
		}
	}
}
