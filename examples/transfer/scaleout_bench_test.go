package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testservices"
)

// BenchmarkScaleOut measures `transfer serve` over each gateway store with
// one and three processes sharing it (and the ledger in one --data folder):
// b.N fresh transfer_funds calls (0.01 USD around the ring of seeded
// accounts, each its own step) from 32 concurrent callers over loopback,
// call i going to process i mod procs. It reports calls/s and the p50 and
// p99 latency. The memory store is measured with one process only: it is
// not shared. Run it with a fixed count:
//
//	go test -run XXX -bench ScaleOut -benchtime 3000x ./examples/transfer
func BenchmarkScaleOut(b *testing.B) {
	const callers = 32
	for _, store := range []string{"memory", "sqlite", "redis", "postgres"} {
		for _, procs := range []int{1, 3} {
			if store == "memory" && procs > 1 {
				continue
			}
			b.Run(fmt.Sprintf("store=%s/procs=%d", store, procs), func(b *testing.B) {
				var flags []string
				switch store {
				case "memory":
					flags = []string{"--store", "memory"}
				case "redis":
					flags = []string{"--store", testservices.NewRedis(b).URL}
				case "postgres":
					flags = []string{"--store", testservices.NewPostgres(b).URL}
				}
				data, tokens := b.TempDir(), writeTokens(b)
				servers := make([]*server, procs)
				for i := range servers {
					servers[i] = startServe(b, data, tokens, flags...)
				}
				client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: callers}}
				ctx := context.Background()
				lat := make([]time.Duration, b.N)
				var next atomic.Int64
				var failed atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				start := time.Now()
				for range callers {
					wg.Go(func() {
						for {
							i := int(next.Add(1) - 1)
							if i >= b.N {
								return
							}
							body := callBody("bench", i, "bank/transfer_funds",
								fmt.Sprintf(`{"source_account":"ACC-%05d","target_account":"ACC-%05d","amount":0.01}`, i%10+1, (i+1)%10+1))
							t0 := time.Now()
							r, err := post(ctx, client, servers[i%procs].base+"/v1/tools/call", "alice-token", body)
							lat[i] = time.Since(t0)
							if err != nil || r.status != http.StatusOK {
								failed.Add(1)
							}
						}
					})
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				if n := failed.Load(); n > 0 {
					b.Fatalf("%d of %d calls failed", n, b.N)
				}
				slices.Sort(lat)
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				for _, s := range servers {
					s.stop(b)
				}
			})
		}
	}
}
