package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// TestAuditHoldsNoArguments: whatever a call carries in its arguments (a
// secret in an allowed call, in one the schema refuses, in one held for
// approval, in one whose handler fails or returns a domain error quoting
// it), no audit entry holds it: the entry has the idempotency key (a hash
// of the arguments) in its place, and the chain still verifies.
func TestAuditHoldsNoArguments(t *testing.T) {
	const tok = "sk-live-0a9f8e7d6c5b4a39"
	e := newEnv(t, nil)
	ctx := context.Background()
	calls := []struct {
		name    string
		args    string
		handler tools.Handler
	}{
		{"allowed", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":10,"memo":"` + tok + `"}`, nil},
		{"refused by the schema", `{"source_account":"` + tok + `","target_account":"ACC-00002","amount":10}`, nil},
		{"wrong type", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":"` + tok + `"}`, nil},
		{"held for approval", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000,"memo":"` + tok + `"}`, nil},
		{"handler fails quoting it", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":11,"memo":"` + tok + `"}`,
			func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				return nil, errors.New("upstream rejected " + string(args))
			}},
		{"domain error", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":12,"memo":"` + tok + `"}`,
			func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				return nil, &tools.DomainError{Code: "INSUFFICIENT_FUNDS", Message: "memo " + tok}
			}},
	}
	for i, c := range calls {
		if c.handler != nil {
			e.SetTransfer(c.handler)
		}
		_, _ = e.Gateway.Execute(ctx, transferCall(alice, "s", i, c.args))
	}
	entries, err := e.Store.QueryAudit(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(calls) {
		t.Fatalf("%d audit entries, want %d", len(entries), len(calls))
	}
	for i, en := range entries {
		b, _ := json.Marshal(en)
		if strings.Contains(string(b), tok) || strings.Contains(string(b), "sk-live") {
			t.Errorf("%s: the audit entry holds the argument: %s", calls[i].name, b)
		}
	}
	rep, err := auditchain.Verify(ctx, e.Store.(store.AuditChain), nil)
	if err != nil || rep.Break != nil || rep.Entries != len(calls) {
		t.Errorf("auditchain.Verify = %+v (%v), %v", rep, rep.Break, err)
	}
}
