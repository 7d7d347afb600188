package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// TestDeny: an approver's denial is final for the call it covers: the
// call, sent again, is PERMISSION_DENIED without running and without a
// new approval request, until the approval expires; the denial is
// audited; it takes Approve's checks; a decided approval takes no other
// decision; other arguments are another call, with an approval of their
// own.
func TestDeny(t *testing.T) {
	e := newEnv(t, func(o *gateway.Options) { o.ApprovalTTL = 10 * time.Minute })
	big := `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000}`
	call := transferCall(alice, "s1", 1, big)
	id := wantType(t, "transfer above 1000", second(e.Gateway.Execute(ctx, call)), gateway.ConfirmationRequired).ApprovalID

	wantDecisionRefused(t, "denial", id, e.Gateway.Deny)

	a, err := e.Gateway.Deny(ctx, bob, id)
	if err != nil || !a.Denied || a.Granted || a.Approver != "bob" || a.Requester != "alice" {
		t.Fatalf("Deny = %+v, %v; want denied by bob for alice", a, err)
	}
	if again, err := e.Gateway.Deny(ctx, bob, id); err != nil || !again.Denied {
		t.Errorf("repeating the same denial = %+v, %v; want it again", again, err)
	}
	wantType(t, "granting a denied approval", second(e.Gateway.Approve(ctx, bob, id)), gateway.ValidationError)
	wantType(t, "another approver's denial", second(e.Gateway.Deny(ctx, carol, id)), gateway.ValidationError)

	for i := range 3 { // a looping model
		ge := wantType(t, "the denied call", second(e.Gateway.Execute(ctx, call)), gateway.PermissionDenied)
		if ge.ApprovalID != id || ge.Retryable || !strings.Contains(ge.Message, "bob") || !strings.Contains(ge.Message, "denied") {
			t.Fatalf("send %d of the denied call = %+v; want PERMISSION_DENIED, not retryable, naming approval %s and bob", i+1, ge, id)
		}
	}
	if n := e.Runs.Total(); n != 0 {
		t.Fatalf("handler ran %d times after a denial, want 0", n)
	}
	if got, err := e.Gateway.Approval(ctx, alice, id); err != nil || !got.Denied {
		t.Errorf("the requester reads its approval = %+v, %v; want it denied", got, err)
	}
	entries, err := e.Store.QueryAudit(ctx, store.AuditQuery{Tool: "bank/transfer_funds"})
	if err != nil {
		t.Fatal(err)
	}
	var denial, refused int
	for _, en := range entries {
		switch {
		case en.Principal == "bob" && en.ApprovalID == id && strings.Contains(en.Reason, "approval denied for alice") && en.Outcome == store.OutcomeOK:
			denial++
		case en.Principal == "alice" && en.Outcome == store.OutcomeDenied && en.ApprovalID == id:
			refused++
		}
	}
	if denial != 2 || refused != 3 {
		t.Errorf("audit: %d denials by bob (want 2: the first and its repeat), %d refused sends (want 3); entries %+v", denial, refused, entries)
	}

	// Other arguments are another call: a new approval, still pending.
	other := transferCall(alice, "s1", 2, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":4000}`)
	if ge := wantType(t, "other arguments", second(e.Gateway.Execute(ctx, other)), gateway.ConfirmationRequired); ge.ApprovalID == id {
		t.Error("other arguments share the denied approval")
	}
	// Once the denied approval expired, the call may be asked about again.
	e.Clock.Advance(10 * time.Minute)
	wantType(t, "the denied call after its approval expired", second(e.Gateway.Execute(ctx, call)), gateway.ConfirmationRequired)
	// The fresh request is pending again and takes a new decision.
	if a, err := e.Gateway.Deny(ctx, carol, id); err != nil || !a.Denied || a.Approver != "carol" {
		t.Errorf("denying the request filed after the denial expired = %+v, %v; want denied by carol", a, err)
	}
}

// TestDenyCoversTheSession: a denial covers the same arguments to the same
// tool sent by the same principal at any step of the session, as an MCP
// client or a looping model sends a repeat: PERMISSION_DENIED naming the
// approver and the step that was denied, not retryable, nothing run and no
// approval request filed, until the denial expires. Another session,
// another principal and other arguments are asked about anew.
func TestDenyCoversTheSession(t *testing.T) {
	e := newEnv(t, func(o *gateway.Options) { o.ApprovalTTL = 10 * time.Minute })
	big := `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000}`
	canon := `{"amount":5000,"source_account":"ACC-00001","target_account":"ACC-00002"}`
	id := wantType(t, "transfer above 1000", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, big))), gateway.ConfirmationRequired).ApprovalID
	if _, err := e.Gateway.Deny(ctx, bob, id); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Minute)
	for step := 2; step <= 4; step++ {
		ge := wantType(t, "the denied call at a new step", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", step, big))), gateway.PermissionDenied)
		if ge.Retryable || ge.ApprovalID == "" || !strings.Contains(ge.Message, "bob") || !strings.Contains(ge.Message, "at step 1 of this session") {
			t.Fatalf("step %d: %+v; want PERMISSION_DENIED, not retryable, naming bob, step 1 and an approval", step, ge)
		}
		key := gateway.DeriveKey("acme", "alice", "s1", step, "bank/transfer_funds", []byte(canon))
		if _, err := e.Store.GetApproval(ctx, gateway.ApprovalIDOf(key)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("step %d filed an approval request (err %v); want none", step, err)
		}
		if a, err := e.Gateway.Approval(ctx, bob, ge.ApprovalID); err != nil || !a.Denied || a.Approver != "bob" || a.Slot.Step != 1 {
			t.Fatalf("step %d: the approval it names = %+v, %v; want bob's denial of step 1", step, a, err)
		}
	}
	if n := e.Runs.Total(); n != 0 {
		t.Fatalf("handler ran %d times after a denial, want 0", n)
	}
	entries, err := e.Store.QueryAudit(ctx, store.AuditQuery{Tool: "bank/transfer_funds"})
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, en := range entries {
		if en.Principal == "alice" && en.Step > 1 && en.Outcome == store.OutcomeDenied {
			refused++
			if a, err := e.Gateway.Approval(ctx, bob, en.ApprovalID); err != nil || !a.Denied {
				t.Errorf("the audit of step %d names approval %q (%+v, %v); want the session's denial", en.Step, en.ApprovalID, a, err)
			}
		}
	}
	if refused != 3 {
		t.Errorf("audit: %d refused sends at steps 2-4, want 3; entries %+v", refused, entries)
	}

	wantType(t, "the same call in another session", second(e.Gateway.Execute(ctx, transferCall(alice, "s2", 1, big))), gateway.ConfirmationRequired)
	wantType(t, "other arguments in the session", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 5,
		`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":4000}`))), gateway.ConfirmationRequired)
	namesake := alice // another principal of the tenant, in a session of the same ID
	namesake.ID = "alice2"
	wantType(t, "another principal with the session's ID", second(e.Gateway.Execute(ctx, transferCall(namesake, "s1", 6, big))), gateway.ConfirmationRequired)

	e.Clock.Advance(10 * time.Minute) // the denial expired
	again := wantType(t, "the denied call after its denial expired", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 7, big))), gateway.ConfirmationRequired).ApprovalID
	if _, err := e.Gateway.Deny(ctx, bob, again); err != nil {
		t.Fatal(err)
	}
	ge := wantType(t, "the call denied again, at a new step", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 8, big))), gateway.PermissionDenied)
	if !strings.Contains(ge.Message, "at step 7 of this session") {
		t.Errorf("after a second denial: %+v; want the session's denial renewed, naming step 7", ge)
	}
}

