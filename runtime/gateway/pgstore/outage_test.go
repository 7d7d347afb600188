package pgstore_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/testservices"
	"github.com/toolgate/toolgate/runtime/gateway/pgstore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// openPrivate starts a PostgreSQL server for this test alone, which the
// test may kill, and opens a store on it.
func openPrivate(t *testing.T) (store.Store, storetest.Server) {
	t.Helper()
	srv := testservices.NewPostgres(t)
	st := storetest.OpenN(t, 1, func() (store.Store, error) { return pgstore.Open(context.Background(), srv.URL, nil) })[0]
	return st, srv
}

// PostgreSQL is killed while a slow tool runs: the tool's outcome is held,
// answered to re-sends, and recorded once the server is back; the tool
// runs once (security invariant 9).
func TestRecordOutage(t *testing.T) {
	storetest.RunRecordOutage(t, openPrivate)
}

// 1,500 calls from 32 clients while PostgreSQL is killed and restarted
// three times: no call runs twice (skipped with -short). The figures are in
// docs/security.md.
func TestOutageUnderLoad(t *testing.T) {
	storetest.RunOutageLoad(t, openPrivate, storetest.OutageLoad{})
}
