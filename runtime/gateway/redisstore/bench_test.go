package redisstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testservices"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/redisstore"
	"github.com/toolgate/toolgate/tools"
)

// BenchmarkExecuteConcurrent measures Gateway.Execute over one Redis (on
// loopback) with 32 concurrent callers making fresh calls of a no-op tool
// (one rate-limit-free claim, one completion, one audit append per call),
// through one gateway or three (each with its own connection pool, as
// three processes would have). It reports calls/s and the p50 and p99.
func BenchmarkExecuteConcurrent(b *testing.B) {
	for _, gateways := range []int{1, 3} {
		b.Run(fmt.Sprintf("gateways=%d", gateways), func(b *testing.B) {
			url := testservices.RedisURL(b)
			prefix := fmt.Sprintf("toolgate-bench:%d:", prefixes.Add(1))
			var stores []gateway.Store
			for range gateways {
				st, err := redisstore.Open(context.Background(), url, &redisstore.Options{Prefix: prefix})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				stores = append(stores, st)
			}
			benchExecute(b, 32, stores)
		})
	}
}

func benchExecute(b *testing.B, callers int, stores []gateway.Store) {
	ctx := context.Background()
	reg := tools.NewRegistry()
	if err := reg.Add(tools.Tool{ID: "bench/noop", Card: tools.Card{Name: "noop", Scopes: []string{"bench:run"}},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"ok":true}`), nil
		}}); err != nil {
		b.Fatal(err)
	}
	var gws []*gateway.Gateway
	for _, st := range stores {
		g, err := gateway.New(reg, st, &gateway.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		gws = append(gws, g)
	}
	p := tools.Principal{ID: "bench", Tenant: "acme", Scopes: []string{"bench:run"}}
	var next atomic.Int64
	lat := make([][]time.Duration, callers)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := range callers {
		wg.Go(func() {
			session := fmt.Sprintf("%s-%d-%d", b.Name(), b.N, c)
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				_, err := gws[int(i)%len(gws)].Execute(ctx, gateway.Call{Principal: p, SessionID: session, Step: int(i), Tool: "bench/noop",
					Arguments: json.RawMessage(`{"n":1}`)})
				lat[c] = append(lat[c], time.Since(t0))
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	}
}
