package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/cputime"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// Handles opens n handles to one shared store: for SQLite, n opens of one
// file; for Redis or PostgreSQL, n clients of one server and key space.
// Each handle stands for a process of its own. Handles are closed by the
// function's own t.Cleanup.
type Handles func(tb testing.TB, n int) []store.Store

// RunGateways is the kit's end-to-end check through Gateway.Execute: n
// gateways, each over its own handle to one store, receive 64 concurrent
// copies of one call. The handler must run once, every caller must end
// with its result (after IN_PROGRESS refusals, retried), and the callers
// must have overlapped.
func RunGateways(t *testing.T, open Handles, n int) {
	t.Helper()
	ctx := context.Background()
	var runs atomic.Int32
	release := make(chan struct{})
	reg := tools.NewRegistry()
	if err := reg.Add(tools.Tool{ID: "bank/pay", Card: tools.Card{Name: "pay", Scopes: []string{"payments:write"}},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
		Handler: func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			run := runs.Add(1)
			<-release
			key, _ := tools.IdempotencyKey(ctx)
			return json.RawMessage(fmt.Sprintf(`{"run":%d,"key":%q}`, run, key)), nil
		}}); err != nil {
		t.Fatal(err)
	}
	gws := newGateways(t, reg, open(t, n))
	call := gateway.Call{Principal: tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"payments:write"}},
		SessionID: "s", Step: 7, Tool: "bank/pay", Arguments: json.RawMessage(`{"n":1}`)}
	results := make([]string, 64)
	var inProgress atomic.Int32
	var once sync.Once
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			for {
				res, err := gws[i%len(gws)].Execute(ctx, call)
				var ge *gateway.Error
				if errors.As(err, &ge) && ge.Type == gateway.InProgress {
					// Another caller holds the claim: let the handler finish, then
					// retry as a client does after the hint, capped so the test
					// stays short. (Retrying at once made 64 goroutines spin on
					// the store, which under -race on a loaded machine once
					// failed the test.)
					inProgress.Add(1)
					once.Do(func() { close(release) })
					time.Sleep(min(ge.RetryAfter, 2*time.Millisecond))
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				results[i] = string(res.Value)
				return
			}
		})
	}
	wg.Wait()
	if runs.Load() != 1 {
		t.Errorf("handler ran %d times over %d gateways, want 1", runs.Load(), len(gws))
	}
	for i, r := range results {
		if r != results[0] || r == "" {
			t.Errorf("caller %d got %s, caller 0 got %s; want one result for all", i, r, results[0])
		}
	}
	if inProgress.Load() == 0 {
		t.Error("no caller saw IN_PROGRESS; the callers did not overlap")
	}
}

// BenchmarkScaleOut runs BenchmarkExecute with 32 callers through one
// gateway and through three (sub-benchmarks gateways=1 and gateways=3):
// what a store shared by several processes gains, or loses, from more of
// them.
func BenchmarkScaleOut(b *testing.B, open Handles) {
	for _, gateways := range []int{1, 3} {
		b.Run(fmt.Sprintf("gateways=%d", gateways), func(b *testing.B) {
			BenchmarkExecute(b, open, gateways, 32)
		})
	}
}

// BenchmarkExecute measures Gateway.Execute with callers concurrent
// goroutines making fresh calls of a no-op tool (one claim, one
// completion, one audit append per call) over gateways gateways, each on
// its own handle to one store. It reports calls/s, the p50 and p99, and
// the process's CPU time per call.
func BenchmarkExecute(b *testing.B, open Handles, gateways, callers int) {
	ctx := context.Background()
	reg := tools.NewRegistry()
	if err := reg.Add(tools.Tool{ID: "bench/noop", Card: tools.Card{Name: "noop", Scopes: []string{"bench:run"}},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"ok":true}`), nil
		}}); err != nil {
		b.Fatal(err)
	}
	gws := newGateways(b, reg, open(b, gateways))
	p := tools.Principal{ID: "bench", Tenant: "acme", Scopes: []string{"bench:run"}}
	var next atomic.Int64
	lat := make([][]time.Duration, callers)
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := cputime.Process()
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
	cpu := cputime.Process() - cpu0
	b.StopTimer()
	// CPU time per call (the whole process: gateways, store client, and the
	// store itself when it is in process) does not depend on what else the
	// machine runs, unlike calls/s.
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/call")
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	}
}

func newGateways(tb testing.TB, reg *tools.Registry, stores []store.Store) []*gateway.Gateway {
	tb.Helper()
	var gws []*gateway.Gateway
	for _, st := range stores {
		g, err := gateway.New(reg, st, &gateway.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			tb.Fatal(err)
		}
		gws = append(gws, g)
	}
	return gws
}

// OpenN opens n handles with open, failing tb on the first error, and
// closes each (when it has a Close method) when tb ends: the body of most
// Handles functions.
func OpenN(tb testing.TB, n int, open func() (store.Store, error)) []store.Store {
	tb.Helper()
	out := make([]store.Store, 0, n)
	for range n {
		st, err := open()
		if err != nil {
			tb.Fatal(err)
		}
		if c, ok := st.(interface{ Close() error }); ok {
			tb.Cleanup(func() { c.Close() })
		}
		out = append(out, st)
	}
	return out
}
