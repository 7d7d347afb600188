package sqlitestore_test

import (
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// Through Gateway.Execute on real SQLite files: three gateways over three
// stores on one file (as three processes) receive 64 copies of one call;
// the handler runs once and every caller gets its result.
func TestGatewaysShareOneFile(t *testing.T) {
	storetest.RunGateways(t, handles(nil), 3)
}

// Audit entries appended concurrently through three handles to one store
// (three processes) form one hash chain, which each handle verifies.
func TestAuditChainShared(t *testing.T) {
	storetest.RunAuditShared(t, handles(nil), 3)
}

// Approvals through two gateways over one file (two processes): expired
// unanswered, granted late, re-sent twice at once, granted for other
// arguments, refused.
func TestApprovalLifecycle(t *testing.T) {
	storetest.RunApprovalLifecycle(t, handles(nil))
}
