package gateway_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// TestTaintRequiresApprovalForWrites pins the untrusted-output policy: a
// tainted call of a write tool is held for approval whatever its usual
// threshold, a read-only tool still runs, and the taint and the acting
// worker are in the approval and the audit.
func TestTaintRequiresApprovalForWrites(t *testing.T) {
	e := newEnv(t, nil)
	taint := "mail/read_inbox at step 2"
	held := transferCall(alice, "s", 3, okArgs)
	held.Actor, held.Taint = "worker:accounts", taint
	_, err := e.Gateway.Execute(t.Context(), held)
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Type != gateway.ConfirmationRequired {
		t.Fatalf("tainted transfer = %v, want CONFIRMATION_REQUIRED", err)
	}
	a, err := e.Gateway.Approval(t.Context(), alice, ge.ApprovalID)
	if err != nil || a.Taint != taint {
		t.Errorf("approval = %+v, %v; want the taint shown", a, err)
	}
	if _, err := e.Gateway.Execute(t.Context(), gateway.Call{Principal: alice, SessionID: "s", Step: 4, Tool: "bank/get_balance",
		Arguments: json.RawMessage(`{"account":"ACC-00001"}`), Taint: taint}); err != nil {
		t.Errorf("tainted read-only call = %v, want it to run", err)
	}
	if _, err := e.Gateway.Execute(t.Context(), transferCall(alice, "s", 5, okArgs)); err != nil {
		t.Errorf("untainted transfer = %v, want it to run", err)
	}
	if runs := e.Runs.Args; len(runs) != 2 || !strings.Contains(runs[0], `"account"`) || !strings.Contains(runs[1], `"amount"`) {
		t.Errorf("runs = %q, want one balance and one transfer (untainted)", runs)
	}
	audit, err := e.Store.QueryAudit(t.Context(), store.AuditQuery{Tool: "bank/transfer_funds"})
	if err != nil || len(audit) != 2 || audit[0].Actor != "worker:accounts" || audit[0].Taint != taint || audit[0].Outcome != "confirmation_required" {
		t.Errorf("audit = %+v, %v; want the held call with its actor and taint first", audit, err)
	}
}
