package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// handles opens n stores on one SQLite file with opts, as n processes would.
func handles(opts *sqlitestore.Options) storetest.Handles {
	return func(tb testing.TB, n int) []gateway.Store {
		path := filepath.Join(tb.TempDir(), "gateway.db")
		return storetest.OpenN(tb, n, func() (gateway.Store, error) {
			return sqlitestore.Open(context.Background(), path, opts)
		})
	}
}

// BenchmarkExecuteConcurrent measures Gateway.Execute over the SQLite store
// with full durability (WAL, synchronous=FULL): 32 concurrent callers, each
// making fresh calls (distinct slots) of a no-op tool, so every call is one
// claim, one completion and one audit append, all fsynced. It reports
// calls/s, the per-call p50 and p99, and CPU time per call. "nobatch"
// disables group commit (MaxBatch 1) for comparison.
func BenchmarkExecuteConcurrent(b *testing.B) {
	for _, bc := range []struct {
		name     string
		maxBatch int
	}{{"groupcommit", 0}, {"nobatch", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			storetest.BenchmarkExecute(b, handles(&sqlitestore.Options{MaxBatch: bc.maxBatch}), 1, 32)
		})
	}
}
