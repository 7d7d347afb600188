package sqlitestore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/tools"
)

// BenchmarkExecuteConcurrent measures Gateway.Execute over the SQLite store
// with full durability (WAL, synchronous=FULL): 32 concurrent callers, each
// making fresh calls (distinct slots) of a no-op tool, so every call is one
// claim, one completion and one audit append, all fsynced. It reports
// calls/s and the per-call p50 and p99. "nobatch" disables group commit
// (MaxBatch 1) for comparison.
func BenchmarkExecuteConcurrent(b *testing.B) {
	for _, bc := range []struct {
		name     string
		maxBatch int
	}{{"groupcommit", 0}, {"nobatch", 1}} {
		b.Run(bc.name, func(b *testing.B) { benchExecute(b, 32, bc.maxBatch) })
	}
}

func benchExecute(b *testing.B, callers, maxBatch int) {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "gateway.db"), &sqlitestore.Options{MaxBatch: maxBatch})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	reg := tools.NewRegistry()
	if err := reg.Add(tools.Tool{ID: "bench/noop", Card: tools.Card{Name: "noop", Scopes: []string{"bench:run"}},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"ok":true}`), nil
		}}); err != nil {
		b.Fatal(err)
	}
	g, err := gateway.New(reg, st, &gateway.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	p := tools.Principal{ID: "bench", Tenant: "acme", Scopes: []string{"bench:run"}}
	var next atomic.Int64
	lat := make([][]time.Duration, callers)
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := fmt.Sprintf("%s-%d-%d", b.Name(), b.N, c)
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				_, err := g.Execute(ctx, gateway.Call{Principal: p, SessionID: session, Step: int(i), Tool: "bench/noop",
					Arguments: json.RawMessage(`{"n":1}`)})
				lat[c] = append(lat[c], time.Since(t0))
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	// CPU time per call (user+system of the whole process) does not depend
	// on what else the machine runs, unlike calls/s.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/call")
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
