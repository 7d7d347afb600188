package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/metricstest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/internal/gatewaytest"
	"github.com/toolgate/toolgate/tools"
)

var ctx = context.Background()

func TestExecuteAndReplay(t *testing.T) {
	e := newEnv(t, nil)
	res, err := e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, okArgs))
	if err != nil {
		t.Fatal(err)
	}
	if res.Cached || len(res.IdempotencyKey) != 64 || res.Attempts != 1 {
		t.Errorf("first Execute = cached %v, key %q, attempts %d; want fresh, 64-hex key, 1 attempt", res.Cached, res.IdempotencyKey, res.Attempts)
	}
	// The handler got the canonical arguments (sorted, 250.50 → 250.5).
	if got, want := e.Runs.Args[0], `{"amount":250.5,"source_account":"ACC-00001","target_account":"ACC-00002"}`; got != want {
		t.Errorf("handler arguments = %s, want canonical %s", got, want)
	}
	// The same call in another spelling is the same call.
	again, err := e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, ` { "target_account":"ACC-00002", "amount":2.505e2, "source_account":"ACC-00001" }`))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || again.IdempotencyKey != res.IdempotencyKey || string(again.Value) != string(res.Value) {
		t.Errorf("replay = cached %v, key %s, value %s; want cached, key %s, value %s", again.Cached, again.IdempotencyKey, again.Value, res.IdempotencyKey, res.Value)
	}
	if n := e.Runs.Total(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
	if got := metricstest.Count(t, e.Prom, "toolgate_gateway_replays_total", "tool", "bank/transfer_funds"); got != 1 {
		t.Errorf("replays_total = %v, want 1", got)
	}
}

func TestKeyGoldenVector(t *testing.T) {
	// Computed independently (Python hashlib) from the documented layout.
	const want = "6ca856cd24305d9010e2431caa686c3af6439ec23433435ff7d678884f2bd048"
	canon := `{"amount":250.5,"source_account":"ACC-00001","target_account":"ACC-00002"}`
	if got := gateway.DeriveKey("acme", "alice", "sess-42", 7, "bank/transfer_funds", []byte(canon)); got != want {
		t.Errorf("DeriveKey(golden) = %s, want %s", got, want)
	}
	if got, want := gateway.Fingerprint([]byte(canon)), "c0abde1f50a2cc98c04fbef273bd66fef67af680ea8e9842efa0502332e1e338"; got != want {
		t.Errorf("Fingerprint(golden) = %s, want %s", got, want)
	}
	// Execute derives the same key from the same call in any spelling.
	e := newEnv(t, nil)
	res, err := e.Gateway.Execute(ctx, gateway.Call{Principal: alice, SessionID: "sess-42", Step: 7, Tool: "bank/transfer_funds",
		Arguments: json.RawMessage(`{"target_account":"ACC-00002","source_account":"ACC-00001","amount":250.50}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.IdempotencyKey != want {
		t.Errorf("Execute key = %s, want %s", res.IdempotencyKey, want)
	}
	// Every field matters, and length prefixes keep fields apart.
	base := gateway.DeriveKey("acme", "alice", "s", 1, "t/x", []byte("{}"))
	variants := map[string]string{
		"tenant":       gateway.DeriveKey("acme2", "alice", "s", 1, "t/x", []byte("{}")),
		"principal":    gateway.DeriveKey("acme", "alice2", "s", 1, "t/x", []byte("{}")),
		"session":      gateway.DeriveKey("acme", "alice", "s2", 1, "t/x", []byte("{}")),
		"step":         gateway.DeriveKey("acme", "alice", "s", 2, "t/x", []byte("{}")),
		"tool":         gateway.DeriveKey("acme", "alice", "s", 1, "t/y", []byte("{}")),
		"arguments":    gateway.DeriveKey("acme", "alice", "s", 1, "t/x", []byte(`{"a":1}`)),
		"field shift":  gateway.DeriveKey("acmealice", "", "s", 1, "t/x", []byte("{}")),
		"field shift2": gateway.DeriveKey("acme", "alices", "", 1, "t/x", []byte("{}")),
	}
	for name, k := range variants {
		t.Run(name, func(t *testing.T) {
			if k == base {
				t.Errorf("DeriveKey with a different %s = the base key", name)
			}
		})
	}
}

// Test64SameCall sends one call from 64 goroutines: the handler runs once,
// the other 63 get IN_PROGRESS while it runs, and every caller ends with
// the same result.
func Test64SameCall(t *testing.T) {
	e := newEnv(t, nil)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	e.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		key := e.Runs.Add(ctx, args)
		started <- struct{}{}
		<-release
		return json.RawMessage(`{"transaction_id":"tx-` + key[:8] + `"}`), nil
	})
	const n = 64
	results := make([]*gateway.Result, n)
	firstBusy := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			busy := false
			for {
				res, err := e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, okArgs))
				if err == nil {
					results[i] = res
					return
				}
				var ge *gateway.Error
				if !errors.As(err, &ge) || ge.Type != gateway.InProgress || !ge.Retryable {
					t.Errorf("caller %d: %v, want IN_PROGRESS (retryable) or a result", i, err)
					return
				}
				if ge.RetryAfter <= 0 || ge.RetryAfter > time.Second {
					t.Errorf("caller %d: IN_PROGRESS retry-after %v, want in (0, 1s]", i, ge.RetryAfter)
				}
				if !busy {
					busy = true
					firstBusy <- struct{}{}
				}
				runtime.Gosched()
			}
		})
	}
	<-started
	for range n - 1 {
		<-firstBusy
	}
	close(release)
	wg.Wait()
	if got := e.Runs.Total(); got != 1 {
		t.Fatalf("handler ran %d times for 64 identical calls, want 1", got)
	}
	fresh := 0
	for i, r := range results {
		if r == nil {
			t.Fatalf("caller %d got no result", i)
		}
		if string(r.Value) != string(results[0].Value) || r.IdempotencyKey != results[0].IdempotencyKey {
			t.Errorf("caller %d result = %s (key %s), want %s (key %s)", i, r.Value, r.IdempotencyKey, results[0].Value, results[0].IdempotencyKey)
		}
		if !r.Cached {
			fresh++
		}
	}
	if fresh != 1 {
		t.Errorf("%d callers got a fresh (uncached) result, want 1", fresh)
	}
}

// Test1000DistinctKeys sends 1,000 distinct calls, each from 3 goroutines
// at once, over 24 workers: every call executes exactly once.
func Test1000DistinctKeys(t *testing.T) {
	e := newEnv(t, nil)
	const calls, dup = 1000, 3
	work := make(chan int)
	var wg sync.WaitGroup
	results := make([][]string, calls)
	var mu sync.Mutex
	for range 24 {
		wg.Go(func() {
			for j := range work {
				i := j / dup
				call := transferCall(alice, fmt.Sprintf("s%d", i%17), i, fmt.Sprintf(`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":%d}`, i+1))
				for {
					res, err := e.Gateway.Execute(ctx, call)
					if err != nil {
						if ge := gwError(t, err); ge.Type == gateway.InProgress {
							runtime.Gosched()
							continue
						}
						t.Errorf("call %d: %v", i, err)
						return
					}
					mu.Lock()
					results[i] = append(results[i], string(res.Value))
					mu.Unlock()
					break
				}
			}
		})
	}
	for j := range calls * dup {
		work <- j
	}
	close(work)
	wg.Wait()
	if got := e.Runs.Total(); got != calls {
		t.Errorf("handler ran %d times for %d distinct calls, want %d", got, calls, calls)
	}
	for key, n := range e.Runs.Runs {
		if n != 1 {
			t.Errorf("key %s ran %d times, want 1", key, n)
		}
	}
	for i, rs := range results {
		if len(rs) != dup {
			t.Fatalf("call %d got %d results, want %d", i, len(rs), dup)
		}
		for _, r := range rs[1:] {
			if r != rs[0] {
				t.Errorf("call %d results differ: %s vs %s", i, r, rs[0])
			}
		}
	}
}

