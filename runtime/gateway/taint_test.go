package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// TestTaintRequiresApprovalForWrites pins the untrusted-output policy: a
// tainted call of a write tool is held for approval whatever its usual
// threshold, a read-only tool still runs, and the taint and the acting
// worker are in the approval and the audit.
func TestTaintRequiresApprovalForWrites(t *testing.T) {
	reg := tools.NewRegistry()
	runs := map[string]int{}
	h := func(name string) tools.Handler {
		return func(context.Context, json.RawMessage) (json.RawMessage, error) {
			runs[name]++
			return json.RawMessage(`{"ok":true}`), nil
		}
	}
	err := reg.Add(
		tools.Tool{ID: "bank/transfer_funds", Card: tools.Card{Name: "transfer_funds"}, Handler: h("transfer")},
		tools.Tool{ID: "bank/get_balance", Card: tools.Card{Name: "get_balance", ReadOnly: true}, Handler: h("balance")},
	)
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	gw, err := gateway.New(reg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := tools.Principal{ID: "alice", Tenant: "acme"}
	taint := "mail/read_inbox at step 2"
	_, err = gw.Execute(t.Context(), gateway.Call{Principal: p, SessionID: "s", Step: 3, Tool: "bank/transfer_funds",
		Arguments: json.RawMessage(`{}`), Actor: "worker:accounts", Taint: taint})
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Type != gateway.ConfirmationRequired {
		t.Fatalf("tainted transfer = %v, want CONFIRMATION_REQUIRED", err)
	}
	a, err := gw.Approval(t.Context(), p, ge.ApprovalID)
	if err != nil || a.Taint != taint {
		t.Errorf("approval = %+v, %v; want the taint shown", a, err)
	}
	if _, err := gw.Execute(t.Context(), gateway.Call{Principal: p, SessionID: "s", Step: 4, Tool: "bank/get_balance",
		Arguments: json.RawMessage(`{}`), Taint: taint}); err != nil {
		t.Errorf("tainted read-only call = %v, want it to run", err)
	}
	if _, err := gw.Execute(t.Context(), gateway.Call{Principal: p, SessionID: "s", Step: 5, Tool: "bank/transfer_funds",
		Arguments: json.RawMessage(`{}`)}); err != nil {
		t.Errorf("untainted transfer = %v, want it to run", err)
	}
	if runs["transfer"] != 1 || runs["balance"] != 1 {
		t.Errorf("runs = %v, want one transfer (untainted) and one balance", runs)
	}
	audit, err := st.QueryAudit(t.Context(), store.AuditQuery{Tool: "bank/transfer_funds"})
	if err != nil || len(audit) != 2 || audit[0].Actor != "worker:accounts" || audit[0].Taint != taint || audit[0].Outcome != "confirmation_required" {
		t.Errorf("audit = %+v, %v; want the held call with its actor and taint first", audit, err)
	}
}
