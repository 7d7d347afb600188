package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/metricstest"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// downRecords is the memstore's records with the record step failing
// while down is set, as a store that died after the claim: Complete,
// MarkUncertain and Release fail; claims and reads still work. The proof
// on real, killed stores is storetest.RunRecordOutage.
type downRecords struct {
	store.RecordStore
	down atomic.Bool
}

var errDown = errors.New("store down: connection refused")

func (s *downRecords) Complete(ctx context.Context, c store.Completion) error {
	if s.down.Load() {
		return errDown
	}
	return s.RecordStore.Complete(ctx, c)
}

func (s *downRecords) MarkUncertain(ctx context.Context, slot store.Slot, token uint64, reason string, now, expiresAt time.Time) error {
	if s.down.Load() {
		return errDown
	}
	return s.RecordStore.MarkUncertain(ctx, slot, token, reason, now, expiresAt)
}

func (s *downRecords) Release(ctx context.Context, slot store.Slot, token uint64, now time.Time) error {
	if s.down.Load() {
		return errDown
	}
	return s.RecordStore.Release(ctx, slot, token, now)
}

// newDownEnv is newEnv with the records behind downRecords, down.
func newDownEnv(t *testing.T, opt func(*gateway.Options)) (*env, *downRecords) {
	t.Helper()
	recs := &downRecords{}
	recs.down.Store(true)
	e := newEnv(t, func(o *gateway.Options) {
		if opt != nil {
			opt(o)
		}
		o.Stores.Records = recs
	})
	recs.RecordStore = e.Store
	return e, recs
}