// TestDenyRacesAnotherStep: a request filed at another step before the
// denial (a client that re-sent the call while the approver was deciding)
// cannot be granted once the session's denial is in force, and the call
// at that step is refused; one granted before the denial still runs, and
// other arguments are granted as before.
func TestDenyRacesAnotherStep(t *testing.T) {
	e := newEnv(t, func(o *gateway.Options) { o.ApprovalTTL = 10 * time.Minute })
	big := `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000}`
	call := func(step int) (*gateway.Result, error) {
		return e.Gateway.Execute(ctx, transferCall(alice, "s1", step, big))
	}
	first := wantType(t, "step 1", second(call(1)), gateway.ConfirmationRequired).ApprovalID
	early := wantType(t, "step 2, granted before the denial", second(call(2)), gateway.ConfirmationRequired).ApprovalID
	late := wantType(t, "step 3, still pending at the denial", second(call(3)), gateway.ConfirmationRequired).ApprovalID
	other := wantType(t, "other arguments at step 4", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 4,
		`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":4000}`))), gateway.ConfirmationRequired).ApprovalID
	if _, err := e.Gateway.Approve(ctx, bob, early); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Gateway.Deny(ctx, bob, first); err != nil {
		t.Fatal(err)
	}

	ge := wantType(t, "granting the pending request of step 3", second(e.Gateway.Approve(ctx, carol, late)), gateway.ValidationError)
	if !strings.Contains(ge.Message, "step 1") || !strings.Contains(ge.Message, "bob") {
		t.Errorf("refused grant = %+v; want a message naming the denial (bob, step 1)", ge)
	}
	if a, err := e.Gateway.Approval(ctx, bob, late); err != nil || a.Granted {
		t.Fatalf("step 3's approval after the refused grant = %+v, %v; want not granted", a, err)
	}
	wantType(t, "the call at step 3", second(call(3)), gateway.PermissionDenied)
	if n := e.Runs.Total(); n != 0 {
		t.Fatalf("handler ran %d times before step 2 was sent again, want 0", n)
	}
	if _, err := call(2); err != nil {
		t.Fatalf("step 2, granted before the denial: %v; want it to run", err)
	}
	if _, err := e.Gateway.Approve(ctx, carol, other); err != nil {
		t.Fatalf("granting other arguments of the session: %v", err)
	}
	if n := e.Runs.Total(); n != 1 {
		t.Fatalf("handler ran %d times, want 1 (step 2)", n)
	}
}

