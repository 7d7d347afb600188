package storetest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/metricstest"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// Server is the server behind a store, which an outage test kills and
// starts again (internal/testservices.Server is one).
type Server interface {
	// Stop kills the server: no shutdown, no flush.
	Stop() error
	// Start starts it again on its data and waits until it accepts
	// connections.
	Start() error
}

// Private opens a store on a server of the test's own, on durable
// storage, and returns both; the outage tests kill and restart the server.
// The store is closed when the test ends.
type Private func(t *testing.T) (store.Store, Server)

// runCounter counts a tool's executions per idempotency key.
type runCounter struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *runCounter) add(ctx context.Context) (key string, n int) {
	key, _ = tools.IdempotencyKey(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = map[string]int{}
	}
	c.runs[key]++
	return key, c.runs[key]
}

// doubles returns the executions beyond the first, over all keys, and the
// executions in all.
func (c *runCounter) doubles() (doubles, all int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.runs {
		all += n
		doubles += n - 1
	}
	return doubles, all
}

// payRegistry is a registry of one tool, bank/pay {"n": integer}, which
// any principal may call, run by h.
func payRegistry(t *testing.T, h tools.Handler) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	if err := reg.Add(tools.Tool{ID: "bank/pay", Card: tools.Card{Name: "pay"}, Handler: h,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`)}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// settle sends call through g until it gets a definitive answer, as a
// client does: every refusal on the way must be retryable, and a
// retry-after hint is honoured (capped at maxWait, so the test stays
// short). It returns the result, or the final error.
func settle(ctx context.Context, g *gateway.Gateway, call gateway.Call, maxWait time.Duration, refusals *atomic.Int64) (*gateway.Result, error) {
	for {
		res, err := g.Execute(ctx, call)
		var ge *gateway.Error
		if err == nil || !errors.As(err, &ge) || !ge.RetrySame() {
			return res, err
		}
		if refusals != nil {
			refusals.Add(1)
		}
		wait := min(max(ge.RetryAfter, 5*time.Millisecond), maxWait)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no definitive answer before the deadline (last: %w)", err)
		case <-time.After(wait): // a client's back-off, not a wait for the test
		}
	}
}

// waitRecorded polls the store until the record of key is done, or ctx
// ends: the gateway records a held outcome in the background once the
// store is back.
func waitRecorded(ctx context.Context, st store.RecordStore, key string) (store.Record, error) {
	for {
		r, err := st.Get(ctx, key)
		if err == nil && r.State == store.StateDone {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("record %.12s… not done before the deadline: %+v, %v", key, r, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// RunRecordOutage checks security invariant 9 (docs/design.md) on a real
// store: open gives a store st of a server srv of the test's own. A slow tool is running
// when srv is killed, so the gateway cannot record the outcome:
//
//   - the caller gets the tool's result, not "nothing was acknowledged,
//     retry";
//   - a re-send of the same call while the store is down gets the held
//     outcome (cached), and the tool does not run;
//   - once srv is back and the claim's lease has expired (the gateway's
//     clock moves past it), a re-send still gets that outcome, never a new
//     execution, and the outcome is recorded in the store.
//
// The tool runs once in all.
func RunRecordOutage(t *testing.T, open Private) {
	t.Helper()
	st, srv := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clock := newManualClock(t0)
	var runs runCounter
	started, release := make(chan struct{}), make(chan struct{})
	reg := payRegistry(t, func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-release
		_, n := runs.add(ctx)
		return json.RawMessage(fmt.Sprintf(`{"run":%d}`, n)), nil
	})
	g, err := gateway.New(reg, st, &gateway.Options{Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		DefaultTimeout: 10 * time.Second, LeaseGrace: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeGateway(t, g) })
	call := gateway.Call{Principal: tools.Principal{ID: "alice", Tenant: "acme"}, SessionID: "outage", Step: 1,
		Tool: "bank/pay", Arguments: json.RawMessage(`{"n":1}`)}
	type answer struct {
		res *gateway.Result
		err error
	}
	first := make(chan answer, 1)
	go func() {
		res, err := g.Execute(ctx, call)
		first <- answer{res, err}
	}()
	<-started
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	close(release)
	a := <-first
	if a.err != nil {
		t.Fatalf("the call whose tool ran while the store died = %v; want the tool's result (it ran: the gateway owns its outcome)", a.err)
	}
	if string(a.res.Value) != `{"run":1}` || a.res.Cached {
		t.Errorf("the call = %s cached=%v, want {\"run\":1} uncached", a.res.Value, a.res.Cached)
	}
	if n := g.HeldOutcomes(); n != 1 {
		t.Errorf("the gateway holds %d outcomes after the store refused the record, want 1 (did Stop stop the store?)", n)
	}

	// The store is still down: a re-send gets the held outcome.
	res, err := g.Execute(ctx, call)
	if err != nil {
		t.Errorf("re-send while the store is down = %v; want the held outcome", err)
	} else if string(res.Value) != `{"run":1}` || !res.Cached || res.IdempotencyKey != a.res.IdempotencyKey {
		t.Errorf("re-send while the store is down = %s cached=%v key %.12s; want {\"run\":1} cached with key %.12s",
			res.Value, res.Cached, res.IdempotencyKey, a.res.IdempotencyKey)
	}

	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	// The claim's lease has run out: a store that still says in progress
	// would let a re-send take the slot over and run the tool again.
	clock.set(t0.Add(time.Minute))
	res, err = settle(ctx, g, call, 50*time.Millisecond, nil)
	if err != nil {
		t.Fatalf("re-send after the restart, past the lease = %v; want the outcome", err)
	}
	if string(res.Value) != `{"run":1}` || !res.Cached {
		t.Errorf("re-send after the restart = %s cached=%v; want {\"run\":1} cached", res.Value, res.Cached)
	}
	r, err := waitRecorded(ctx, st, a.res.IdempotencyKey)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Value) != `{"run":1}` || r.Attempts != 1 {
		t.Errorf("stored record = value %s attempts %d; want {\"run\":1}, 1 attempt", r.Value, r.Attempts)
	}
	if d, all := runs.doubles(); all != 1 || d != 0 {
		t.Errorf("the tool ran %d times, want once", all)
	}
}

// OutageLoad configures [RunOutageLoad]. Zero fields mean 1,500 calls, 32
// workers and 3 restarts.
type OutageLoad struct {
	Calls, Workers, Restarts int
}

// OutageStats is what [RunOutageLoad] measured.
type OutageStats struct {
	// Calls is the calls sent (each to a definitive answer); Restarts the
	// store's kills and restarts during them.
	Calls, Restarts int
	// Executions counts the tool's runs; DoubleExecutions the runs beyond
	// the first of one idempotency key (the invariant: 0).
	Executions, DoubleExecutions int
	// Refusals counts the retryable refusals the callers got on the way.
	Refusals int64
	// Held counts the outcomes the store failed to record, which the
	// gateway held and recorded later (toolgate_gateway_held_outcomes_ended_total).
	Held int
}

func (s OutageStats) String() string {
	return fmt.Sprintf("%d calls, %d store restarts, %d executions, %d double executions, %d outcomes held and recorded later, %d retryable refusals on the way",
		s.Calls, s.Restarts, s.Executions, s.DoubleExecutions, s.Held, s.Refusals)
}

// RunOutageLoad sends load.Calls distinct calls from load.Workers
// concurrent clients through one gateway over st, a store open gives of a
// server srv of the test's own, while srv is killed and restarted load.Restarts times;
// each client re-sends its call until it gets a definitive answer, as the
// HTTP contract tells it to. The tool takes a millisecond, so kills land
// while tools run; the claims' lease (1.5 s of real time) runs out while
// the store is down or soon after. It fails the test unless every call
// has one answer, from one execution, recorded in the store; and logs
// the figures ([OutageStats]). It is skipped with -short.
func RunOutageLoad(t *testing.T, open Private, load OutageLoad) {
	t.Helper()
	if testing.Short() {
		t.Skip("kills and restarts the store's server under load")
	}
	st, srv := open(t)
	load.Calls, load.Workers, load.Restarts = cmp.Or(load.Calls, 1500), cmp.Or(load.Workers, 32), cmp.Or(load.Restarts, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var runs runCounter
	reg := payRegistry(t, func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		time.Sleep(time.Millisecond) // the tool's work
		key, n := runs.add(ctx)
		return json.RawMessage(fmt.Sprintf(`{"key":%q,"run":%d}`, key, n)), nil
	})
	prom := prometheus.NewRegistry()
	g, err := gateway.New(reg, st, &gateway.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: prom,
		DefaultTimeout: time.Second, LeaseGrace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeGateway(t, g) })
	p := tools.Principal{ID: "alice", Tenant: "acme"}
	answers := make([]*gateway.Result, load.Calls)
	var next, acked, refusals atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range load.Workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= load.Calls {
					return
				}
				call := gateway.Call{Principal: p, SessionID: "load", Step: i, Tool: "bank/pay", Arguments: json.RawMessage(`{"n":1}`)}
				res, err := settle(ctx, g, call, 100*time.Millisecond, &refusals)
				if err != nil {
					t.Errorf("call %d: %v", i, err)
					continue
				}
				answers[i] = res
				acked.Add(1)
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	restarts := 0
	for k := range load.Restarts {
		// Kill the store once a share of the calls is answered; start it
		// again once the callers have been refused while it was down.
		if !until(ctx, done, func() bool { return acked.Load() >= int64((k+1)*load.Calls/(load.Restarts+1)) }) {
			break
		}
		if err := srv.Stop(); err != nil {
			t.Fatal(err)
		}
		atKill := refusals.Load()
		until(ctx, done, func() bool { return refusals.Load()-atKill >= int64(load.Workers) })
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		restarts++
	}
	<-done
	doubles, all := runs.doubles()
	stats := OutageStats{Calls: load.Calls, Restarts: restarts, Executions: all, DoubleExecutions: doubles, Refusals: refusals.Load()}
	if restarts != load.Restarts {
		t.Errorf("the store was restarted %d times, want %d (the load ended first)", restarts, load.Restarts)
	}
	for i, res := range answers {
		if res == nil {
			continue // reported
		}
		var v struct {
			Key string `json:"key"`
			Run int    `json:"run"`
		}
		if err := json.Unmarshal(res.Value, &v); err != nil || v.Key != res.IdempotencyKey || v.Run != 1 {
			t.Errorf("call %d answered %s (key %.12s); want the first run of its key", i, res.Value, res.IdempotencyKey)
			continue
		}
		r, err := waitRecorded(ctx, st, res.IdempotencyKey)
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		} else if string(r.Value) != string(res.Value) {
			t.Errorf("call %d: stored %s, answered %s", i, r.Value, res.Value)
		}
	}
	closeGateway(t, g)
	stats.Held = int(metricstest.Sum(t, prom, "toolgate_gateway_held_outcomes_ended_total"))
	if doubles != 0 {
		t.Errorf("%d of %d executions ran a call a second time (%s)", doubles, all, stats)
	}
	t.Log(stats)
}

// until polls cond until it holds (true), or done closes or ctx ends
// (false).
func until(ctx context.Context, done <-chan struct{}, cond func() bool) bool {
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-done:
			return cond()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return true
}

// closeGateway closes g, giving what it holds a while to be recorded.
func closeGateway(t *testing.T, g *gateway.Gateway) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}
