package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/tools"
)

func noopGateway(b *testing.B) *gateway.Gateway {
	b.Helper()
	noop := func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"ok":true}`), nil
	}
	reg := catalogtest.Registry(b,
		tools.Tool{ID: "bench/noop", Card: tools.Card{Name: "noop", Scopes: []string{"bench:run"}},
			InputSchema: json.RawMessage(transferSchema), Handler: noop},
		tools.Tool{ID: "bench/bare", Card: tools.Card{Name: "bare", Scopes: []string{"bench:run"}}, Handler: noop},
	)
	g, err := gateway.New(reg, memstore.New(), &gateway.Options{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

var benchPrincipal = tools.Principal{ID: "bench", Tenant: "acme", Scopes: []string{"bench:run"}}

// reportPercentiles adds p50 and p99 of the per-op samples (ns).
func reportPercentiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(samples[len(samples)*99/100].Nanoseconds()), "p99-ns")
}

// measure runs op b.N times (with i from 0), timing each run, and reports
// allocations and the p50 and p99 of the per-op times.
func measure(b *testing.B, op func(i int)) {
	samples := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		op(i)
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, samples)
}

// measureFresh measures Execute of fresh calls (one step each) of tool
// with args.
func measureFresh(b *testing.B, g *gateway.Gateway, tool string, args json.RawMessage) {
	ctx := context.Background()
	measure(b, func(i int) {
		if _, err := g.Execute(ctx, gateway.Call{Principal: benchPrincipal, SessionID: "bench", Step: i, Tool: tool, Arguments: args}); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkExecute is the full path of a fresh call (authorize, validate
// against a 4-property schema with patterns, canonicalize, derive the key,
// claim, run a no-op handler, record, audit) on memstore.
func BenchmarkExecute(b *testing.B) {
	measureFresh(b, noopGateway(b), "bench/noop", json.RawMessage(okArgs))
}

// BenchmarkExecuteNoSchema is [BenchmarkExecute] for a tool without an
// input schema and with {} arguments: the gateway's own overhead, without
// JSON Schema validation.
func BenchmarkExecuteNoSchema(b *testing.B) {
	measureFresh(b, noopGateway(b), "bench/bare", json.RawMessage(`{}`))
}

// BenchmarkExecuteReplay is a retried call answered from the record.
func BenchmarkExecuteReplay(b *testing.B) {
	g := noopGateway(b)
	ctx := context.Background()
	call := gateway.Call{Principal: benchPrincipal, SessionID: "bench", Step: 1, Tool: "bench/noop", Arguments: json.RawMessage(okArgs)}
	if _, err := g.Execute(ctx, call); err != nil {
		b.Fatal(err)
	}
	measure(b, func(int) {
		res, err := g.Execute(ctx, call)
		if err != nil || !res.Cached {
			b.Fatal(res, err)
		}
	})
}

// BenchmarkExecuteParallel runs fresh calls from GOMAXPROCS goroutines.
func BenchmarkExecuteParallel(b *testing.B) {
	g := noopGateway(b)
	ctx := context.Background()
	args := json.RawMessage(okArgs)
	var worker atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		session := fmt.Sprintf("bench-%d", worker.Add(1))
		for i := 0; pb.Next(); i++ {
			if _, err := g.Execute(ctx, gateway.Call{Principal: benchPrincipal, SessionID: session, Step: i, Tool: "bench/noop", Arguments: args}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkExecuteUnknownTool is a call of a tool the registry does not
// hold: by ID, for which the gateway looks up the call's record (a re-send
// of a call whose tool has gone gets its outcome), and by bare name, which
// no record is keyed by.
func BenchmarkExecuteUnknownTool(b *testing.B) {
	for _, tool := range []string{"bench/gone", "gone"} {
		b.Run(tool, func(b *testing.B) {
			g := noopGateway(b)
			ctx := context.Background()
			call := gateway.Call{Principal: benchPrincipal, SessionID: "bench", Step: 1, Tool: tool, Arguments: json.RawMessage(okArgs)}
			measure(b, func(int) {
				if _, err := g.Execute(ctx, call); err == nil {
					b.Fatal("Execute of an unknown tool succeeded")
				}
			})
		})
	}
}