// TestDenyGranted: an approval granted cannot be denied, and a denial of
// a store that does not record denials says so.
func TestDenyGranted(t *testing.T) {
	e := newEnv(t, nil)
	big := `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000}`
	id := wantType(t, "transfer above 1000", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, big))), gateway.ConfirmationRequired).ApprovalID
	if _, err := e.Gateway.Approve(ctx, bob, id); err != nil {
		t.Fatal(err)
	}
	wantType(t, "denying a granted approval", second(e.Gateway.Deny(ctx, carol, id)), gateway.ValidationError)

	g, err := gateway.New(e.Registry, grantOnly{e.Store}, &gateway.Options{Clock: e.Clock, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	refund := gateway.Call{Principal: alice, SessionID: "s2", Step: 1, Tool: "billing/issue_full_refund", Arguments: json.RawMessage(`{"transaction_id":"tx-1"}`)}
	id2 := wantType(t, "an irreversible refund", second(g.Execute(ctx, refund)), gateway.ConfirmationRequired).ApprovalID
	ge := wantType(t, "a denial on a store without denials", second(g.Deny(ctx, bob, id2)), gateway.Internal)
	if !strings.Contains(ge.Message, "does not record denials") {
		t.Errorf("denial on a store without denials = %+v; want a message saying so", ge)
	}
}

// wantDecisionRefused wants decide (Approve or Deny) refused for the
// pending approval id: the requester itself, even holding the scope; a
// principal without the scope; another tenant's; an unknown ID; no
// principal.
func wantDecisionRefused(t *testing.T, what, id string, decide func(context.Context, tools.Principal, string) (*store.Approval, error)) {
	t.Helper()
	aliceGrant := alice
	aliceGrant.Scopes = append([]string{gateway.ApprovalScope}, alice.Scopes...)
	wantType(t, what+" by the requester", second(decide(ctx, aliceGrant, id)), gateway.PermissionDenied)
	wantType(t, what+" without the scope", second(decide(ctx, mallory, id)), gateway.PermissionDenied)
	wantType(t, what+" by another tenant", second(decide(ctx, eve, id)), gateway.NotFound)
	wantType(t, what+" of an unknown approval", second(decide(ctx, bob, "apr_nope")), gateway.NotFound)
	wantType(t, what+" by no principal", second(decide(ctx, tools.Principal{}, id)), gateway.Unauthenticated)
}

// grantOnly is a store that does not implement store.ApprovalDenier
// (embedding the interface hides the methods outside it).
type grantOnly struct{ store.Store }

// carol is a second approver of alice's tenant.
var carol = tools.Principal{ID: "carol", Tenant: "acme", Scopes: []string{gateway.ApprovalScope}}
