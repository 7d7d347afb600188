package gateway

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// TestDecide is the decision of one call as a table: the facts gathered so
// far → the next action, and for an answer its type, retryability and
// whether internals go to the log under an error ID. Each row is one path
// of the recording table in the package documentation.
func TestDecide(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	plain := &tools.Tool{ID: "bank/transfer_funds", Card: tools.Card{Name: "transfer_funds"}}
	irreversible := &tools.Tool{ID: "bank/refund", Card: tools.Card{Name: "refund", Irreversible: true}}
	readOnly := &tools.Tool{ID: "bank/get_balance", Card: tools.Card{Name: "get_balance", ReadOnly: true}}
	valid := &validation{canon: []byte(`{}`), key: "k1", fp: "f1"}
	acquired := &store.Claim{Status: store.ClaimAcquired, Token: 7, Record: store.Record{Attempts: 1}}
	yes, no := true, false
	heldValue := &heldLookup{found: true, key: "k1", kind: ranValue, value: json.RawMessage(`{"ok":true}`), attempts: 1}
	granted := &store.Approval{ID: "apr_1", Granted: true, Key: "k1", Fingerprint: "f1", ExpiresAt: start.Add(time.Hour)}
	denied := &store.Approval{ID: "apr_1", Denied: true, Approver: "bob", Key: "k1", Fingerprint: "f1", ExpiresAt: start.Add(time.Hour)}
	none := &store.Approval{} // looked up, not found
	sessionDenied := &store.Approval{ID: "apr_2", Denied: true, Approver: "bob", Key: "k0", Fingerprint: "f1", ExpiresAt: start.Add(time.Hour),
		Slot: store.Slot{Tenant: "acme", Principal: "alice", SessionID: "s", Step: 0, Tool: "bank/refund"}}
	ranValueOK := &ran{kind: ranValue, value: json.RawMessage(`{"ok":true}`), at: start}

	base := func(mod func(f *facts)) *facts {
		// Unless a row says otherwise, nothing of the slot is held and a
		// place to hold the outcome is reserved.
		f := &facts{call: Call{Principal: tools.Principal{ID: "alice", Tenant: "acme"}, SessionID: "s", Step: 1},
			tool: plain, start: start, rerun: true, inProgressWait: time.Second, pending: &heldLookup{}, room: &yes, leaseLeft: &yes}
		if mod != nil {
			mod(f)
		}
		return f
	}
	// gone is a call of a tool admission did not find: its ID is
	// bank/transfer_funds, nothing is validated or looked for yet.
	gone := func(mod func(f *facts)) *facts {
		return base(func(f *facts) {
			f.call.Tool, f.tool, f.pending = "bank/transfer_funds", nil, nil
			f.unknown = &Error{Type: UnknownTool, Message: `no tool "bank/transfer_funds"`}
			if mod != nil {
				mod(f)
			}
		})
	}
	goneFound := func(r store.Record) *facts {
		return gone(func(f *facts) { f.valid, f.pending, f.found = valid, &heldLookup{}, &r })
	}
	type want struct {
		do        action
		typ       ErrorType // for actAnswer; "" is a result
		retryable bool
		internal  bool
	}
	tests := []struct {
		name string
		f    *facts
		want want
	}{
		{"no limit: validate first", base(nil), want{do: actValidate}},
		{"limit: take a token first", base(func(f *facts) { f.limit = store.RateLimit{Rate: 1, Burst: 1} }), want{do: actTakeToken}},
		{"no token", base(func(f *facts) {
			f.limit = store.RateLimit{Rate: 1, Burst: 1}
			f.token = &tokenTaken{ok: false, wait: 3 * time.Second}
		}), want{do: actAnswer, typ: RateLimited, retryable: true}},
		{"token taken: validate", base(func(f *facts) {
			f.limit = store.RateLimit{Rate: 1, Burst: 1}
			f.token = &tokenTaken{ok: true}
		}), want{do: actValidate}},
		{"invalid", base(func(f *facts) { f.valid = &validation{err: Invalid(Violation{Message: "x"})} }), want{do: actAnswer, typ: ValidationError, retryable: true}},
		{"valid: look for a held outcome", base(func(f *facts) { f.valid, f.pending = valid, nil }), want{do: actCheckHeld}},
		{"valid, nothing held: claim", base(func(f *facts) { f.valid = valid }), want{do: actClaim}},
		{"held value: the held result, without a claim", base(func(f *facts) { f.valid, f.pending = valid, heldValue }), want{do: actAnswer}},
		{"held domain error: the refusal", base(func(f *facts) {
			f.valid, f.pending = valid, &heldLookup{found: true, key: "k1", kind: ranDomain, domain: &tools.DomainError{Code: "NO"}}
		}), want{do: actAnswer, typ: DomainErrorType}},
		{"held uncertain outcome: in progress until recorded", base(func(f *facts) {
			f.valid, f.pending = valid, &heldLookup{found: true, key: "k1", kind: ranUncertain}
		}), want{do: actAnswer, typ: InProgress, retryable: true}},
		{"held no-effect outcome: in progress until released", base(func(f *facts) {
			f.valid, f.pending = valid, &heldLookup{found: true, key: "k1", kind: ranNoEffect}
		}), want{do: actAnswer, typ: InProgress, retryable: true}},
		{"held for other arguments: mismatch", base(func(f *facts) {
			other := *heldValue
			other.key = "k2"
			f.valid, f.pending = valid, &other
		}), want{do: actAnswer, typ: IdempotencyMismatch}},
		{"done: replay", base(func(f *facts) {
			f.valid = valid
			f.claim = &store.Claim{Status: store.ClaimDone, Record: store.Record{Key: "k1", Value: json.RawMessage(`1`)}}
		}), want{do: actAnswer}},
		{"done with a domain error: replayed refusal", base(func(f *facts) {
			f.valid = valid
			f.claim = &store.Claim{Status: store.ClaimDone, Record: store.Record{Key: "k1", DomainError: &tools.DomainError{Code: "NO"}}}
		}), want{do: actAnswer, typ: DomainErrorType}},
		{"in progress", base(func(f *facts) {
			f.valid = valid
			f.claim = &store.Claim{Status: store.ClaimInProgress, Record: store.Record{LeaseExpires: start.Add(10 * time.Second)}}
		}), want{do: actAnswer, typ: InProgress, retryable: true}},
		{"uncertain, reconcile", base(func(f *facts) {
			f.valid, f.rerun = valid, false
			f.claim = &store.Claim{Status: store.ClaimUncertain, Record: store.Record{Reason: "timeout"}}
		}), want{do: actAnswer, typ: UncertainOutcome, internal: true}},
		{"mismatch", base(func(f *facts) { f.valid = valid; f.claim = &store.Claim{Status: store.ClaimMismatch} }), want{do: actAnswer, typ: IdempotencyMismatch}},
		{"unknown claim status", base(func(f *facts) { f.valid = valid; f.claim = &store.Claim{Status: 99} }), want{do: actAnswer, typ: Internal, retryable: true, internal: true}},
		{"acquired, no approval needed: run", base(func(f *facts) { f.valid = valid; f.claim = acquired }), want{do: actRun}},
		{"acquired, policy set: ask it", base(func(f *facts) { f.valid, f.claim, f.askPolicy = valid, acquired, true }), want{do: actAskPolicy}},
		{"policy says no: run", base(func(f *facts) {
			f.valid, f.claim, f.askPolicy, f.needsApproval = valid, acquired, true, &no
		}), want{do: actRun}},
		{"policy says yes: look up the approval", base(func(f *facts) {
			f.valid, f.claim, f.askPolicy, f.needsApproval = valid, acquired, true, &yes
		}), want{do: actGetApproval}},
		{"irreversible: look up without asking the policy", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.askPolicy = irreversible, valid, acquired, true
		}), want{do: actGetApproval}},
		{"tainted, not read-only: look up", base(func(f *facts) {
			f.call.Taint, f.valid, f.claim = "web/fetch step 2", valid, acquired
		}), want{do: actGetApproval}},
		{"tainted, read-only: run", base(func(f *facts) {
			f.tool, f.call.Taint, f.valid, f.claim = readOnly, "web/fetch step 2", valid, acquired
		}), want{do: actRun}},
		{"granted approval: run", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.approval = irreversible, valid, acquired, granted
		}), want{do: actRun}},
		{"no approval of its own: look up the session's denial", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.approval = irreversible, valid, acquired, &store.Approval{}
		}), want{do: actGetSessionDenial}},
		{"approval for other arguments: create", base(func(f *facts) {
			other := *granted
			other.Fingerprint = "f2"
			f.tool, f.valid, f.claim, f.approval, f.sessionDenial = irreversible, valid, acquired, &other, none
		}), want{do: actCreateApproval}},
		{"approval expired: create", base(func(f *facts) {
			old := *granted
			old.ExpiresAt = start
			f.tool, f.valid, f.claim, f.approval, f.sessionDenial = irreversible, valid, acquired, &old, none
		}), want{do: actCreateApproval}},
		{"approval pending: create (idempotently)", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.approval, f.sessionDenial = irreversible, valid, acquired, &store.Approval{ID: "apr_1", Key: "k1", Fingerprint: "f1"}, none
		}), want{do: actCreateApproval}},
		{"created: give the claim back", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.approval, f.created = irreversible, valid, acquired, &store.Approval{}, &store.Approval{ID: "apr_1"}
		}), want{do: actUnclaim}},
		{"given back: confirmation required", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.approval, f.created, f.unclaimed = irreversible, valid, acquired, &store.Approval{}, &store.Approval{ID: "apr_1"}, true
		}), want{do: actAnswer, typ: ConfirmationRequired}},
		{"denied approval: give the claim back", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.approval = irreversible, valid, acquired, denied
		}), want{do: actUnclaim}},
		{"denied approval, claim given back: permission denied, not retryable", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.approval, f.unclaimed = irreversible, valid, acquired, denied, true
		}), want{do: actAnswer, typ: PermissionDenied}},
		{"denied while requesting: permission denied", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.approval, f.created, f.unclaimed = irreversible, valid, acquired, &store.Approval{}, denied, true
		}), want{do: actAnswer, typ: PermissionDenied}},
		{"denial expired: create", base(func(f *facts) {
			old := *denied
			old.ExpiresAt = start
			f.tool, f.valid, f.claim, f.approval, f.sessionDenial = irreversible, valid, acquired, &old, none
		}), want{do: actCreateApproval}},
		{"denial of other arguments: create", base(func(f *facts) {
			other := *denied
			other.Fingerprint = "f2"
			f.tool, f.valid, f.claim, f.approval, f.sessionDenial = irreversible, valid, acquired, &other, none
		}), want{do: actCreateApproval}},
		{"the session's denial of these arguments at another step: give the claim back", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.approval, f.sessionDenial = irreversible, valid, acquired, &store.Approval{}, sessionDenied
		}), want{do: actUnclaim}},
		{"the session's denial, claim given back: permission denied, not retryable", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.approval, f.sessionDenial, f.unclaimed = irreversible, valid, acquired, &store.Approval{}, sessionDenied, true
		}), want{do: actAnswer, typ: PermissionDenied}},
		{"the session's denial, this step's own approval granted: run as granted", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.approval, f.sessionDenial = irreversible, valid, acquired, granted, sessionDenied
		}), want{do: actRun}},
		{"the session's denial, expired: create", base(func(f *facts) {
			old := *sessionDenied
			old.ExpiresAt = start
			f.tool, f.valid, f.claim, f.approval, f.sessionDenial = irreversible, valid, acquired, &store.Approval{}, &old
		}), want{do: actCreateApproval}},
		{"a denial of another session: create", base(func(f *facts) {
			other := *sessionDenied
			other.Slot.SessionID = "s2"
			f.tool, f.valid, f.claim, f.approval, f.sessionDenial = irreversible, valid, acquired, &store.Approval{}, &other
		}), want{do: actCreateApproval}},
		{"a denial of another principal: create", base(func(f *facts) {
			another := *sessionDenied
			another.Slot.Principal = "mallory"
			f.tool, f.valid, f.claim, f.approval, f.sessionDenial = irreversible, valid, acquired, &store.Approval{}, &another
		}), want{do: actCreateApproval}},
		{"acquired, no place reserved: reserve", base(func(f *facts) { f.valid, f.claim, f.room = valid, acquired, nil }), want{do: actReserve}},
		{"approved, no place reserved: reserve", base(func(f *facts) {
			f.tool, f.valid, f.claim, f.approval, f.room = irreversible, valid, acquired, granted, nil
		}), want{do: actReserve}},
		{"lease not checked: check it", base(func(f *facts) { f.valid, f.claim, f.leaseLeft = valid, acquired, nil }), want{do: actCheckLease}},
		{"no place reserved: reserve before checking the lease", base(func(f *facts) {
			f.valid, f.claim, f.room, f.leaseLeft = valid, acquired, nil, nil
		}), want{do: actReserve}},
		{"lease too short to run: give the claim back", base(func(f *facts) { f.valid, f.claim, f.leaseLeft = valid, acquired, &no }), want{do: actUnclaim}},
		{"lease too short, claim given back: retry", base(func(f *facts) {
			f.valid, f.claim, f.leaseLeft, f.unclaimed = valid, acquired, &no, true
		}), want{do: actAnswer, typ: Internal, retryable: true, internal: true}},
		{"no place to hold the outcome: give the claim back", base(func(f *facts) { f.valid, f.claim, f.room = valid, acquired, &no }), want{do: actUnclaim}},
		{"no place, claim given back: retryable refusal, nothing ran", base(func(f *facts) {
			f.valid, f.claim, f.room, f.unclaimed = valid, acquired, &no, true
		}), want{do: actAnswer, typ: Internal, retryable: true}},
		{"ran a value: complete", base(func(f *facts) { f.valid, f.claim, f.ran = valid, acquired, ranValueOK }), want{do: actComplete}},
		{"ran a domain error: complete", base(func(f *facts) {
			f.valid, f.claim, f.ran = valid, acquired, &ran{kind: ranDomain, domain: &tools.DomainError{Code: "NO"}}
		}), want{do: actComplete}},
		{"no effect: release", base(func(f *facts) { f.valid, f.claim, f.ran = valid, acquired, &ran{kind: ranNoEffect} }), want{do: actRelease}},
		{"uncertain: mark", base(func(f *facts) { f.valid, f.claim, f.ran = valid, acquired, &ran{kind: ranUncertain} }), want{do: actMarkUncertain}},
		{"ran a value, record failed: hold it", base(func(f *facts) {
			f.valid, f.claim, f.ran, f.recordFailed = valid, acquired, ranValueOK, true
		}), want{do: actHold}},
		{"ran a value, held: the result", base(func(f *facts) {
			f.valid, f.claim, f.ran, f.recordFailed, f.held = valid, acquired, ranValueOK, true, true
		}), want{do: actAnswer}},
		{"ran a domain error, held: the refusal", base(func(f *facts) {
			f.valid, f.claim, f.ran, f.recordFailed, f.held = valid, acquired, &ran{kind: ranDomain, domain: &tools.DomainError{Code: "NO"}}, true, true
		}), want{do: actAnswer, typ: DomainErrorType}},
		{"uncertain, mark failed: hold it", base(func(f *facts) {
			f.valid, f.claim, f.ran, f.recordFailed = valid, acquired, &ran{kind: ranUncertain, reason: "timeout"}, true
		}), want{do: actHold}},
		{"uncertain, held: the uncertain answer", base(func(f *facts) {
			f.valid, f.claim, f.ran, f.recordFailed, f.held = valid, acquired, &ran{kind: ranUncertain, reason: "timeout"}, true, true
		}), want{do: actAnswer, typ: DownstreamFailure, retryable: true, internal: true}},
		{"no effect, release failed: hold it", base(func(f *facts) {
			f.valid, f.claim, f.ran, f.recordFailed = valid, acquired, &ran{kind: ranNoEffect, reason: "dial"}, true
		}), want{do: actHold}},
		{"completed: the result", base(func(f *facts) { f.valid, f.claim, f.ran, f.fenced = valid, acquired, ranValueOK, &no }), want{do: actAnswer}},
		{"completed a domain error: the refusal", base(func(f *facts) {
			f.valid, f.claim, f.ran, f.fenced = valid, acquired, &ran{kind: ranDomain, domain: &tools.DomainError{Code: "NO"}}, &no
		}), want{do: actAnswer, typ: DomainErrorType}},
		{"completion fenced", base(func(f *facts) { f.valid, f.claim, f.ran, f.fenced = valid, acquired, ranValueOK, &yes }), want{do: actAnswer, typ: DownstreamFailure, retryable: true}},
		{"completion fenced, reconcile", base(func(f *facts) {
			f.valid, f.claim, f.ran, f.fenced, f.rerun = valid, acquired, ranValueOK, &yes, false
		}), want{do: actAnswer, typ: DownstreamFailure}},
		{"released: retryable failure", base(func(f *facts) {
			f.valid, f.claim, f.ran, f.fenced = valid, acquired, &ran{kind: ranNoEffect, reason: "dial"}, &no
		}), want{do: actAnswer, typ: DownstreamFailure, retryable: true, internal: true}},
		{"marked uncertain, rerun", base(func(f *facts) {
			f.valid, f.claim, f.ran, f.fenced = valid, acquired, &ran{kind: ranUncertain, reason: "timeout"}, &no
		}), want{do: actAnswer, typ: DownstreamFailure, retryable: true, internal: true}},
		{"marked uncertain, reconcile", base(func(f *facts) {
			f.valid, f.claim, f.ran, f.fenced, f.rerun = valid, acquired, &ran{kind: ranUncertain, reason: "timeout"}, &no, false
		}), want{do: actAnswer, typ: DownstreamFailure, internal: true}},

		// A call admission found no tool for (decideGone): its key's record answers.
		{"gone: validate first", gone(nil), want{do: actValidate}},
		{"gone, bare name: unknown tool", gone(func(f *facts) { f.call.Tool = "transfer_funds" }), want{do: actAnswer, typ: UnknownTool}},
		{"gone, malformed call: unknown tool", gone(func(f *facts) { f.valid = &validation{err: invalidCall("x")} }), want{do: actAnswer, typ: UnknownTool}},
		{"gone, valid: look for a held outcome", gone(func(f *facts) { f.valid = valid }), want{do: actCheckHeld}},
		{"gone, held value: the held result", gone(func(f *facts) { f.valid, f.pending = valid, heldValue }), want{do: actAnswer}},
		{"gone, nothing held: look the record up", gone(func(f *facts) { f.valid, f.pending = valid, &heldLookup{} }), want{do: actLookUp}},
		{"gone, no record: unknown tool", goneFound(store.Record{}), want{do: actAnswer, typ: UnknownTool}},
		{"gone, another key's record: unknown tool", goneFound(store.Record{Key: "k2", State: store.StateDone, ExpiresAt: start.Add(time.Hour)}), want{do: actAnswer, typ: UnknownTool}},
		{"gone, expired record: unknown tool", goneFound(store.Record{Key: "k1", State: store.StateDone, ExpiresAt: start}), want{do: actAnswer, typ: UnknownTool}},
		{"gone, done: replay", goneFound(store.Record{Key: "k1", State: store.StateDone, Value: json.RawMessage(`{}`), ExpiresAt: start.Add(time.Hour)}), want{do: actAnswer}},
		{"gone, domain error: replay", goneFound(store.Record{Key: "k1", State: store.StateDone, DomainError: &tools.DomainError{Code: "NO"}, ExpiresAt: start.Add(time.Hour)}),
			want{do: actAnswer, typ: DomainErrorType}},
		{"gone, in progress: in progress", goneFound(store.Record{Key: "k1", State: store.StateInProgress, LeaseExpires: start.Add(time.Minute), ExpiresAt: start.Add(time.Hour)}),
			want{do: actAnswer, typ: InProgress, retryable: true}},
		{"gone, lease expired: uncertain, not re-run", goneFound(store.Record{Key: "k1", State: store.StateInProgress, LeaseExpires: start, ExpiresAt: start.Add(time.Hour)}),
			want{do: actAnswer, typ: UncertainOutcome, internal: true}},
		{"gone, uncertain: not re-run", goneFound(store.Record{Key: "k1", State: store.StateUncertain, Reason: "timeout", ExpiresAt: start.Add(time.Hour)}),
			want{do: actAnswer, typ: UncertainOutcome, internal: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := decide(tc.f)
			if got.do != tc.want.do {
				t.Fatalf("decide = %v, want %v", got.do, tc.want.do)
			}
			if got.do != actAnswer {
				return
			}
			var typ ErrorType
			retryable := false
			if got.err != nil {
				typ, retryable = got.err.Type, got.err.Retryable
			} else if got.result == nil {
				t.Errorf("an answer with neither result nor error")
			}
			if typ != tc.want.typ || retryable != tc.want.retryable || (got.internal != "") != tc.want.internal {
				t.Errorf("answer %s retryable=%v internal=%q; want %s retryable=%v internal=%v",
					typ, retryable, got.internal, tc.want.typ, tc.want.retryable, tc.want.internal)
			}
			if got.err != nil && got.internal != "" && got.err.Message == got.internal {
				t.Errorf("the client's message is the internal text")
			}
		})
	}
}

