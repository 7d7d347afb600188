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
// calls/s, the per-call p50 and p99, CPU time per call, and the mean
// number of writes that shared one transaction (writes/tx) and the
// transactions per call (tx/call: each is a commit some caller waited for). "nobatch"
// disables group commit (MaxBatch 1) for comparison.
func BenchmarkExecuteConcurrent(b *testing.B) {
	for _, bc := range []struct {
		name     string
		maxBatch int
	}{{"groupcommit", 0}, {"nobatch", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			var stores []*sqlitestore.Store
			open := func(tb testing.TB, n int) []gateway.Store {
				sts := handles(&sqlitestore.Options{MaxBatch: bc.maxBatch})(tb, n)
				for _, st := range sts {
					stores = append(stores, st.(*sqlitestore.Store))
				}
				return sts
			}
			storetest.BenchmarkExecute(b, open, 1, 32)
			var batches, writes int64
			for _, st := range stores {
				s := sqlitestore.WriterStats(st)
				batches, writes = batches+s.Batches, writes+s.Writes
			}
			if batches > 0 {
				b.ReportMetric(float64(writes)/float64(batches), "writes/tx")
				b.ReportMetric(float64(batches)/float64(b.N), "tx/call")
			}
		})
	}
}
