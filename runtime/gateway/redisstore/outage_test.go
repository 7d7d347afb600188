package redisstore_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/testservices"
	"github.com/toolgate/toolgate/runtime/gateway/redisstore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// openPrivate starts a Redis for this test alone, with an append-only
// file synced on every write (the durability docs/operations.md asks of
// a Redis store), which the test may kill, and opens a store on it.
func openPrivate(t *testing.T) (store.Store, storetest.Server) {
	t.Helper()
	srv := testservices.NewDurableRedis(t)
	st := storetest.OpenN(t, 1, func() (store.Store, error) { return redisstore.Open(context.Background(), srv.URL, nil) })[0]
	return st, srv
}

// Redis is killed while a slow tool runs: the tool's outcome is held,
// answered to re-sends, and recorded once the server is back; the tool
// runs once (security invariant 9).
func TestRecordOutage(t *testing.T) {
	storetest.RunRecordOutage(t, openPrivate)
}

// 1,500 calls from 32 clients while Redis is killed and restarted three
// times: no call runs twice (skipped with -short). The figures are in
// docs/security.md.
func TestOutageUnderLoad(t *testing.T) {
	storetest.RunOutageLoad(t, openPrivate, storetest.OutageLoad{})
}
