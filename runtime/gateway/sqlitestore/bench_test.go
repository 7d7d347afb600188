package sqlitestore_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// handles opens n stores on one SQLite file with opts, as n processes would.
func handles(opts *sqlitestore.Options) storetest.Handles {
	return func(tb testing.TB, n int) []store.Store {
		path := filepath.Join(tb.TempDir(), "gateway.db")
		return storetest.OpenN(tb, n, func() (store.Store, error) {
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
			open := func(tb testing.TB, n int) []store.Store {
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

// BenchmarkAppendAudit measures AppendAudit alone on a SQLite file with
// full durability: "serial" is one caller (one fsync per entry), "parallel"
// 32 callers whose entries share transactions (group commit). The chain's
// cost (reading the head, hashing the canonical entry, writing the head)
// shows as the difference to a store without it.
func BenchmarkAppendAudit(b *testing.B) {
	for _, bc := range []struct {
		name     string
		parallel bool
	}{{"serial", false}, {"parallel", true}} {
		b.Run(bc.name, func(b *testing.B) {
			st, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "gateway.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			e := store.AuditEntry{Time: time.Unix(1_700_000_000, 0), Tenant: "acme", Principal: "alice",
				SessionID: "s-1", Step: 3, Tool: "bank/transfer_funds", Key: strings.Repeat("ab", 32),
				Decision: "allow", Reason: "scopes ok", Outcome: "ok", Latency: 1500 * time.Microsecond}
			ctx := context.Background()
			b.ResetTimer()
			if !bc.parallel {
				for range b.N {
					if err := st.AppendAudit(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			b.SetParallelism(32 / max(1, runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := st.AppendAudit(ctx, e); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