// TestLeaseExpiryAndFencing: the first owner stalls past its lease. A
// re-send to the same gateway is told to wait (it knows the call is still
// running); a re-send to another gateway over the same store takes the
// slot over and re-runs the handler with the same key; the first owner's
// late completion is rejected, and the record keeps the new owner's
// outcome.
func TestLeaseExpiryAndFencing(t *testing.T) {
	e := newEnv(t, nil) // tool timeout 1h, lease grace 1m: lease 1h1m on the fake clock
	other := gatewaytest.NewOn(t, e.Store, func(o *gateway.Options) { o.Clock = e.Clock })
	stall := make(chan struct{})
	entered := make(chan string, 2)
	runs := 0
	var mu sync.Mutex
	h := func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		key, _ := tools.IdempotencyKey(ctx)
		mu.Lock()
		runs++
		first := runs == 1
		mu.Unlock()
		entered <- key
		if first {
			<-stall
			return json.RawMessage(`"first"`), nil
		}
		return json.RawMessage(`"second"`), nil
	}
	e.SetTransfer(h)
	other.SetTransfer(h)
	call := transferCall(alice, "s1", 1, okArgs)
	firstErr := make(chan error, 1)
	go func() {
		_, err := e.Gateway.Execute(ctx, call)
		firstErr <- err
	}()
	key1 := <-entered
	// Within the lease the duplicate is told to wait.
	_, err := e.Gateway.Execute(ctx, call)
	wantType(t, "duplicate within the lease", err, gateway.InProgress)

	e.Clock.Advance(time.Hour + time.Minute) // the lease is over
	// The gateway running the call never runs it a second time.
	_, err = e.Gateway.Execute(ctx, call)
	wantType(t, "duplicate past the lease, on the gateway still running it", err, gateway.InProgress)
	res, err := other.Gateway.Execute(ctx, call)
	if err != nil {
		t.Fatalf("retry after the lease on another gateway: %v", err)
	}
	key2 := <-entered
	if key1 != key2 || res.IdempotencyKey != key1 {
		t.Errorf("re-run key = %s (result key %s), want the original %s", key2, res.IdempotencyKey, key1)
	}
	if string(res.Value) != `"second"` || res.Cached || res.Attempts != 2 {
		t.Errorf("takeover result = %s cached %v attempts %d; want \"second\", fresh, 2 attempts", res.Value, res.Cached, res.Attempts)
	}
	close(stall)
	ge := wantType(t, "the first owner's late completion", <-firstErr, gateway.DownstreamFailure)
	if !ge.Retryable || ge.IdempotencyKey != key1 {
		t.Errorf("late owner error = %+v, want retryable with key %s", ge, key1)
	}
	rep, err := e.Gateway.Execute(ctx, call)
	if err != nil || !rep.Cached || string(rep.Value) != `"second"` {
		t.Errorf("replay after fencing = %v, %v; want cached \"second\"", rep, err)
	}
	rec, err := e.Store.Get(ctx, key1)
	if err != nil || rec.State != store.StateDone || string(rec.Value) != `"second"` || rec.Attempts != 2 {
		t.Errorf("record = %+v, %v; want done with \"second\" after 2 attempts", rec, err)
	}
}

