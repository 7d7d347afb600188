package redisstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// Three gateways, each with its own connection pool to one Redis (as three
// processes would have), receive 64 copies of one call: the handler runs
// once and every caller gets its result.
func TestGatewaysShareOneStore(t *testing.T) {
	storetest.RunGateways(t, handles, 3)
}

// Claims, approvals and the audit log in a SQLite file, rate limits in
// Redis: the setup of several hosts that each keep their own records but
// share one budget per principal.
func TestComposedWithSQLite(t *testing.T) {
	storetest.RunComposed(t, func(t *testing.T) storetest.Composed {
		base, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "gateway.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { base.Close() })
		return storetest.Composed{Base: base, Other: memstore.New(), Parts: gateway.Stores{RateLimits: open(t)}}
	})
}

// Audit entries appended concurrently through three handles to one store
// (three processes) form one hash chain, which each handle verifies.
func TestAuditChainShared(t *testing.T) {
	storetest.RunAuditShared(t, handles, 3)
}

// Approvals through two gateways over one Redis (two processes): expired
// unanswered, granted late, re-sent twice at once, granted for other
// arguments, refused.
func TestApprovalLifecycle(t *testing.T) {
	storetest.RunApprovalLifecycle(t, handles)
}