// TestDecideIsPure: the same facts give the same decision, and decide
// changes none of them.
func TestDecideIsPure(t *testing.T) {
	f := &facts{call: Call{SessionID: "s"}, tool: &tools.Tool{ID: "a/b"}, rerun: true,
		valid: &validation{key: "k"}, pending: &heldLookup{}, claim: &store.Claim{Status: store.ClaimAcquired},
		ran: &ran{kind: ranUncertain, reason: "r"}, fenced: new(bool)}
	before := *f
	a, b := decide(f), decide(f)
	if a.do != b.do || a.internal != b.internal || a.err.Message != b.err.Message || !reflect.DeepEqual(*f, before) {
		t.Errorf("decide is not a pure function of its facts: %+v / %+v", a, b)
	}
}

func TestClassify(t *testing.T) {
	dom := &tools.DomainError{Code: "INSUFFICIENT_FUNDS"}
	tests := []struct {
		name  string
		value json.RawMessage
		err   error
		panic any
		want  ranKind
	}{
		{"value", json.RawMessage(`{"a":1}`), nil, nil, ranValue},
		{"empty value", nil, nil, nil, ranValue},
		{"invalid JSON", json.RawMessage(`{`), nil, nil, ranUncertain},
		{"domain error", nil, dom, nil, ranDomain},
		{"wrapped domain error", nil, errors.Join(errors.New("ctx"), dom), nil, ranDomain},
		{"no effect", nil, tools.NoEffect(errors.New("dial")), nil, ranNoEffect},
		{"other error", nil, errors.New("timeout"), nil, ranUncertain},
		{"panic", nil, nil, "boom", ranUncertain},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(tc.value, tc.err, tc.panic); got.kind != tc.want {
				t.Errorf("classify(%s) = %d, want %d", tc.name, got.kind, tc.want)
			}
		})
	}
	if r := classify(nil, nil, nil); string(r.value) != "null" {
		t.Errorf("classify(empty) value = %s, want null", r.value)
	}
}