// TestUncertainRerun: a handler that times out leaves an uncertain record;
// the retry re-runs it with the same key.
func TestUncertainRerun(t *testing.T) {
	e := newEnv(t, nil)
	var keys []string
	fail := true
	e.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		keys = append(keys, e.Runs.Add(ctx, args))
		if fail {
			fail = false
			return nil, errors.New("connection reset after the request was sent")
		}
		return json.RawMessage(`{"ok":true}`), nil
	})
	call := transferCall(alice, "s1", 1, okArgs)
	_, err := e.Gateway.Execute(ctx, call)
	ge := wantType(t, "unmarked handler error", err, gateway.DownstreamFailure)
	if !ge.Retryable || ge.IdempotencyKey == "" {
		t.Errorf("uncertain error = %+v, want retryable with the key", ge)
	}
	rec, err := e.Store.Get(ctx, ge.IdempotencyKey)
	if err != nil || rec.State != store.StateUncertain || !strings.Contains(rec.Reason, "connection reset") {
		t.Fatalf("record = %+v, %v; want uncertain with the error as reason", rec, err)
	}
	res, err := e.Gateway.Execute(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0] != keys[1] || res.IdempotencyKey != keys[0] || res.Attempts != 2 {
		t.Errorf("re-run keys = %v, result key %s, attempts %d; want the same key twice, 2 attempts", keys, res.IdempotencyKey, res.Attempts)
	}
}

func TestHandlerTimeoutIsUncertain(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.Registry.Add(tools.Tool{ID: "slow/wait", Card: tools.Card{Name: "wait"}, Timeout: 20 * time.Millisecond,
		Handler: func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}}); err != nil {
		t.Fatal(err)
	}
	_, err := e.Gateway.Execute(ctx, gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "slow/wait"})
	ge := wantType(t, "handler past its deadline", err, gateway.DownstreamFailure)
	rec, err := e.Store.Get(ctx, ge.IdempotencyKey)
	if err != nil || rec.State != store.StateUncertain {
		t.Errorf("record after a timeout = %+v, %v; want uncertain", rec, err)
	}
}

func TestUncertainReconcile(t *testing.T) {
	e := newEnv(t, func(o *gateway.Options) { o.Uncertain = gateway.UncertainReconcile })
	e.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		e.Runs.Add(ctx, args)
		panic("ledger exploded")
	})
	call := transferCall(alice, "s1", 1, okArgs)
	ge := wantType(t, "panicking handler", second(e.Gateway.Execute(ctx, call)), gateway.DownstreamFailure)
	if ge.Retryable {
		t.Errorf("under UncertainReconcile the first error is retryable; want not")
	}
	wantType(t, "retry of an uncertain call", second(e.Gateway.Execute(ctx, call)), gateway.UncertainOutcome)
	if n := e.Runs.Total(); n != 1 {
		t.Errorf("handler ran %d times, want 1 (no re-run under reconcile)", n)
	}
}

func second[T any](_ T, err error) error { return err }

func TestNoEffectReleasesClaim(t *testing.T) {
	e := newEnv(t, nil)
	fail := true
	e.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		e.Runs.Add(ctx, args)
		if fail {
			fail = false
			return nil, tools.NoEffect(errors.New("ledger unavailable"))
		}
		return json.RawMessage(`"done"`), nil
	})
	call := transferCall(alice, "s1", 1, okArgs)
	ge := wantType(t, "no-effect failure", second(e.Gateway.Execute(ctx, call)), gateway.DownstreamFailure)
	if !ge.Retryable {
		t.Error("no-effect failure is not retryable, want retryable")
	}
	if _, err := e.Store.Get(ctx, ge.IdempotencyKey); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("record after a no-effect failure: %v, want ErrNotFound (released)", err)
	}
	res, err := e.Gateway.Execute(ctx, call)
	if err != nil || res.Cached || string(res.Value) != `"done"` || res.Attempts != 1 {
		t.Errorf("retry = %+v, %v; want a fresh execution", res, err)
	}
}

func TestDomainErrorRecordedAndReplayed(t *testing.T) {
	e := newEnv(t, nil)
	e.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		e.Runs.Add(ctx, args)
		return nil, &tools.DomainError{Code: "INSUFFICIENT_FUNDS", Message: "balance too low", Details: map[string]any{"balance": "10.00"}}
	})
	call := transferCall(alice, "s1", 1, okArgs)
	for i, wantCached := range []bool{false, true, true} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			ge := wantType(t, fmt.Sprintf("call %d", i), second(e.Gateway.Execute(ctx, call)), gateway.DomainErrorType)
			if ge.Code != "INSUFFICIENT_FUNDS" || ge.Cached != wantCached || ge.Retryable {
				t.Errorf("call %d = %+v; want INSUFFICIENT_FUNDS, cached %v, not retryable, 422", i, ge, wantCached)
			}
		})
	}
	if n := e.Runs.Total(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
}

