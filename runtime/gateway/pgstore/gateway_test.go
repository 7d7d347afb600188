package pgstore_test

import (
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// Three gateways, each with its own connection pool to one PostgreSQL
// database (as three processes would have), receive 64 copies of one
// call: the handler runs once and every caller gets its result.
func TestGatewaysShareOneStore(t *testing.T) {
	storetest.RunGateways(t, handles, 3)
}

// Audit entries appended concurrently through three handles to one store
// (three processes) form one hash chain, which each handle verifies.
func TestAuditChainShared(t *testing.T) {
	storetest.RunAuditShared(t, handles, 3)
}

// Approvals through two gateways over one database (two processes):
// expired unanswered, granted late, re-sent twice at once, granted for
// other arguments, refused.
func TestApprovalLifecycle(t *testing.T) {
	storetest.RunApprovalLifecycle(t, handles)
}