// TestDecideReconnecting: a handler that refused because its server is
// being reconnected ([tools.Unavailable]) is a no-effect outcome (the
// claim released), answered as a retryable DOWNSTREAM_FAILURE coded
// [CodeServerReconnecting] with the handler's retry-after hint.
func TestDecideReconnecting(t *testing.T) {
	r := classify(nil, tools.Unavailable(errors.New("mcp: upstream server not connected: db"), 3*time.Second), nil)
	if r.kind != ranNoEffect || !r.reconnecting || r.retryAfter != 3*time.Second {
		t.Fatalf("classify(Unavailable) = %+v, want no effect, reconnecting, retry after 3s", r)
	}
	no := false
	f := &facts{call: Call{Principal: tools.Principal{ID: "alice", Tenant: "acme"}, SessionID: "s", Step: 1},
		tool: &tools.Tool{ID: "db/query"}, valid: &validation{key: "k1"}, pending: &heldLookup{},
		claim: &store.Claim{Status: store.ClaimAcquired, Record: store.Record{Attempts: 1}}, ran: &r}
	if n := decide(f); n.do != actRelease {
		t.Fatalf("decide before the release = %v, want actRelease", n.do)
	}
	f.fenced = &no
	n := decide(f)
	if e := n.err; n.do != actAnswer || e == nil || e.Type != DownstreamFailure || !e.Retryable || e.Code != CodeServerReconnecting ||
		e.RetryAfter != 3*time.Second || strings.Contains(e.Message, "not connected: db") {
		t.Errorf("decide after the release = %+v (%+v); want a retryable DOWNSTREAM_FAILURE, code %s, retry after 3s, no internals", n, n.err, CodeServerReconnecting)
	}
	// A re-run of an uncertain call that did nothing leaves it uncertain.
	f.fenced, f.claim = nil, &store.Claim{Status: store.ClaimAcquired, Previous: store.StateUncertain, Record: store.Record{Attempts: 2}}
	if n := decide(f); n.do != actMarkUncertain {
		t.Errorf("decide after a re-run of an uncertain call refused = %v, want actMarkUncertain", n.do)
	}
}