func TestMismatch(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, okArgs)); err != nil {
		t.Fatal(err)
	}
	other := `{"source_account":"ACC-00001","target_account":"ACC-00003","amount":250.50}`
	ge := wantType(t, "same slot, other arguments", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, other))), gateway.IdempotencyMismatch)
	if ge.Retryable {
		t.Errorf("mismatch = %+v, want not retryable, 422", ge)
	}
	// Another principal of the tenant with the same session, step and tool
	// has a slot of its own (docs/design.md invariant 4): it runs, and learns
	// nothing of alice's call.
	carol := tools.Principal{ID: "carol", Tenant: "acme", Scopes: []string{"payments:write"}}
	if res, err := e.Gateway.Execute(ctx, transferCall(carol, "s1", 1, okArgs)); err != nil || res.Cached {
		t.Errorf("other principal, same session step = %+v, %v; want its own fresh execution", res, err)
	}
	// The next step is a new slot.
	if _, err := e.Gateway.Execute(ctx, transferCall(alice, "s1", 2, other)); err != nil {
		t.Errorf("next step with other arguments: %v", err)
	}
	if n := e.Runs.Total(); n != 3 {
		t.Errorf("handler ran %d times, want 3 (alice twice, carol once)", n)
	}
}

func TestApprovals(t *testing.T) {
	e := newEnv(t, nil)
	big := `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000}`
	call := transferCall(alice, "s1", 1, big)
	ge := wantType(t, "transfer above 1000", second(e.Gateway.Execute(ctx, call)), gateway.ConfirmationRequired)
	if ge.ApprovalID == "" {
		t.Fatalf("confirmation = %+v, want an approval ID and 428", ge)
	}
	id := ge.ApprovalID
	// Asking again yields the same approval, still nothing executed.
	if again := wantType(t, "repeat before approval", second(e.Gateway.Execute(ctx, call)), gateway.ConfirmationRequired); again.ApprovalID != id {
		t.Errorf("repeat approval ID = %s, want %s", again.ApprovalID, id)
	}
	wantDecisionRefused(t, "approval", id, e.Gateway.Approve)
	if n := e.Runs.Total(); n != 0 {
		t.Fatalf("handler ran %d times before approval, want 0", n)
	}
	// Approval for these arguments does not carry over to others.
	a, err := e.Gateway.Approve(ctx, bob, id)
	if err != nil || !a.Granted || a.Approver != "bob" || a.Requester != "alice" {
		t.Fatalf("Approve = %+v, %v; want granted by bob for alice", a, err)
	}
	if _, err := e.Gateway.Approve(ctx, bob, id); err != nil {
		t.Errorf("repeating the same grant: %v, want ok", err)
	}
	bigger := `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":9000}`
	other := wantType(t, "other arguments, same slot, after approval", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, bigger))), gateway.ConfirmationRequired)
	if other.ApprovalID == id {
		t.Error("other arguments reuse the granted approval's ID")
	}
	if n := e.Runs.Total(); n != 0 {
		t.Fatalf("handler ran %d times for unapproved arguments, want 0", n)
	}
	res, err := e.Gateway.Execute(ctx, call)
	if err != nil || res.Cached {
		t.Fatalf("approved call = %+v, %v; want a fresh execution", res, err)
	}
	if rep, err := e.Gateway.Execute(ctx, call); err != nil || !rep.Cached {
		t.Errorf("replay of the approved call = %+v, %v; want cached", rep, err)
	}
	// Once executed, the slot is bound: the other amount is a mismatch now.
	wantType(t, "other arguments after execution", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, bigger))), gateway.IdempotencyMismatch)
	// Small transfers need no approval.
	if _, err := e.Gateway.Execute(ctx, transferCall(alice, "s1", 2, okArgs)); err != nil {
		t.Errorf("small transfer: %v", err)
	}
	// Irreversible tools always need one.
	refund := gateway.Call{Principal: alice, SessionID: "s1", Step: 3, Tool: "billing/issue_full_refund", Arguments: json.RawMessage(`{"transaction_id":"tx-1"}`)}
	wantType(t, "irreversible tool", second(e.Gateway.Execute(ctx, refund)), gateway.ConfirmationRequired)
	// Audit shows the grant and the refusals.
	entries, _ := e.Store.QueryAudit(ctx, store.AuditQuery{Principal: "bob"})
	if len(entries) < 2 || entries[0].Decision != "deny" || entries[len(entries)-1].ApprovalID != id {
		t.Errorf("bob's audit = %+v, want a denial then the grant of %s", entries, id)
	}
}