// storeBack brings the records back and closes the gateway, waiting for
// its held outcomes to be recorded.
func storeBack(t *testing.T, g *gateway.Gateway, recs *downRecords) {
	t.Helper()
	recs.down.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// Invariant 9: once the handler returned, a store failure while recording
// never turns into "nothing happened, retry". The caller gets the result,
// a re-send gets it too (even after the lease), the handler runs once, and
// the outcome is recorded once the store is back.
func TestHeldOutcomeAnsweredAndRecorded(t *testing.T) {
	e, recs := newDownEnv(t, nil)
	call := transferCall(alice, "s1", 1, okArgs)
	res, err := e.Gateway.Execute(ctx, call)
	if err != nil {
		t.Fatalf("Execute with the record step failing = %v; want the handler's result (it ran)", err)
	}
	if res.Cached || res.Attempts != 1 || res.PreviousUncertain {
		t.Errorf("result = cached %v, attempts %d, previous uncertain %v; want a first, uncached execution", res.Cached, res.Attempts, res.PreviousUncertain)
	}
	if n := e.Gateway.HeldOutcomes(); n != 1 {
		t.Errorf("HeldOutcomes() = %d, want 1", n)
	}
	if got := metricstest.Count(t, e.Prom, "toolgate_gateway_held_outcomes"); got != 1 {
		t.Errorf("toolgate_gateway_held_outcomes = %v, want 1", got)
	}
	// Past the claim's lease a store-side retry would take the slot over
	// and run the handler again; the held outcome answers first.
	e.Clock.Advance(2 * time.Hour)
	again, err := e.Gateway.Execute(ctx, call)
	if err != nil {
		t.Fatalf("re-send while held = %v; want the held outcome", err)
	}
	if string(again.Value) != string(res.Value) || !again.Cached || again.IdempotencyKey != res.IdempotencyKey {
		t.Errorf("re-send while held = %s cached=%v; want %s cached", again.Value, again.Cached, res.Value)
	}
	storeBack(t, e.Gateway, recs)
	rec, err := e.Store.Get(ctx, res.IdempotencyKey)
	if err != nil || rec.State != store.StateDone || string(rec.Value) != string(res.Value) {
		t.Errorf("record after the store came back = %+v, %v; want done with the result", rec, err)
	}
	replay, err := e.Gateway.Execute(ctx, call)
	if err != nil || !replay.Cached || string(replay.Value) != string(res.Value) {
		t.Errorf("replay after Close = %+v, %v; want the recorded result", replay, err)
	}
	if n := e.Runs.Total(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
	if n := e.Gateway.HeldOutcomes(); n != 0 {
		t.Errorf("HeldOutcomes() after recording = %d, want 0", n)
	}
	if got := metricstest.Count(t, e.Prom, "toolgate_gateway_held_outcomes_ended_total", "end", "recorded"); got != 1 {
		t.Errorf("held outcomes ended recorded = %v, want 1", got)
	}
}

// hungRecords is the memstore's records with Complete waiting until
// release is closed, as a store whose write hangs (a server restarting,
// a client retrying) past the claim's lease.
// Only the first Complete hangs.
type hungRecords struct {
	store.RecordStore
	entered chan struct{}
	release chan struct{}
	calls   atomic.Int32
}

func (s *hungRecords) Complete(ctx context.Context, c store.Completion) error {
	if s.calls.Add(1) == 1 {
		close(s.entered)
		<-s.release
	}
	return s.RecordStore.Complete(ctx, c)
}

// While the gateway is still recording a call's outcome (the store's
// write hangs) and the claim's lease has expired in the store, a re-send
// to that gateway is told to wait: the store alone would let it take the
// slot over and run the handler a second time. The outage tests'
// double executions under load came from this window.
func TestRecordingPastTheLeaseRunsOnce(t *testing.T) {
	recs := &hungRecords{entered: make(chan struct{}), release: make(chan struct{})}
	e := newEnv(t, func(o *gateway.Options) { o.Stores.Records = recs })
	recs.RecordStore = e.Store
	call := transferCall(alice, "s1", 1, okArgs)
	first := make(chan error, 1)
	var res *gateway.Result
	go func() {
		r, err := e.Gateway.Execute(ctx, call)
		res = r
		first <- err
	}()
	<-recs.entered // the handler ran; its Complete hangs
	e.Clock.Advance(2 * time.Hour)
	_, err := e.Gateway.Execute(ctx, call)
	if ge := wantType(t, "re-send while the outcome is being recorded past the lease", err, gateway.InProgress); !ge.Retryable {
		t.Errorf("IN_PROGRESS = %+v; want retryable", ge)
	}
	other := transferCall(alice, "s1", 1, `{"source_account":"ACC-00001","target_account":"ACC-00009","amount":1}`)
	_, err = e.Gateway.Execute(ctx, other)
	wantType(t, "other arguments in the running slot", err, gateway.IdempotencyMismatch)
	close(recs.release)
	if err := <-first; err != nil {
		t.Fatalf("first call = %v", err)
	}
	again, err := e.Gateway.Execute(ctx, call)
	if err != nil || !again.Cached || string(again.Value) != string(res.Value) {
		t.Errorf("re-send once recorded = %+v, %v; want the recorded result", again, err)
	}
	if n := e.Runs.Total(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
}

// An uncertain outcome (or a no-effect one) the store cannot record is
// held too: re-sends get IN_PROGRESS, never a re-run, until it is
// recorded; then the uncertain policy applies.
func TestHeldUncertainOutcome(t *testing.T) {
	e, recs := newDownEnv(t, nil)
	e.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		e.Runs.Add(ctx, args)
		return nil, errors.New("connection reset after the request was sent")
	})
	call := transferCall(alice, "s1", 1, okArgs)
	ge := wantType(t, "uncertain outcome, mark failing", second(e.Gateway.Execute(ctx, call)), gateway.DownstreamFailure)
	if !ge.Retryable || strings.Contains(ge.Message, "nothing was acknowledged") {
		t.Errorf("answer = %+v; want the retryable uncertain answer, not \"nothing was acknowledged\"", ge)
	}
	e.Clock.Advance(2 * time.Hour)
	wantType(t, "re-send while the uncertain outcome is held", second(e.Gateway.Execute(ctx, call)), gateway.InProgress)
	if n := e.Runs.Total(); n != 1 {
		t.Errorf("handler ran %d times while held, want 1", n)
	}
	storeBack(t, e.Gateway, recs)
	rec, err := e.Store.Get(ctx, ge.IdempotencyKey)
	if err != nil || rec.State != store.StateUncertain {
		t.Errorf("record = %+v, %v; want uncertain", rec, err)
	}
}

// The held outcomes are bounded: at the bound a call is refused before its
// handler runs, retryably, and no held outcome is dropped.
func TestHeldOutcomesBounded(t *testing.T) {
	e, recs := newDownEnv(t, func(o *gateway.Options) { o.MaxHeldOutcomes = 1 })
	first := transferCall(alice, "s1", 1, okArgs)
	res, err := e.Gateway.Execute(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	ge := wantType(t, "a call with the gateway at its bound", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 2, okArgs))), gateway.Internal)
	if !ge.Retryable || ge.RetryAfter <= 0 {
		t.Errorf("refusal at the bound = %+v; want retryable with a retry-after hint", ge)
	}
	if n := e.Runs.Total(); n != 1 {
		t.Errorf("handler ran %d times, want 1 (the refused call must not run)", n)
	}
	if got := metricstest.Count(t, e.Prom, "toolgate_gateway_held_refusals_total"); got != 1 {
		t.Errorf("toolgate_gateway_held_refusals_total = %v, want 1", got)
	}
	again, err := e.Gateway.Execute(ctx, first)
	if err != nil || string(again.Value) != string(res.Value) {
		t.Errorf("the held call re-sent = %v, %v; want its held outcome (never dropped)", again, err)
	}
	storeBack(t, e.Gateway, recs)
}

