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

// RunApprovalLifecycle checks, through two gateways over two handles to
// one store (two processes), what a production day does to an approval
// (docs/design.md invariant 6): one requested and never answered, then
// granted after it expired; one granted and then re-sent twice at once;
// one granted for some arguments and re-sent with others; one whose
// grant was refused. The irreversible tool bank/refund must run once for
// each approved call and never for the others. Time follows a manual
// clock: ApprovalTTL is 10 minutes.
func RunApprovalLifecycle(t *testing.T, open Handles) {
	t.Helper()
	alice := tools.Principal{ID: "alice", Tenant: "acme"}
	bob := tools.Principal{ID: "bob", Tenant: "acme", Scopes: []string{gateway.ApprovalScope}}
	const ttl = 10 * time.Minute

	setup := func(t *testing.T) *approvalSetting {
		s := &approvalSetting{clock: newManualClock(t0), started: make(chan struct{}, 4), release: make(chan struct{})}
		close(s.release)
		reg := tools.NewRegistry()
		if err := reg.Add(tools.Tool{ID: "bank/refund", Card: tools.Card{Name: "refund", Irreversible: true},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"tx":{"type":"string"}},"additionalProperties":false}`),
			Handler: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				s.runs.Add(1)
				s.started <- struct{}{}
				<-s.release
				return args, nil
			}}); err != nil {
			t.Fatal(err)
		}
		for i, st := range open(t, 2) {
			g, err := gateway.New(reg, st, &gateway.Options{Clock: s.clock, ApprovalTTL: ttl,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			s.gws[i] = g
		}
		return s
	}
	call := func(step int, args string) gateway.Call {
		return gateway.Call{Principal: alice, SessionID: "approvals", Step: step, Tool: "bank/refund", Arguments: json.RawMessage(args)}
	}
	// held wants call refused as CONFIRMATION_REQUIRED and returns its approval ID.
	held := func(t *testing.T, g *gateway.Gateway, c gateway.Call, what string) string {
		t.Helper()
		_, err := g.Execute(context.Background(), c)
		var ge *gateway.Error
		if !errors.As(err, &ge) || ge.Type != gateway.ConfirmationRequired || ge.ApprovalID == "" {
			t.Fatalf("%s = %v, want CONFIRMATION_REQUIRED with an approval ID", what, err)
		}
		return ge.ApprovalID
	}
	refusedAs := func(t *testing.T, err error, want gateway.ErrorType, what string) {
		t.Helper()
		var ge *gateway.Error
		if !errors.As(err, &ge) || ge.Type != want {
			t.Fatalf("%s = %v, want %s", what, err, want)
		}
	}
	ctx := context.Background()

	t.Run("never answered, then granted late", func(t *testing.T) {
		s := setup(t)
		c := call(1, `{"tx":"tx-1"}`)
		id := held(t, s.gws[0], c, "the refund")
		s.clock.set(t0.Add(ttl))
		_, err := s.gws[1].Approve(ctx, bob, id)
		refusedAs(t, err, gateway.ValidationError, "granting the approval once it expired")
		again := held(t, s.gws[1], c, "the refund sent again after its approval expired")
		s.wantRuns(t, 0, "on an expired approval")
		// The call sent again asked afresh (the ID is the key's); that
		// one can be granted, and lets the call run once.
		if _, err := s.gws[0].Approve(ctx, bob, again); err != nil {
			t.Fatalf("granting the renewed approval %s: %v", again, err)
		}
		for i, g := range s.gws {
			res, err := g.Execute(ctx, c)
			if err != nil || res.Cached != (i == 1) {
				t.Fatalf("the approved refund through gateway %d = %+v, %v; want it run, then replayed", i, res, err)
			}
		}
		s.wantRuns(t, 1, "in all")
	})

	t.Run("granted, then sent twice at once", func(t *testing.T) {
		s := setup(t)
		s.release = make(chan struct{})
		c := call(2, `{"tx":"tx-2"}`)
		id := held(t, s.gws[0], c, "the refund")
		if _, err := s.gws[1].Approve(ctx, bob, id); err != nil {
			t.Fatal(err)
		}
		first := make(chan error, 1)
		go func() {
			_, err := s.gws[0].Execute(ctx, c)
			first <- err
		}()
		<-s.started
		// The same approved call, re-sent to the other process while the
		// first runs, does not run it again.
		_, err := s.gws[1].Execute(ctx, c)
		refusedAs(t, err, gateway.InProgress, "the approved refund sent again while it runs")
		close(s.release)
		if err := <-first; err != nil {
			t.Fatalf("the approved refund: %v", err)
		}
		if res, err := s.gws[1].Execute(ctx, c); err != nil || !res.Cached {
			t.Errorf("the approved refund sent again after it ran = %+v, %v; want the replay", res, err)
		}
		s.wantRuns(t, 1, "in all")
	})

	t.Run("granted for other arguments", func(t *testing.T) {
		s := setup(t)
		c := call(3, `{"tx":"tx-3"}`)
		id := held(t, s.gws[0], c, "the refund")
		if _, err := s.gws[1].Approve(ctx, bob, id); err != nil {
			t.Fatal(err)
		}
		other := call(3, `{"tx":"tx-999"}`)
		if oid := held(t, s.gws[1], other, "the same step with other arguments"); oid == id {
			t.Errorf("other arguments got the granted approval %s", id)
		}
		s.wantRuns(t, 0, "for arguments no one approved")
		if _, err := s.gws[0].Execute(ctx, c); err != nil {
			t.Fatalf("the approved refund: %v", err)
		}
		_, err := s.gws[1].Execute(ctx, other)
		refusedAs(t, err, gateway.IdempotencyMismatch, "the other arguments once the step ran")
		s.wantRuns(t, 1, "in all")
	})

	t.Run("grant refused, then sent again", func(t *testing.T) {
		s := setup(t)
		c := call(4, `{"tx":"tx-4"}`)
		id := held(t, s.gws[0], c, "the refund")
		self := alice
		self.Scopes = []string{gateway.ApprovalScope}
		_, err := s.gws[1].Approve(ctx, self, id)
		refusedAs(t, err, gateway.PermissionDenied, "the requester granting its own call")
		_, err = s.gws[1].Approve(ctx, tools.Principal{ID: "carol", Tenant: "acme"}, id)
		refusedAs(t, err, gateway.PermissionDenied, "a principal without the scope granting it")
		for i, g := range s.gws {
			if again := held(t, g, c, "the refund sent again"); again != id {
				t.Errorf("the refund sent again to gateway %d asks approval %s, want %s", i, again, id)
			}
		}
		s.wantRuns(t, 0, "without a grant")
	})
}

// approvalSetting is one case of [RunApprovalLifecycle]: two gateways over
// two handles to one store, their clock, and the irreversible tool's runs.
type approvalSetting struct {
	gws     [2]*gateway.Gateway
	clock   *manualClock
	runs    atomic.Int32
	started chan struct{} // receives when the handler starts
	release chan struct{} // closed lets the handler return
}

// wantRuns fails t unless the tool has run n times (when says at what point).
func (s *approvalSetting) wantRuns(t *testing.T, n int32, when string) {
	t.Helper()
	if got := s.runs.Load(); got != n {
		t.Fatalf("the refund ran %d times %s, want %d", got, when, n)
	}
}

// BenchmarkScaleOut runs [BenchmarkExecute] with 32 callers through one
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