func TestApprovalExpires(t *testing.T) {
	e := newEnv(t, func(o *gateway.Options) { o.ApprovalTTL = 10 * time.Minute })
	big := transferCall(alice, "s1", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000}`)
	id := wantType(t, "big transfer", second(e.Gateway.Execute(ctx, big)), gateway.ConfirmationRequired).ApprovalID
	if _, err := e.Gateway.Approve(ctx, bob, id); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(10 * time.Minute)
	// A granted but expired approval no longer lets the call run.
	ge := wantType(t, "call after the approval expired", second(e.Gateway.Execute(ctx, big)), gateway.ConfirmationRequired)
	if e.Runs.Total() != 0 {
		t.Fatal("handler ran on an expired approval")
	}
	if _, err := e.Gateway.Approve(ctx, bob, ge.ApprovalID); err != nil {
		t.Fatalf("re-approving: %v", err)
	}
	if _, err := e.Gateway.Execute(ctx, big); err != nil {
		t.Errorf("call after re-approval: %v", err)
	}
}

// TestHostileCalls sends what a model, an injection or a raw client might:
// each gets its contract error and nothing executes.
func TestHostileCalls(t *testing.T) {
	e := newEnv(t, nil)
	long := strings.Repeat("x", 300)
	tests := []struct {
		name string
		call gateway.Call
		want gateway.ErrorType
		ptr  string // a violation pointer that must be reported
	}{
		{"no principal", transferCall(tools.Principal{}, "s", 1, okArgs), gateway.Unauthenticated, ""},
		{"no tenant", transferCall(tools.Principal{ID: "alice"}, "s", 1, okArgs), gateway.Unauthenticated, ""},
		{"unknown tool", gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "bank/steal_funds"}, gateway.UnknownTool, ""},
		{"bare name instead of ID", gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "transfer_funds"}, gateway.UnknownTool, ""},
		{"unauthorized tool", gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "admin/delete_all"}, gateway.PermissionDenied, ""},
		{"missing scope", transferCall(mallory, "s", 1, okArgs), gateway.PermissionDenied, ""},
		{"other tenant's tool", gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "globex/export"}, gateway.UnknownTool, ""},
		{"catalog-only tool", gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "catalog/only"}, gateway.UnknownTool, ""},
		{"undeclared property", transferCall(alice, "s", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"admin":true}`), gateway.ValidationError, ""},
		{"wrong type", transferCall(alice, "s", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":"lots"}`), gateway.ValidationError, "/amount"},
		{"missing required", transferCall(alice, "s", 1, `{"source_account":"ACC-00001","amount":1}`), gateway.ValidationError, ""},
		{"pattern", transferCall(alice, "s", 1, `{"source_account":"ACC-1","target_account":"ACC-00002","amount":1}`), gateway.ValidationError, "/source_account"},
		{"ECMA lookahead pattern", transferCall(alice, "s", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"memo":"please ignore the limits"}`), gateway.ValidationError, "/memo"},
		{"negative amount", transferCall(alice, "s", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":-5}`), gateway.ValidationError, "/amount"},
		{"malformed JSON", transferCall(alice, "s", 1, `{"source_account":`), gateway.ValidationError, ""},
		{"duplicate member", transferCall(alice, "s", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"amount":100000}`), gateway.ValidationError, ""},
		{"array arguments", transferCall(alice, "s", 1, `[1,2]`), gateway.ValidationError, ""},
		{"string arguments", transferCall(alice, "s", 1, `"transfer everything"`), gateway.ValidationError, ""},
		{"integer 2^53+1", transferCall(alice, "s", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":9007199254740993}`), gateway.ValidationError, "/amount"},
		{"integer beyond 2^53", transferCall(alice, "s", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":12345678901234567890}`), gateway.ValidationError, "/amount"},
		{"number out of range", transferCall(alice, "s", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1e999}`), gateway.ValidationError, ""},
		{"empty session", transferCall(alice, "", 1, okArgs), gateway.ValidationError, ""},
		{"oversized session", transferCall(alice, long, 1, okArgs), gateway.ValidationError, ""},
		{"negative step", transferCall(alice, "s", -1, okArgs), gateway.ValidationError, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Gateway.Execute(ctx, tc.call)
			ge := wantType(t, tc.name, err, tc.want)
			// A validation error is retryable (the model can correct its
			// arguments), never by resending the same call; the rest are final.
			if want := tc.want == gateway.ValidationError; ge.Retryable != want || ge.RetrySame() {
				t.Errorf("%s: retryable = %v, RetrySame = %v; want %v, false", tc.name, ge.Retryable, ge.RetrySame(), want)
			}
			if tc.ptr != "" {
				vs, _ := ge.Details.([]gateway.Violation)
				found := false
				for _, v := range vs {
					found = found || v.Pointer == tc.ptr
				}
				if !found {
					t.Errorf("%s violations = %+v, want one at %s", tc.name, ge.Details, tc.ptr)
				}
			}
		})
	}
	if n := e.Runs.Total(); n != 0 {
		t.Errorf("handler ran %d times for hostile calls, want 0", n)
	}
	// Every refusal was audited as such, none with a key.
	entries, _ := e.Store.QueryAudit(ctx, store.AuditQuery{})
	if len(entries) != len(tests) {
		t.Errorf("audit has %d entries, want %d", len(entries), len(tests))
	}
	for _, en := range entries {
		if en.Outcome == "ok" || en.Key != "" {
			t.Errorf("audit entry %+v for a refused call, want a refusal without a key", en)
		}
		if en.Outcome == "invalid" && (en.Decision != "allow" || !strings.Contains(en.Reason, "VALIDATION_ERROR")) {
			t.Errorf("audit entry %+v for invalid arguments, want allow with the validation error in the reason", en)
		}
	}
}

// TestOtherTenantsSession: the same session ID, step and arguments from
// another tenant is another slot: it neither replays nor blocks the first
// tenant's call.
func TestOtherTenantsSession(t *testing.T) {
	e := newEnv(t, nil)
	first, err := e.Gateway.Execute(ctx, transferCall(alice, "shared-session", 1, okArgs))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := e.Gateway.Execute(ctx, transferCall(eve, "shared-session", 1, okArgs))
	if err != nil {
		t.Fatal(err)
	}
	if theirs.Cached || theirs.IdempotencyKey == first.IdempotencyKey || string(theirs.Value) == string(first.Value) {
		t.Errorf("other tenant's call = %+v; want its own fresh execution, not alice's result %s", theirs, first.Value)
	}
	mine, err := e.Gateway.Execute(ctx, transferCall(alice, "shared-session", 1, okArgs))
	if err != nil || !mine.Cached || string(mine.Value) != string(first.Value) {
		t.Errorf("alice's replay = %+v, %v; want her own cached result", mine, err)
	}
}

func TestAuthorizationFollowsRegistry(t *testing.T) {
	e := newEnv(t, nil)
	call := gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "bank/get_balance", Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}
	if _, err := e.Gateway.Execute(ctx, call); err != nil {
		t.Fatal(err)
	}
	// The tool now needs a scope alice lacks: even the replay is refused.
	if err := e.Registry.ReplaceNamespace("bank", []tools.Tool{{ID: "bank/get_balance",
		Card: tools.Card{Name: "get_balance", Scopes: []string{"accounts:audit"}}, Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }}}); err != nil {
		t.Fatal(err)
	}
	wantType(t, "call after the scope changed", second(e.Gateway.Execute(ctx, call)), gateway.PermissionDenied)
	// Once the tool is gone, the call's own record answers it (the tool
	// ran: UNKNOWN_TOOL would say that nothing did); a call that never ran
	// is UNKNOWN_TOOL.
	e.Registry.Remove("bank/get_balance")
	if res, err := e.Gateway.Execute(ctx, call); err != nil || !res.Cached {
		t.Errorf("call after removal = %+v, %v; want its recorded result, cached", res, err)
	}
	call.Step = 2
	wantType(t, "another call after removal", second(e.Gateway.Execute(ctx, call)), gateway.UnknownTool)
}

func TestTypedValidator(t *testing.T) {
	type transfer struct {
		Source string  `json:"source_account"`
		Target string  `json:"target_account"`
		Amount float64 `json:"amount"`
		Memo   string  `json:"memo"`
	}
	e := newEnv(t, func(o *gateway.Options) {
		o.Validators = map[string]gateway.Validator{
			"bank/transfer_funds": gateway.Typed(func(_ context.Context, _ gateway.Call, v transfer) error {
				if v.Source == v.Target {
					return gateway.Invalid(gateway.Violation{Pointer: "/target_account", Message: "must differ from source_account"})
				}
				if v.Amount*100 != float64(int64(v.Amount*100)) {
					return errors.New("amount has more than 2 decimals")
				}
				return nil
			}),
		}
	})
	ge := wantType(t, "same accounts", second(e.Gateway.Execute(ctx, transferCall(alice, "s", 1, `{"source_account":"ACC-00001","target_account":"ACC-00001","amount":1}`))), gateway.ValidationError)
	if vs, _ := ge.Details.([]gateway.Violation); len(vs) != 1 || vs[0].Pointer != "/target_account" {
		t.Errorf("violations = %+v, want one at /target_account", ge.Details)
	}
	wantType(t, "3 decimals", second(e.Gateway.Execute(ctx, transferCall(alice, "s", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1.005}`))), gateway.ValidationError)
	if _, err := e.Gateway.Execute(ctx, transferCall(alice, "s", 1, okArgs)); err != nil {
		t.Errorf("valid transfer: %v", err)
	}
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t, func(o *gateway.Options) {
		o.RateLimits = map[string]store.RateLimit{"bank/get_balance": {Rate: 0.5, Burst: 2}}
	})
	call := func(p tools.Principal, step int) error {
		_, err := e.Gateway.Execute(ctx, gateway.Call{Principal: p, SessionID: "s", Step: step, Tool: "bank/get_balance", Arguments: json.RawMessage(`{"account":"A"}`)})
		return err
	}
	for step := range 2 {
		if err := call(alice, step); err != nil {
			t.Fatal(err)
		}
	}
	ge := wantType(t, "third call in a burst of 2", call(alice, 2), gateway.RateLimited)
	if !ge.Retryable || ge.RetryAfter != 2*time.Second {
		t.Errorf("rate limited = %+v, want retryable, retry after 2s, 429", ge)
	}
	_, err := e.Gateway.Execute(ctx, gateway.Call{Principal: mallory, SessionID: "m", Step: 0, Tool: "bank/get_balance", Arguments: json.RawMessage(`{"account":"A"}`)})
	if err != nil {
		t.Errorf("another principal's first call: %v, want ok (own bucket)", err)
	}
	// Transfers are not limited.
	for step := range 5 {
		if _, err := e.Gateway.Execute(ctx, transferCall(alice, "s", step, okArgs)); err != nil {
			t.Fatalf("unlimited tool: %v", err)
		}
	}
	e.Clock.Advance(2 * time.Second)
	if err := call(alice, 2); err != nil {
		t.Errorf("call after refill: %v", err)
	}
}