// Other arguments in the slot of a held outcome are a mismatch, even when
// the store lost the claim.
func TestHeldOutcomeBindsTheSlot(t *testing.T) {
	e, recs := newDownEnv(t, nil)
	if _, err := e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, okArgs)); err != nil {
		t.Fatal(err)
	}
	other := `{"source_account":"ACC-00001","target_account":"ACC-00003","amount":5}`
	wantType(t, "other arguments in a held slot", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, other))), gateway.IdempotencyMismatch)
	storeBack(t, e.Gateway, recs)
}

// Close stops the background recording when its context ends and says
// what is left; a closed gateway runs no handler.
func TestCloseLeavesUnrecorded(t *testing.T) {
	e, _ := newDownEnv(t, nil)
	if _, err := e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, okArgs)); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.Gateway.Close(cctx); !errors.Is(err, gateway.ErrUnrecorded) {
		t.Errorf("Close with the store down = %v, want ErrUnrecorded", err)
	}
	ge := wantType(t, "a call after Close", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 2, okArgs))), gateway.Internal)
	if !ge.Retryable {
		t.Errorf("a call after Close = %+v, want retryable", ge)
	}
	if n := e.Runs.Total(); n != 1 {
		t.Errorf("handler ran %d times, want 1 (none after Close)", n)
	}
	if err := e.Gateway.Close(cctx); !errors.Is(err, gateway.ErrUnrecorded) {
		t.Errorf("Close again = %v, want ErrUnrecorded still", err)
	}
	if got := metricstest.Count(t, e.Prom, "toolgate_gateway_held_outcomes_ended_total", "end", "abandoned"); got != 1 {
		t.Errorf("held outcomes abandoned after two Closes = %v, want 1", got)
	}
}

// slowClaims moves the gateway's clock on by delay in every Claim, as a
// store that grants a claim only after a restart, its client's retries or
// a long queue: the lease, counted from admission, is partly spent.
type slowClaims struct {
	store.RecordStore
	clock interface{ Advance(time.Duration) }
	delay time.Duration
}

func (s *slowClaims) Claim(ctx context.Context, req store.ClaimRequest) (store.Claim, error) {
	s.clock.Advance(s.delay)
	return s.RecordStore.Claim(ctx, req)
}

// A handler runs only while its claim's lease covers its whole timeout
// with half the grace to spare: the claim is given back and the caller
// told to retry when the store was slower, since a handler started then
// could complete after the lease, be fenced, and run again for the re-send
// that takes the slot over. The outage tests' double executions under load
// (TestOutageUnderLoad, Redis and PostgreSQL) came from these late claims.
// The grace is a minute and the transfer's timeout an hour.
func TestLateClaimDoesNotRun(t *testing.T) {
	tests := []struct {
		name  string
		delay time.Duration
		runs  int64
	}{
		{"claim within half the grace: runs", 29 * time.Second, 1},
		{"claim past half the grace: given back", 31 * time.Second, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs := &slowClaims{delay: tc.delay}
			e := newEnv(t, func(o *gateway.Options) { o.Stores.Records = recs })
			recs.RecordStore, recs.clock = e.Store, e.Clock
			call := transferCall(alice, "s1", 1, okArgs)
			res, err := e.Gateway.Execute(ctx, call)
			if n := e.Runs.Total(); n != tc.runs {
				t.Fatalf("handler ran %d times, want %d", n, tc.runs)
			}
			if got, want := metricstest.Count(t, e.Prom, "toolgate_gateway_late_claims_total"), float64(1-tc.runs); got != want {
				t.Errorf("toolgate_gateway_late_claims_total = %v, want %v", got, want)
			}
			if tc.runs == 1 {
				if err != nil || res.Cached {
					t.Fatalf("Execute = %+v, %v; want the first run's result", res, err)
				}
				return
			}
			ge := wantType(t, "late claim", err, gateway.Internal)
			if !ge.Retryable || !strings.Contains(ge.Message, "nothing ran") {
				t.Errorf("late claim = %+v; want retryable, nothing ran", ge)
			}
			if _, err := e.Store.Get(ctx, ge.IdempotencyKey); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("record after the late claim: %v; want it released (not found)", err)
			}
			recs.delay = 0
			res, err = e.Gateway.Execute(ctx, call)
			if err != nil || res.Cached || res.Attempts != 1 {
				t.Errorf("re-send with a prompt store = %+v, %v; want a first run, attempt 1", res, err)
			}
			if n := e.Runs.Total(); n != 1 {
				t.Errorf("handler ran %d times after the re-send, want 1", n)
			}
		})
	}
}