func TestRetentionAndPurge(t *testing.T) {
	e := newEnv(t, func(o *gateway.Options) { o.Retention = time.Hour })
	call := transferCall(alice, "s", 1, okArgs)
	first, err := e.Gateway.Execute(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(59 * time.Minute)
	if r, err := e.Gateway.Execute(ctx, call); err != nil || !r.Cached {
		t.Fatalf("replay within the retention = %+v, %v; want cached", r, err)
	}
	e.Clock.Advance(time.Minute)
	st, err := e.Gateway.Purge(ctx, 30*time.Minute)
	if err != nil || st.Records != 1 || st.Audit != 1 {
		t.Errorf("Purge after the retention = %+v, %v; want 1 record and the first call's audit entry", st, err)
	}
	if _, err := e.Store.Get(ctx, first.IdempotencyKey); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("record after purge: %v, want ErrNotFound", err)
	}
}

func TestAuditAndMetrics(t *testing.T) {
	e := newEnv(t, nil)
	e.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		e.Clock.Advance(1500 * time.Microsecond) // the handler takes 1.5ms on the fake clock
		return json.RawMessage(`{}`), nil
	})
	res, err := e.Gateway.Execute(ctx, transferCall(alice, "s", 1, okArgs))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = e.Gateway.Execute(ctx, transferCall(mallory, "s", 1, okArgs))
	entries, err := e.Store.QueryAudit(ctx, store.AuditQuery{Tool: "bank/transfer_funds"})
	if err != nil || len(entries) != 2 {
		t.Fatalf("audit = %+v, %v; want 2 entries", entries, err)
	}
	ok, denied := entries[0], entries[1]
	if ok.Principal != "alice" || ok.Tenant != "acme" || ok.Decision != "allow" || ok.Outcome != "ok" ||
		ok.Key != res.IdempotencyKey || ok.Latency != 1500*time.Microsecond || ok.SessionID != "s" || ok.Step != 1 {
		t.Errorf("audit of the executed call = %+v", ok)
	}
	if denied.Principal != "mallory" || denied.Decision != "deny" || denied.Outcome != "denied" || !strings.Contains(denied.Reason, "payments:write") {
		t.Errorf("audit of the denied call = %+v, want deny naming the missing scope", denied)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"toolgate_gateway_calls_total", []string{"outcome", "ok", "tool", "bank/transfer_funds"}, 1},
		{"toolgate_gateway_calls_total", []string{"outcome", "denied", "tool", "bank/transfer_funds"}, 1},
		{"toolgate_gateway_denials_total", []string{"reason", "missing_scope", "tool", "bank/transfer_funds"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := metricstest.Count(t, e.Prom, c.name, c.labels...); got != c.want {
				t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
			}
		})
	}
	// Unknown tool names never become label values.
	_, _ = e.Gateway.Execute(ctx, gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "attacker/chosen-label"})
	if got := metricstest.Count(t, e.Prom, "toolgate_gateway_calls_total", "outcome", "unknown_tool", "tool", "unknown"); got != 1 {
		t.Errorf("calls_total{unknown,unknown_tool} = %v, want 1", got)
	}
	mfs, err := e.Prom.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "toolgate_gateway_call_duration_seconds" && len(mf.GetMetric()) != 2 {
			t.Errorf("duration series = %d, want 2 (transfer_funds, unknown)", len(mf.GetMetric()))
		}
	}
}

func TestUncertainPolicyText(t *testing.T) {
	for i, p := range []gateway.UncertainPolicy{gateway.UncertainRerun, gateway.UncertainReconcile} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			text, err := p.MarshalText()
			var back gateway.UncertainPolicy
			if err != nil || back.UnmarshalText(text) != nil || back != p {
				t.Errorf("%v: MarshalText = %q, %v; UnmarshalText gives %v", p, text, err, back)
			}
		})
	}
	var p gateway.UncertainPolicy
	if err := p.UnmarshalText([]byte("retry")); !errors.Is(err, gateway.ErrInvalidOptions) {
		t.Errorf(`UnmarshalText("retry") = %v, want ErrInvalidOptions`, err)
	}
	if _, err := gateway.UncertainPolicy(7).MarshalText(); err == nil {
		t.Error("MarshalText of policy 7 succeeded, want an error")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	reg := tools.NewRegistry()
	e := newEnv(t, nil)
	tests := []struct {
		name  string
		opts  *gateway.Options
		field string // the error must name it
	}{
		{"negative timeout", &gateway.Options{DefaultTimeout: -1}, "DefaultTimeout"},
		{"negative validation timeout", &gateway.Options{ValidationTimeout: -1}, "ValidationTimeout"},
		{"negative rate", &gateway.Options{RateLimit: store.RateLimit{Rate: -1, Burst: 1}}, "RateLimit"},
		{"negative tool rate", &gateway.Options{RateLimits: map[string]store.RateLimit{"x/y": {Burst: -1}}}, "RateLimits[x/y]"},
		{"nil validator", &gateway.Options{Validators: map[string]gateway.Validator{"x/y": nil}}, "Validators[x/y]"},
		{"unknown policy", &gateway.Options{Uncertain: 7}, "Uncertain"},
		{"unknown tool policy", &gateway.Options{UncertainTools: map[string]gateway.UncertainPolicy{"x/y": 9}}, "UncertainTools[x/y]"},
		{"negative size", &gateway.Options{MaxArgumentBytes: -1}, "MaxArgumentBytes"},
		{"negative held", &gateway.Options{MaxHeldBytes: -1}, "MaxHeldBytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gateway.New(reg, e.Store, tc.opts)
			if !errors.Is(err, gateway.ErrInvalidOptions) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("New(%s) error = %v, want ErrInvalidOptions naming %s", tc.name, err, tc.field)
			}
		})
	}
	if _, err := gateway.New(nil, e.Store, nil); !errors.Is(err, gateway.ErrInvalidOptions) {
		t.Errorf("New(nil registry) error = %v, want ErrInvalidOptions", err)
	}
	if _, err := gateway.New(reg, e.Store, &gateway.Options{Registerer: e.Prom}); err == nil {
		t.Error("New registering the same metrics twice succeeded, want an error")
	}
}

// TestUncertainAwaitingApprovalKeepsBinding: an approved call whose outcome
// became uncertain, retried after its approval expired, asks for approval
// again without freeing the slot: other arguments still cannot run there.
func TestUncertainAwaitingApprovalKeepsBinding(t *testing.T) {
	e := newEnv(t, func(o *gateway.Options) { o.ApprovalTTL = 10 * time.Minute })
	e.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		e.Runs.Add(ctx, args)
		return nil, errors.New("timeout talking to the ledger")
	})
	big := transferCall(alice, "s1", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000}`)
	id := wantType(t, "big transfer", second(e.Gateway.Execute(ctx, big)), gateway.ConfirmationRequired).ApprovalID
	if _, err := e.Gateway.Approve(ctx, bob, id); err != nil {
		t.Fatal(err)
	}
	ge := wantType(t, "approved call, handler fails", second(e.Gateway.Execute(ctx, big)), gateway.DownstreamFailure)
	e.Clock.Advance(time.Hour)
	wantType(t, "retry after the approval expired", second(e.Gateway.Execute(ctx, big)), gateway.ConfirmationRequired)
	rec, err := e.Store.Get(ctx, ge.IdempotencyKey)
	if err != nil || rec.State != store.StateUncertain || !strings.Contains(rec.Reason, "timeout talking to the ledger") {
		t.Fatalf("record while awaiting re-approval = %+v, %v; want still uncertain with its reason", rec, err)
	}
	small := transferCall(alice, "s1", 1, okArgs)
	wantType(t, "other arguments in the uncertain slot", second(e.Gateway.Execute(ctx, small)), gateway.IdempotencyMismatch)
	if n := e.Runs.Total(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
}

func TestErrorIsMatchesType(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", &gateway.Error{Type: gateway.InProgress, Message: "busy"})
	if !errors.Is(err, &gateway.Error{Type: gateway.InProgress}) || errors.Is(err, &gateway.Error{Type: gateway.RateLimited}) {
		t.Errorf("errors.Is on *gateway.Error matches by Type: got the wrong answer for %v", err)
	}
}

// TestDecisionsLogged: denials are logged with their reason; allowed calls
// at debug level.
func TestDecisionsLogged(t *testing.T) {
	var buf testenv.Buffer
	e := newEnv(t, func(o *gateway.Options) {
		o.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	_, _ = e.Gateway.Execute(ctx, transferCall(mallory, "s", 1, okArgs))
	_, _ = e.Gateway.Execute(ctx, transferCall(alice, "s", 1, okArgs))
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	var denied, allowed bool
	for _, m := range lines {
		switch m["msg"] {
		case "gateway: call denied":
			denied = m["principal"] == "mallory" && m["tool"] == "bank/transfer_funds" && strings.Contains(fmt.Sprint(m["reason"]), "payments:write") && m["level"] == "WARN"
		case "gateway: call allowed":
			allowed = m["principal"] == "alice" && m["level"] == "DEBUG"
		}
	}
	if !denied || !allowed {
		t.Errorf("logs = %v; want a WARN denial of mallory naming payments:write and a DEBUG allow of alice", lines)
	}
}

// TestPanickingHooks: a panicking validator refuses the call; a panicking
// approval policy fails closed. Nothing crashes, nothing runs.
func TestPanickingHooks(t *testing.T) {
	e := newEnv(t, func(o *gateway.Options) {
		o.Validators = map[string]gateway.Validator{"bank/get_balance": func(context.Context, gateway.Call, json.RawMessage) error { panic("bug") }}
		o.NeedsApproval = func(context.Context, gateway.Call, json.RawMessage) bool { panic("bug") }
	})
	wantType(t, "panicking validator", second(e.Gateway.Execute(ctx, gateway.Call{Principal: alice, SessionID: "s", Step: 1,
		Tool: "bank/get_balance", Arguments: json.RawMessage(`{"account":"A"}`)})), gateway.ValidationError)
	wantType(t, "panicking approval policy", second(e.Gateway.Execute(ctx, transferCall(alice, "s", 2, okArgs))), gateway.ConfirmationRequired)
	if n := e.Runs.Total(); n != 0 {
		t.Errorf("handler ran %d times, want 0", n)
	}
}

// TestCatalogOnlyToolCode: a tool that exists but has no handler is
// UNKNOWN_TOOL told apart by its code, so that a client that found it in a
// discovery-only catalog learns why it cannot run; a tool that does not
// exist has no code.
func TestCatalogOnlyToolCode(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		name, tool, code string
	}{
		{"catalog-only tool", "catalog/only", gateway.CodeServerNotConnected},
		{"unknown tool", "bank/steal_funds", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Gateway.Execute(ctx, gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: tc.tool, Arguments: json.RawMessage(`{}`)})
			ge := wantType(t, tc.name, err, gateway.UnknownTool)
			if ge.Code != tc.code || ge.Retryable {
				t.Errorf("Execute(%s) code = %q, retryable = %v; want %q, false", tc.tool, ge.Code, ge.Retryable, tc.code)
			}
		})
	}
}

// TestNumberRangeReason: a number a double cannot hold is refused with
// the reason that is true of it. Before, 1e999 and 1e-400 were refused as
// having "more significant digits than a double keeps", which a model
// cannot act on (they have one).
func TestNumberRangeReason(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct{ name, amount, want string }{
		{"overflow", "1e999", "beyond the range of a double"},
		{"negative overflow", "-2e308", "beyond the range of a double"},
		{"underflow", "1e-400", "too close to zero for a double"},
		{"too many digits", "1.00000000000000000001", "more significant digits than a double keeps"},
		{"beyond 2^53", "9007199254740993", "beyond ±2^53"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":` + tc.amount + `}`
			_, err := e.Gateway.Execute(context.Background(), transferCall(alice, "s-"+tc.name, 1, args))
			ge := wantType(t, tc.name, err, gateway.ValidationError)
			if !strings.Contains(ge.Message, tc.want) {
				t.Errorf("amount %s: message %q, want it to say %q", tc.amount, ge.Message, tc.want)
			}
		})
	}
}
