// Package storetest is the conformance kit for the gateway's stores, in
// the manner of testing/slogtest: every [store.Store] runs
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return mystore.Open(t.TempDir()) })
//	}
//
// and a store that keeps only some of the gateway's concerns runs the suite
// of each: [RunRecords] (claims, concurrent claims with exactly one winner,
// lease expiry and takeover, fencing, mismatch, replay of results and
// domain errors, uncertain records, release, a slot per principal),
// [RunApprovals], [RunAudit] and [RunRateLimits]; each checks the purge of its
// concern when the store is a [store.Purger]. [RunComposed] checks a gateway
// whose concerns live in different stores, [RunGateways] several gateways
// sharing one store. [RunRecordOutage] and [RunOutageLoad] kill and restart a
// store's real server (a Server) under a gateway, while a slow tool runs
// and under load, and check that no call runs twice (invariant 9). Times
// are explicit arguments, so no test waits on a clock (the outage tests
// poll the store until a held outcome is recorded).
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// t0 is the kit's reference time; stores must keep time at least to the
// millisecond (every time the kit uses is a whole millisecond).
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

const (
	lease     = 10 * time.Second
	retention = 24 * time.Hour
)

// Run runs the conformance kit against stores made by newStore, one fresh
// store per subtest: every concern's suite ([RunRecords], [RunApprovals],
// [RunAudit], [RunRateLimits]) and the purge of several concerns at once.
// newStore registers any cleanup with t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	t.Run("Records", func(t *testing.T) {
		RunRecords(t, func(t *testing.T) store.RecordStore { return newStore(t) })
	})
	t.Run("Approvals", func(t *testing.T) {
		RunApprovals(t, func(t *testing.T) store.ApprovalStore { return newStore(t) })
	})
	t.Run("Audit", func(t *testing.T) {
		RunAudit(t, func(t *testing.T) store.AuditLog { return newStore(t) })
	})
	t.Run("RateLimits", func(t *testing.T) {
		RunRateLimits(t, func(t *testing.T) store.RateLimitStore { return newStore(t) })
	})
	run(t, newStore, []test[store.Store]{
		{"Purge", testPurge},
		{"PurgeConcerns", testPurgeConcerns},
		{"CompleteAudited", testCompleteAudited},
	})
}

// RunRecords checks a [store.RecordStore]: claims, concurrent claims
// (exactly one winner), lease expiry and takeover, fencing (late
// completions rejected), mismatch, replay of results and domain errors,
// uncertain records, release, slots per principal, and, when the store is a
// [store.Purger] too, the purge of records.
func RunRecords(t *testing.T, newStore func(t *testing.T) store.RecordStore) {
	t.Helper()
	run(t, newStore, []test[store.RecordStore]{
		{"ClaimFresh", testClaimFresh},
		{"ClaimInProgress", testClaimInProgress},
		{"ClaimOwner", testClaimOwner},
		{"CompleteAndReplay", testCompleteAndReplay},
		{"DomainErrorReplay", testDomainErrorReplay},
		{"Mismatch", testMismatch},
		{"Release", testRelease},
		{"Uncertain", testUncertain},
		{"UncertainNoTakeOver", testUncertainNoTakeOver},
		{"LeaseExpiryTakeOver", testLeaseExpiry},
		{"Fencing", testFencing},
		{"LateCompletionAfterLease", testLateCompletionAfterLease},
		{"ConcurrentClaims", testConcurrentClaims},
		{"ConcurrentDistinctSlots", testConcurrentDistinctSlots},
		{"SlotIsolation", testSlotIsolation},
		{"PrincipalsHaveOwnSlots", testPrincipalsHaveOwnSlots},
		{"Get", testGet},
		{"ExpiredRecordIsAbsent", testExpiredRecordIsAbsent},
		{"ValuesAreCopies", testValuesAreCopies},
		{"PurgeRecords", testPurgeRecords},
	})
}

// RunApprovals checks a [store.ApprovalStore]: create, get, grant (exactly
// once, also concurrently), expiry, denials ([store.ApprovalDenier]:
// exactly one decision, also when grants race them), and, when the store
// is a [store.Purger] too, the purge of approvals.
func RunApprovals(t *testing.T, newStore func(t *testing.T) store.ApprovalStore) {
	t.Helper()
	run(t, newStore, []test[store.ApprovalStore]{
		{"Approvals", testApprovals},
		{"ApprovalExpiry", testApprovalExpiry},
		{"ConcurrentGrant", testConcurrentGrant},
		{"Denials", testDenials},
		{"ConcurrentDecisions", testConcurrentDecisions},
		{"PurgeApprovals", testPurgeApprovals},
	})
}

// RunAudit checks a [store.AuditLog]: the round trip of every field, the
// order, the filters and the limit, the hash chain ([store.AuditChain],
// which the log must be: every entry linked to the one before, also when
// appended concurrently; checkpoints), and, when the log is a
// [store.Purger] too, the purge of old entries, after which the chain
// still verifies from its anchor.
func RunAudit(t *testing.T, newStore func(t *testing.T) store.AuditLog) {
	t.Helper()
	run(t, newStore, []test[store.AuditLog]{
		{"Audit", testAudit},
		{"PurgeAudit", testPurgeAudit},
		{"AuditChain", testAuditChain},
		{"AuditChainConcurrent", testAuditChainConcurrent},
		{"PurgeAuditChain", testPurgeAuditChain},
	})
}

// RunRateLimits checks a [store.RateLimitStore]: refill, burst, time going
// backwards, no limit, and concurrent takes.
func RunRateLimits(t *testing.T, newStore func(t *testing.T) store.RateLimitStore) {
	t.Helper()
	run(t, newStore, []test[store.RateLimitStore]{
		{"TokenBucket", testTokenBucket},
		{"TokenBucketConcurrent", testTokenBucketConcurrent},
	})
}

type test[S any] struct {
	name string
	fn   func(t *testing.T, s S)
}

// run runs each test on a fresh store. A Purge* test runs only when the
// store is a [store.Purger]: a store that keeps one concern need not purge
// it itself.
func run[S any](t *testing.T, newStore func(t *testing.T) S, tests []test[S]) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if _, ok := any(s).(store.Purger); !ok && strings.HasPrefix(tc.name, "Purge") {
				return
			}
			if _, ok := any(s).(store.AuditedRecorder); !ok && tc.name == "CompleteAudited" {
				return
			}
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

func slot(i int) store.Slot {
	return store.Slot{Tenant: "acme", Principal: "alice", SessionID: "sess-1", Step: i, Tool: "bank/transfer_funds"}
}

// as returns s for another principal of the same tenant.
func as(principal string, s store.Slot) store.Slot {
	s.Principal = principal
	return s
}

func request(s store.Slot, key string, now time.Time) store.ClaimRequest {
	return store.ClaimRequest{
		Slot: s, Principal: s.Principal, Key: key, Fingerprint: "fp-" + key, Now: now,
		LeaseExpires: now.Add(lease), ExpiresAt: now.Add(lease + retention), TakeOver: true,
	}
}

func claim(t *testing.T, s store.RecordStore, req store.ClaimRequest, want store.ClaimStatus) store.Claim {
	t.Helper()
	c, err := s.Claim(ctx, req)
	if err != nil {
		t.Fatalf("Claim(%v, key %s) error: %v", req.Slot, req.Key, err)
	}
	if c.Status != want {
		t.Fatalf("Claim(%v, key %s) status = %v, want %v (record %+v)", req.Slot, req.Key, statusName(c.Status), statusName(want), c.Record)
	}
	return c
}

func statusName(s store.ClaimStatus) string {
	switch s {
	case store.ClaimAcquired:
		return "acquired"
	case store.ClaimInProgress:
		return "in_progress"
	case store.ClaimDone:
		return "done"
	case store.ClaimUncertain:
		return "uncertain"
	case store.ClaimMismatch:
		return "mismatch"
	}
	return fmt.Sprintf("ClaimStatus(%d)", int(s))
}

func complete(s store.RecordStore, sl store.Slot, token uint64, value string, now time.Time) error {
	return s.Complete(ctx, store.Completion{Slot: sl, Token: token, Value: json.RawMessage(value), Now: now, ExpiresAt: now.Add(retention)})
}

func testClaimFresh(t *testing.T, s store.RecordStore) {
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	r := c.Record
	if c.Token == 0 || r.Token != c.Token {
		t.Errorf("Claim token = %d, record token %d; want equal and nonzero", c.Token, r.Token)
	}
	if r.State != store.StateInProgress || r.Key != "k1" || r.Fingerprint != "fp-k1" || r.Principal != "alice" || r.Attempts != 1 {
		t.Errorf("Claim record = %+v, want in_progress k1/fp-k1/alice, 1 attempt", r)
	}
	if !r.LeaseExpires.Equal(t0.Add(lease)) {
		t.Errorf("record lease = %v, want %v", r.LeaseExpires, t0.Add(lease))
	}
	if c.Previous != "" {
		t.Errorf("fresh claim Previous = %q, want empty", c.Previous)
	}
}

func testClaimInProgress(t *testing.T, s store.RecordStore) {
	c1 := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	c2 := claim(t, s, request(slot(1), "k1", t0.Add(lease-time.Millisecond)), store.ClaimInProgress)
	if !c2.Record.LeaseExpires.Equal(t0.Add(lease)) || c2.Record.Token != c1.Token {
		t.Errorf("in-progress claim record = %+v, want the first owner's lease %v and token %d", c2.Record, t0.Add(lease), c1.Token)
	}
	if c2.Token != 0 {
		t.Errorf("in-progress claim Token = %d, want 0 (not acquired)", c2.Token)
	}
}

// testClaimOwner: the record names the claim that acquired the slot
// (ClaimRequest.Owner), in Claim's answer and in Get's, so that a caller
// whose Claim failed can tell whether its claim took the slot after all.
// A claim that does not acquire the slot leaves the owner as it was; a
// takeover records its own.
func testClaimOwner(t *testing.T, s store.RecordStore) {
	owned := func(owner string) store.ClaimRequest {
		r := request(slot(1), "k1", t0)
		r.Owner = owner
		return r
	}
	wantOwner := func(what string, r store.Record, want string) {
		t.Helper()
		if r.Owner != want {
			t.Errorf("%s: record owner = %q, want %q", what, r.Owner, want)
		}
	}
	c := claim(t, s, owned("claim-a"), store.ClaimAcquired)
	wantOwner("fresh claim", c.Record, "claim-a")
	r, err := s.Get(ctx, "k1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	wantOwner("Get after the fresh claim", r, "claim-a")
	again := owned("claim-b")
	again.Now = t0.Add(time.Millisecond)
	wantOwner("a claim in progress", claim(t, s, again, store.ClaimInProgress).Record, "claim-a")
	if r, err = s.Get(ctx, "k1"); err != nil {
		t.Fatalf("Get: %v", err)
	}
	wantOwner("Get after a claim that found it in progress", r, "claim-a")
	later := owned("claim-c")
	later.Now = t0.Add(lease + time.Millisecond)
	later.LeaseExpires = later.Now.Add(lease)
	wantOwner("a takeover", claim(t, s, later, store.ClaimAcquired).Record, "claim-c")
	if r, err = s.Get(ctx, "k1"); err != nil {
		t.Fatalf("Get: %v", err)
	}
	wantOwner("Get after a takeover", r, "claim-c")
}

func testCompleteAndReplay(t *testing.T, s store.RecordStore) {
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	if err := complete(s, slot(1), c.Token, `{"transaction_id":"tx-1"}`, t0.Add(time.Second)); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	for i := range 3 {
		r := claim(t, s, request(slot(1), "k1", t0.Add(time.Duration(i+2)*time.Second)), store.ClaimDone)
		if string(r.Record.Value) != `{"transaction_id":"tx-1"}` || r.Record.DomainError != nil || r.Record.State != store.StateDone {
			t.Fatalf("replay %d record = %+v, want the stored value", i, r.Record)
		}
		if !r.Record.ExpiresAt.Equal(t0.Add(time.Second + retention)) {
			t.Errorf("replay record ExpiresAt = %v, want %v (completion time + retention)", r.Record.ExpiresAt, t0.Add(time.Second+retention))
		}
	}
	if err := complete(s, slot(1), c.Token, `{"again":true}`, t0.Add(2*time.Second)); !errors.Is(err, store.ErrFenced) {
		t.Errorf("second Complete of a done record = %v, want ErrFenced", err)
	}
}

func testDomainErrorReplay(t *testing.T, s store.RecordStore) {
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	de := &tools.DomainError{Code: "INSUFFICIENT_FUNDS", Message: "balance 10.00 < 50.00", Details: map[string]any{"balance": "10.00"}}
	if err := s.Complete(ctx, store.Completion{Slot: slot(1), Token: c.Token, DomainError: de, Now: t0, ExpiresAt: t0.Add(retention)}); err != nil {
		t.Fatalf("Complete(domain error): %v", err)
	}
	r := claim(t, s, request(slot(1), "k1", t0.Add(time.Second)), store.ClaimDone)
	got := r.Record.DomainError
	if got == nil || got.Code != de.Code || got.Message != de.Message {
		t.Fatalf("replayed domain error = %+v, want %+v", got, de)
	}
	// Details survive a round trip through the store's encoding.
	want, _ := json.Marshal(de.Details)
	have, _ := json.Marshal(got.Details)
	if string(have) != string(want) {
		t.Errorf("replayed domain error details = %s, want %s", have, want)
	}
}

func testMismatch(t *testing.T, s store.RecordStore) {
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	m := claim(t, s, request(slot(1), "k2", t0), store.ClaimMismatch)
	if m.Record.Key != "k1" || m.Record.Fingerprint != "fp-k1" {
		t.Errorf("mismatch record binds %s/%s, want k1/fp-k1", m.Record.Key, m.Record.Fingerprint)
	}
	if err := complete(s, slot(1), c.Token, `1`, t0); err != nil {
		t.Fatal(err)
	}
	claim(t, s, request(slot(1), "k2", t0.Add(time.Second)), store.ClaimMismatch)
	// The binding is unchanged.
	claim(t, s, request(slot(1), "k1", t0.Add(2*time.Second)), store.ClaimDone)
}

func testRelease(t *testing.T, s store.RecordStore) {
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	if err := s.Release(ctx, slot(1), c.Token+1, t0); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Release with a wrong token = %v, want ErrFenced", err)
	}
	if err := s.Release(ctx, slot(1), c.Token, t0); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if _, err := s.Get(ctx, "k1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get after Release = %v, want ErrNotFound", err)
	}
	// The slot is free, even for other arguments.
	c2 := claim(t, s, request(slot(1), "k2", t0.Add(time.Second)), store.ClaimAcquired)
	if c2.Token <= c.Token {
		t.Errorf("token after release = %d, want > %d (tokens grow)", c2.Token, c.Token)
	}
	if err := s.Release(ctx, slot(1), c.Token, t0.Add(time.Second)); !errors.Is(err, store.ErrFenced) {
		t.Errorf("stale Release = %v, want ErrFenced", err)
	}
}

func testUncertain(t *testing.T, s store.RecordStore) {
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	if err := s.MarkUncertain(ctx, slot(1), c.Token, "timeout", t0.Add(time.Second), t0.Add(retention)); err != nil {
		t.Fatalf("MarkUncertain: %v", err)
	}
	r, err := s.Get(ctx, "k1")
	if err != nil || r.State != store.StateUncertain || r.Reason != "timeout" {
		t.Fatalf("Get after MarkUncertain = %+v, %v; want uncertain with reason timeout", r, err)
	}
	// The same key takes it over (the gateway re-runs with the same key).
	c2 := claim(t, s, request(slot(1), "k1", t0.Add(2*time.Second)), store.ClaimAcquired)
	if c2.Previous != store.StateUncertain || c2.Record.Attempts != 2 || c2.Token <= c.Token {
		t.Errorf("takeover = %+v (previous %q, token %d); want previous uncertain, 2 attempts, token > %d", c2.Record, c2.Previous, c2.Token, c.Token)
	}
	// Other arguments still mismatch.
	claim(t, s, request(slot(1), "k2", t0.Add(2*time.Second)), store.ClaimMismatch)
	if err := complete(s, slot(1), c.Token, `"stale"`, t0.Add(3*time.Second)); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Complete by the first owner after takeover = %v, want ErrFenced", err)
	}
	if err := complete(s, slot(1), c2.Token, `"ok"`, t0.Add(3*time.Second)); err != nil {
		t.Fatalf("Complete by the new owner: %v", err)
	}
	d := claim(t, s, request(slot(1), "k1", t0.Add(4*time.Second)), store.ClaimDone)
	if string(d.Record.Value) != `"ok"` {
		t.Errorf("replay after rerun = %s, want \"ok\"", d.Record.Value)
	}
}

func testUncertainNoTakeOver(t *testing.T, s store.RecordStore) {
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	if err := s.MarkUncertain(ctx, slot(1), c.Token, "panic", t0, t0.Add(retention)); err != nil {
		t.Fatal(err)
	}
	req := request(slot(1), "k1", t0.Add(time.Second))
	req.TakeOver = false
	u := claim(t, s, req, store.ClaimUncertain)
	if u.Record.State != store.StateUncertain || u.Record.Token != c.Token || u.Record.Attempts != 1 {
		t.Errorf("uncertain claim without takeover changed the record: %+v", u.Record)
	}
	// An expired lease counts as uncertain too.
	c2 := claim(t, s, request(slot(2), "k2", t0), store.ClaimAcquired)
	req = request(slot(2), "k2", t0.Add(lease))
	req.TakeOver = false
	u = claim(t, s, req, store.ClaimUncertain)
	if u.Record.Token != c2.Token || u.Record.State != store.StateInProgress {
		t.Errorf("expired lease without takeover changed the record: %+v", u.Record)
	}
}

func testLeaseExpiry(t *testing.T, s store.RecordStore) {
	c1 := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	// Exactly at LeaseExpires the lease is over.
	c2 := claim(t, s, request(slot(1), "k1", t0.Add(lease)), store.ClaimAcquired)
	if c2.Previous != store.StateInProgress || c2.Token <= c1.Token || c2.Record.Attempts != 2 {
		t.Fatalf("takeover of an expired lease = %+v (previous %q, token %d); want previous in_progress, token > %d, 2 attempts",
			c2.Record, c2.Previous, c2.Token, c1.Token)
	}
	if !c2.Record.LeaseExpires.Equal(t0.Add(2 * lease)) {
		t.Errorf("new lease = %v, want %v", c2.Record.LeaseExpires, t0.Add(2*lease))
	}
	if want := t0.Add(2*lease + retention); !c2.Record.ExpiresAt.Equal(want) {
		t.Errorf("takeover ExpiresAt = %v, want the request's %v", c2.Record.ExpiresAt, want)
	}
	claim(t, s, request(slot(1), "k1", t0.Add(lease+time.Second)), store.ClaimInProgress)
}

func testFencing(t *testing.T, s store.RecordStore) {
	c1 := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	c2 := claim(t, s, request(slot(1), "k1", t0.Add(lease+time.Second)), store.ClaimAcquired)
	now := t0.Add(lease + 2*time.Second)
	if err := complete(s, slot(1), c1.Token, `"late"`, now); !errors.Is(err, store.ErrFenced) {
		t.Errorf("late Complete by the expired owner = %v, want ErrFenced", err)
	}
	if err := s.MarkUncertain(ctx, slot(1), c1.Token, "late", now, now.Add(retention)); !errors.Is(err, store.ErrFenced) {
		t.Errorf("late MarkUncertain by the expired owner = %v, want ErrFenced", err)
	}
	if err := s.Release(ctx, slot(1), c1.Token, now); !errors.Is(err, store.ErrFenced) {
		t.Errorf("late Release by the expired owner = %v, want ErrFenced", err)
	}
	if err := complete(s, slot(1), c2.Token, `"current"`, now); err != nil {
		t.Fatalf("Complete by the current owner: %v", err)
	}
	d := claim(t, s, request(slot(1), "k1", now), store.ClaimDone)
	if string(d.Record.Value) != `"current"` {
		t.Errorf("recorded value = %s, want the current owner's \"current\"", d.Record.Value)
	}
	if err := complete(s, slot(1), 0, `"zero"`, now); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Complete with token 0 = %v, want ErrFenced", err)
	}
	if err := complete(s, slot(99), c2.Token, `"absent"`, now); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Complete of an absent slot = %v, want ErrFenced", err)
	}
}

func testLateCompletionAfterLease(t *testing.T, s store.RecordStore) {
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	// Nobody took over, but the lease is over: the completion is late.
	if err := complete(s, slot(1), c.Token, `"late"`, t0.Add(lease)); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Complete at the lease's end = %v, want ErrFenced", err)
	}
	r, err := s.Get(ctx, "k1")
	if err != nil || r.State != store.StateInProgress || r.Value != nil {
		t.Errorf("record after a rejected completion = %+v, %v; want unchanged in progress", r, err)
	}
	if err := complete(s, slot(1), c.Token, `"ok"`, t0.Add(lease-time.Millisecond)); err != nil {
		t.Errorf("Complete just inside the lease = %v, want nil", err)
	}
}

func testConcurrentClaims(t *testing.T, s store.RecordStore) {
	const n = 64
	var wg sync.WaitGroup
	results := make([]store.Claim, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = s.Claim(ctx, request(slot(1), "k1", t0))
		})
	}
	close(start)
	wg.Wait()
	won := 0
	var token uint64
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("claim %d: %v", i, errs[i])
		}
		switch results[i].Status {
		case store.ClaimAcquired:
			won++
			token = results[i].Token
		case store.ClaimInProgress:
		default:
			t.Errorf("claim %d status = %s, want acquired or in_progress", i, statusName(results[i].Status))
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent claims acquired the slot, want exactly 1", won, n)
	}
	// Concurrent completions with the winner's token: exactly one succeeds.
	var ok, fenced int
	var mu sync.Mutex
	for range 8 {
		wg.Go(func() {
			err := complete(s, slot(1), token, `"v"`, t0.Add(time.Second))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, store.ErrFenced):
				fenced++
			default:
				t.Errorf("Complete: %v", err)
			}
		})
	}
	wg.Wait()
	if ok != 1 || fenced != 7 {
		t.Errorf("8 concurrent completions: %d succeeded, %d fenced; want 1 and 7", ok, fenced)
	}
}

func testConcurrentDistinctSlots(t *testing.T, s store.RecordStore) {
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			sl := slot(i)
			key := fmt.Sprintf("key-%d", i)
			c, err := s.Claim(ctx, request(sl, key, t0))
			if err != nil || c.Status != store.ClaimAcquired {
				errs <- fmt.Errorf("claim %d = %v, %v; want acquired", i, statusName(c.Status), err)
				return
			}
			if err := complete(s, sl, c.Token, fmt.Sprint(i), t0.Add(time.Second)); err != nil {
				errs <- fmt.Errorf("complete %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range n {
		r, err := s.Get(ctx, fmt.Sprintf("key-%d", i))
		if err != nil || string(r.Value) != fmt.Sprint(i) {
			t.Fatalf("Get(key-%d) = %s, %v; want %d", i, r.Value, err, i)
		}
	}
}

func testSlotIsolation(t *testing.T, s store.RecordStore) {
	base := slot(1)
	claim(t, s, request(base, "k1", t0), store.ClaimAcquired)
	variants := []store.Slot{
		{Tenant: "other", Principal: base.Principal, SessionID: base.SessionID, Step: base.Step, Tool: base.Tool},
		{Tenant: base.Tenant, Principal: "bob", SessionID: base.SessionID, Step: base.Step, Tool: base.Tool},
		{Tenant: base.Tenant, Principal: base.Principal, SessionID: "sess-2", Step: base.Step, Tool: base.Tool},
		{Tenant: base.Tenant, Principal: base.Principal, SessionID: base.SessionID, Step: 2, Tool: base.Tool},
		{Tenant: base.Tenant, Principal: base.Principal, SessionID: base.SessionID, Step: base.Step, Tool: "bank/get_balance"},
	}
	for i, v := range variants {
		claim(t, s, request(v, fmt.Sprintf("iso-%d", i), t0), store.ClaimAcquired)
	}
}

// Two principals of one tenant with the same session, step and tool have
// two slots: neither can occupy, block, complete or read the other's, and
// neither learns that the other called.
func testPrincipalsHaveOwnSlots(t *testing.T, s store.RecordStore) {
	alice, mallory := slot(1), as("mallory", slot(1))
	a := claim(t, s, request(alice, "k-alice", t0), store.ClaimAcquired)
	// While alice's call is in progress, mallory's own call of the same
	// session step runs: no IN_PROGRESS, no mismatch.
	m := claim(t, s, request(mallory, "k-mallory", t0), store.ClaimAcquired)
	if m.Token == a.Token || m.Record.Slot != mallory || m.Record.Principal != "mallory" || m.Record.Key != "k-mallory" {
		t.Fatalf("mallory's claim = %+v (token %d); want her own record with a token other than alice's %d", m.Record, m.Token, a.Token)
	}
	// Tokens fence per slot: mallory's token does not complete alice's slot.
	if err := complete(s, alice, m.Token, `"mallory"`, t0.Add(time.Second)); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Complete of alice's slot with mallory's token = %v, want ErrFenced", err)
	}
	if err := s.Release(ctx, alice, m.Token, t0.Add(time.Second)); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Release of alice's slot with mallory's token = %v, want ErrFenced", err)
	}
	if err := complete(s, mallory, m.Token, `"mallory"`, t0.Add(time.Second)); err != nil {
		t.Fatalf("Complete of mallory's slot: %v", err)
	}
	// alice's claim is untouched and still hers to finish.
	claim(t, s, request(alice, "k-alice", t0.Add(2*time.Second)), store.ClaimInProgress)
	if err := complete(s, alice, a.Token, `"alice"`, t0.Add(2*time.Second)); err != nil {
		t.Fatalf("Complete of alice's slot: %v", err)
	}
	for _, c := range []struct {
		slot       store.Slot
		key, value string
	}{{alice, "k-alice", `"alice"`}, {mallory, "k-mallory", `"mallory"`}} {
		d := claim(t, s, request(c.slot, c.key, t0.Add(3*time.Second)), store.ClaimDone)
		if string(d.Record.Value) != c.value || d.Record.Slot != c.slot {
			t.Errorf("replay of %s's slot = %s in %+v, want %s in %+v", c.slot.Principal, d.Record.Value, d.Record.Slot, c.value, c.slot)
		}
		r, err := s.Get(ctx, c.key)
		if err != nil || r.Slot != c.slot || string(r.Value) != c.value {
			t.Errorf("Get(%s) = %+v, %v; want the record of %+v with %s", c.key, r, err, c.slot, c.value)
		}
	}
	// Other arguments are a mismatch within one principal's slot only.
	claim(t, s, request(mallory, "k-mallory-2", t0.Add(4*time.Second)), store.ClaimMismatch)
	claim(t, s, request(as("bob", slot(1)), "k-mallory-2", t0.Add(4*time.Second)), store.ClaimAcquired)
}

func testGet(t *testing.T, s store.RecordStore) {
	if _, err := s.Get(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(missing) = %v, want ErrNotFound", err)
	}
	c := claim(t, s, request(slot(7), "k7", t0), store.ClaimAcquired)
	r, err := s.Get(ctx, "k7")
	if err != nil || r.Slot != slot(7) || r.Token != c.Token || r.State != store.StateInProgress {
		t.Errorf("Get(k7) = %+v, %v; want the in-progress record of %v", r, err, slot(7))
	}
}

func approval(id, key string, now time.Time) store.Approval {
	return store.Approval{
		ID: id, Slot: slot(1), Key: key, Fingerprint: "fp-" + key, Requester: "alice",
		Arguments: json.RawMessage(`{"amount":5000}`), Taint: "mail/read_inbox at step 2", Definition: "sha256:def", CreatedAt: now, ExpiresAt: now.Add(time.Hour),
	}
}

func testApprovals(t *testing.T, s store.ApprovalStore) {
	if _, err := s.GetApproval(ctx, "apr_missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetApproval(missing) = %v, want ErrNotFound", err)
	}
	if _, err := s.GrantApproval(ctx, "apr_missing", "bob", t0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GrantApproval(missing) = %v, want ErrNotFound", err)
	}
	a, err := s.CreateApproval(ctx, approval("apr_1", "k1", t0))
	if err != nil {
		t.Fatal(err)
	}
	if a.Granted || a.Key != "k1" || a.Fingerprint != "fp-k1" || a.Requester != "alice" || string(a.Arguments) != `{"amount":5000}` || a.Taint != "mail/read_inbox at step 2" || a.Definition != "sha256:def" {
		t.Errorf("CreateApproval = %+v, want pending, bound to k1/fp-k1, requested by alice", a)
	}
	if a.Slot != slot(1) {
		t.Errorf("CreateApproval slot = %+v, want %+v", a.Slot, slot(1))
	}
	// Creating again while pending returns the same, unchanged approval.
	again := approval("apr_1", "k1", t0.Add(time.Minute))
	again.Requester = "someone-else"
	b, err := s.CreateApproval(ctx, again)
	if err != nil || b.Requester != "alice" || !b.CreatedAt.Equal(t0) {
		t.Errorf("CreateApproval(existing) = %+v, %v; want the original approval", b, err)
	}
	g, err := s.GrantApproval(ctx, "apr_1", "bob", t0.Add(2*time.Minute))
	if err != nil || !g.Granted || g.Approver != "bob" || !g.GrantedAt.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("GrantApproval = %+v, %v; want granted by bob at +2m", g, err)
	}
	if _, err := s.GrantApproval(ctx, "apr_1", "carol", t0.Add(3*time.Minute)); !errors.Is(err, store.ErrApprovalState) {
		t.Errorf("second GrantApproval = %v, want ErrApprovalState", err)
	}
	got, err := s.GetApproval(ctx, "apr_1")
	if err != nil || !got.Granted || got.Approver != "bob" || got.Key != "k1" || got.Fingerprint != "fp-k1" || got.Taint != "mail/read_inbox at step 2" || got.Definition != "sha256:def" || got.Slot != slot(1) {
		t.Errorf("GetApproval after grant = %+v, %v; want granted by bob, bound to k1/fp-k1", got, err)
	}
	// Create on a granted, unexpired approval does not reset it.
	c, err := s.CreateApproval(ctx, approval("apr_1", "k1", t0.Add(4*time.Minute)))
	if err != nil || !c.Granted {
		t.Errorf("CreateApproval on a granted approval = %+v, %v; want it still granted", c, err)
	}
}

func testApprovalExpiry(t *testing.T, s store.ApprovalStore) {
	if _, err := s.CreateApproval(ctx, approval("apr_2", "k2", t0)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GrantApproval(ctx, "apr_2", "bob", t0.Add(time.Hour)); !errors.Is(err, store.ErrApprovalState) {
		t.Errorf("GrantApproval at expiry = %v, want ErrApprovalState", err)
	}
	// An expired approval is replaced by a fresh pending one.
	n, err := s.CreateApproval(ctx, approval("apr_2", "k2", t0.Add(2*time.Hour)))
	if err != nil || n.Granted || !n.CreatedAt.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("CreateApproval after expiry = %+v, %v; want a fresh pending approval", n, err)
	}
}

func testConcurrentGrant(t *testing.T, s store.ApprovalStore) {
	if _, err := s.CreateApproval(ctx, approval("apr_3", "k3", t0)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for i := range 16 {
		wg.Go(func() {
			_, err := s.GrantApproval(ctx, "apr_3", fmt.Sprintf("approver-%d", i), t0.Add(time.Second))
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				granted++
			} else if !errors.Is(err, store.ErrApprovalState) {
				t.Errorf("GrantApproval: %v", err)
			}
		})
	}
	wg.Wait()
	if granted != 1 {
		t.Errorf("%d of 16 concurrent grants succeeded, want 1", granted)
	}
}

func testDenials(t *testing.T, s store.ApprovalStore) {
	d := must[store.ApprovalDenier](t, s)
	if _, err := d.DenyApproval(ctx, "apr_missing", "bob", t0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DenyApproval(missing) = %v, want ErrNotFound", err)
	}
	if _, err := s.CreateApproval(ctx, approval("apr_d", "kd", t0)); err != nil {
		t.Fatal(err)
	}
	got, err := d.DenyApproval(ctx, "apr_d", "bob", t0.Add(time.Minute))
	if err != nil || !got.Denied || got.Granted || got.Approver != "bob" || !got.DeniedAt.Equal(t0.Add(time.Minute)) ||
		!got.GrantedAt.IsZero() || got.Key != "kd" || got.Fingerprint != "fp-kd" || got.Slot != slot(1) {
		t.Fatalf("DenyApproval = %+v, %v; want denied by bob at +1m, bound to kd/fp-kd", got, err)
	}
	read, err := s.GetApproval(ctx, "apr_d")
	if err != nil || !read.Denied || read.Granted || read.Approver != "bob" || !read.DeniedAt.Equal(t0.Add(time.Minute)) || !read.GrantedAt.IsZero() {
		t.Errorf("GetApproval after a denial = %+v, %v; want denied by bob at +1m", read, err)
	}
	// A decided approval takes no other decision.
	if _, err := s.GrantApproval(ctx, "apr_d", "carol", t0.Add(2*time.Minute)); !errors.Is(err, store.ErrApprovalState) {
		t.Errorf("GrantApproval of a denied approval = %v, want ErrApprovalState", err)
	}
	if _, err := d.DenyApproval(ctx, "apr_d", "carol", t0.Add(2*time.Minute)); !errors.Is(err, store.ErrApprovalState) {
		t.Errorf("second DenyApproval = %v, want ErrApprovalState", err)
	}
	// Create on a denied, unexpired approval does not reset it.
	if c, err := s.CreateApproval(ctx, approval("apr_d", "kd", t0.Add(3*time.Minute))); err != nil || !c.Denied || c.Approver != "bob" {
		t.Errorf("CreateApproval on a denied approval = %+v, %v; want it still denied by bob", c, err)
	}
	if _, err := s.CreateApproval(ctx, approval("apr_g", "kg", t0)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GrantApproval(ctx, "apr_g", "bob", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DenyApproval(ctx, "apr_g", "carol", t0.Add(2*time.Minute)); !errors.Is(err, store.ErrApprovalState) {
		t.Errorf("DenyApproval of a granted approval = %v, want ErrApprovalState", err)
	}
	// An expired approval cannot be denied, and is replaced by a fresh
	// pending one, as after a grant.
	if _, err := d.DenyApproval(ctx, "apr_d", "carol", t0.Add(time.Hour)); !errors.Is(err, store.ErrApprovalState) {
		t.Errorf("DenyApproval at expiry = %v, want ErrApprovalState", err)
	}
	n, err := s.CreateApproval(ctx, approval("apr_d", "kd", t0.Add(2*time.Hour)))
	if err != nil || n.Denied || n.Granted || n.Approver != "" || !n.DeniedAt.IsZero() {
		t.Errorf("CreateApproval after a denied one expired = %+v, %v; want a fresh pending approval", n, err)
	}
}

func testConcurrentDecisions(t *testing.T, s store.ApprovalStore) {
	d := must[store.ApprovalDenier](t, s)
	if _, err := s.CreateApproval(ctx, approval("apr_c", "kc", t0)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var decided []store.Approval
	for i := range 16 {
		wg.Go(func() {
			who := fmt.Sprintf("approver-%d", i)
			var a store.Approval
			var err error
			if i%2 == 0 {
				a, err = s.GrantApproval(ctx, "apr_c", who, t0.Add(time.Second))
			} else {
				a, err = d.DenyApproval(ctx, "apr_c", who, t0.Add(time.Second))
			}
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				decided = append(decided, a)
			} else if !errors.Is(err, store.ErrApprovalState) {
				t.Errorf("%s's decision: %v", who, err)
			}
		})
	}
	wg.Wait()
	if len(decided) != 1 {
		t.Fatalf("%d of 16 racing grants and denials succeeded, want 1", len(decided))
	}
	got, err := s.GetApproval(ctx, "apr_c")
	if err != nil || got.Granted != decided[0].Granted || got.Denied != decided[0].Denied || got.Approver != decided[0].Approver {
		t.Errorf("GetApproval after the race = %+v, %v; want the one decision that succeeded, %+v", got, err, decided[0])
	}
}

func testAudit(t *testing.T, s store.AuditLog) {
	entries := []store.AuditEntry{
		{Time: t0.Add(2 * time.Second), Tenant: "acme", Principal: "alice", Actor: "worker:accounts", Taint: "mail/read_inbox at step 2", SessionID: "s", Step: 1, Tool: "bank/transfer_funds", Key: "k1", Decision: store.DecisionAllow, Outcome: store.OutcomeOK, Latency: 1500 * time.Microsecond},
		{Time: t0, Tenant: "acme", Principal: "bob", Tool: "bank/get_balance", Decision: store.DecisionDeny, Reason: "missing scope", Outcome: store.OutcomeDenied},
		{Time: t0.Add(time.Second), Tenant: "globex", Principal: "carol", Tool: "bank/transfer_funds", Key: "k2", Decision: store.DecisionAllow, Outcome: store.OutcomeReplayed, ApprovalID: "apr_1"},
		{Time: t0.Add(2 * time.Second), Tenant: "acme", Principal: "alice", Tool: "bank/get_balance", Key: "k3", Decision: store.DecisionAllow, Outcome: store.OutcomeOK},
	}
	for _, e := range entries {
		if err := s.AppendAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.QueryAudit(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	// Oldest first; equal times in insertion order.
	wantOrder := []string{"bob", "carol", "alice/k1", "alice/k3"}
	if len(all) != len(wantOrder) {
		t.Fatalf("QueryAudit(all) returned %d entries, want %d", len(all), len(wantOrder))
	}
	for i, e := range all {
		got := e.Principal
		if e.Principal == "alice" {
			got += "/" + e.Key
		}
		if got != wantOrder[i] {
			t.Errorf("QueryAudit(all)[%d] = %s, want %s", i, got, wantOrder[i])
		}
	}
	first := all[2]
	if first.Latency != 1500*time.Microsecond || first.Decision != store.DecisionAllow || first.Outcome != store.OutcomeOK || first.Step != 1 || first.SessionID != "s" || !first.Time.Equal(t0.Add(2*time.Second)) ||
		first.Actor != "worker:accounts" || first.Taint != "mail/read_inbox at step 2" {
		t.Errorf("audit entry round trip = %+v, want %+v", first, entries[0])
	}
	if all[1].ApprovalID != "apr_1" || all[0].Reason != "missing scope" {
		t.Errorf("audit approval id / reason lost: %+v, %+v", all[1], all[0])
	}
	cases := []struct {
		q    store.AuditQuery
		want int
	}{
		{store.AuditQuery{Tenant: "acme"}, 3},
		{store.AuditQuery{Principal: "alice"}, 2},
		{store.AuditQuery{Tool: "bank/transfer_funds"}, 2},
		{store.AuditQuery{Key: "k2"}, 1},
		{store.AuditQuery{Since: t0.Add(time.Second)}, 3},
		{store.AuditQuery{Until: t0.Add(time.Second)}, 1},
		{store.AuditQuery{Tenant: "acme", Principal: "alice", Tool: "bank/get_balance"}, 1},
		{store.AuditQuery{Limit: 2}, 2},
		{store.AuditQuery{Tenant: "nobody"}, 0},
	}
	for _, c := range cases {
		got, err := s.QueryAudit(ctx, c.q)
		if err != nil || len(got) != c.want {
			t.Errorf("QueryAudit(%+v) = %d entries, %v; want %d", c.q, len(got), err, c.want)
		}
	}
}

func testTokenBucket(t *testing.T, s store.RateLimitStore) {
	l := store.RateLimit{Rate: 2, Burst: 3} // 2 tokens/s, bucket of 3
	take := func(name string, at time.Time) (bool, time.Duration) {
		t.Helper()
		ok, wait, err := s.TakeToken(ctx, name, l, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok, wait
	}
	for i := range 3 {
		if ok, _ := take("alice|transfer", t0); !ok {
			t.Fatalf("take %d of a full bucket of 3 = refused, want ok", i+1)
		}
	}
	ok, wait := take("alice|transfer", t0)
	if ok || wait != 500*time.Millisecond {
		t.Errorf("take from an empty bucket = %v, wait %v; want refused, wait 500ms (1 token at 2/s)", ok, wait)
	}
	// Other buckets are independent.
	if ok, _ := take("bob|transfer", t0); !ok {
		t.Error("take from another principal's bucket = refused, want ok")
	}
	// 250ms refills half a token: still refused, wait 250ms.
	ok, wait = take("alice|transfer", t0.Add(250*time.Millisecond))
	if ok || wait != 250*time.Millisecond {
		t.Errorf("take after 250ms = %v, wait %v; want refused, wait 250ms", ok, wait)
	}
	if ok, _ := take("alice|transfer", t0.Add(500*time.Millisecond)); !ok {
		t.Error("take after 500ms = refused, want ok (one token refilled)")
	}
	// A long pause refills to Burst, not beyond.
	later := t0.Add(time.Hour)
	for i := range 3 {
		if ok, _ := take("alice|transfer", later); !ok {
			t.Fatalf("take %d after an hour = refused, want ok", i+1)
		}
	}
	if ok, _ := take("alice|transfer", later); ok {
		t.Error("4th take after an hour = ok, want refused (burst is 3)")
	}
	// Time going backwards refills nothing.
	if ok, _ := take("alice|transfer", t0); ok {
		t.Error("take at an earlier time = ok, want refused")
	}
	// No limit.
	for range 10 {
		ok, _, err := s.TakeToken(ctx, "free", store.RateLimit{}, t0)
		if err != nil || !ok {
			t.Fatalf("TakeToken(zero limit) = %v, %v; want ok", ok, err)
		}
	}
}

func testTokenBucketConcurrent(t *testing.T, s store.RateLimitStore) {
	l := store.RateLimit{Rate: 1, Burst: 10}
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 50 {
		wg.Go(func() {
			ok, _, err := s.TakeToken(ctx, "shared", l, t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Error(err)
			}
			if ok {
				granted++
			}
		})
	}
	wg.Wait()
	if granted != 10 {
		t.Errorf("50 concurrent takes from a bucket of 10 granted %d, want 10", granted)
	}
}

func testPurge(t *testing.T, s store.Store) {
	// done at t0+1s, expires t0+1s+retention
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	if err := complete(s, slot(1), c.Token, `1`, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	// uncertain, expires t0+2h
	c2 := claim(t, s, request(slot(2), "k2", t0), store.ClaimAcquired)
	if err := s.MarkUncertain(ctx, slot(2), c2.Token, "timeout", t0, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// in progress, expires t0+lease+retention
	claim(t, s, request(slot(3), "k3", t0), store.ClaimAcquired)
	if _, err := s.CreateApproval(ctx, approval("apr_p", "kp", t0)); err != nil { // expires t0+1h
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.AppendAudit(ctx, store.AuditEntry{Time: t0.Add(time.Duration(i) * time.Hour), Tenant: "acme", Principal: "p", Decision: store.DecisionAllow, Outcome: store.OutcomeOK}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.Purge(ctx, store.PurgeRequest{Now: t0.Add(3 * time.Hour), AuditBefore: t0.Add(90 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if st != (store.PurgeStats{Records: 1, Approvals: 1, Audit: 2}) {
		t.Errorf("Purge at +3h = %+v, want 1 record (uncertain), 1 approval, 2 audit entries", st)
	}
	if _, err := s.Get(ctx, "k2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(k2) after purge = %v, want ErrNotFound", err)
	}
	if _, err := s.GetApproval(ctx, "apr_p"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetApproval after purge = %v, want ErrNotFound", err)
	}
	if _, err := s.Get(ctx, "k1"); err != nil {
		t.Errorf("Get(k1) after purge = %v, want the record (retained)", err)
	}
	left, _ := s.QueryAudit(ctx, store.AuditQuery{})
	if len(left) != 1 || !left[0].Time.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("audit after purge = %+v, want the +2h entry only", left)
	}
	st, err = s.Purge(ctx, store.PurgeRequest{Now: t0.Add(lease + retention + time.Second)})
	if err != nil || st.Records != 2 || st.Audit != 0 {
		t.Errorf("Purge after the retention = %+v, %v; want 2 records (done, in progress), audit kept", st, err)
	}
	claim(t, s, request(slot(1), "other", t0.Add(lease+retention+time.Second)), store.ClaimAcquired)
}

func testExpiredRecordIsAbsent(t *testing.T, s store.RecordStore) {
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	if err := complete(s, slot(1), c.Token, `1`, t0); err != nil { // expires t0+retention
		t.Fatal(err)
	}
	claim(t, s, request(slot(1), "k1", t0.Add(retention-time.Millisecond)), store.ClaimDone)
	// Past the retention, the slot is free: no purge needed.
	n := claim(t, s, request(slot(1), "k2", t0.Add(retention)), store.ClaimAcquired)
	if n.Record.Key != "k2" || n.Record.Attempts != 1 || n.Previous != "" {
		t.Errorf("claim of an expired slot = %+v (previous %q), want a fresh record for k2", n.Record, n.Previous)
	}
}

func testValuesAreCopies(t *testing.T, s store.RecordStore) {
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	v := json.RawMessage(`{"a":1}`)
	if err := s.Complete(ctx, store.Completion{Slot: slot(1), Token: c.Token, Value: v, Now: t0, ExpiresAt: t0.Add(retention)}); err != nil {
		t.Fatal(err)
	}
	v[2] = 'X'
	r, _ := s.Get(ctx, "k1")
	r.Value[2] = 'Y'
	r2, _ := s.Get(ctx, "k1")
	if string(r2.Value) != `{"a":1}` {
		t.Errorf("stored value = %s after callers modified their copies, want {\"a\":1}", r2.Value)
	}
}

// must returns s as a T, failing t when it is none: a concern's suite uses
// the interface its store keeps beside it (every audit log of this module
// keeps a chain; a store of one concern purges it).
func must[T any](t *testing.T, s any) T {
	t.Helper()
	v, ok := s.(T)
	if !ok {
		t.Fatalf("%T is not a %v", s, reflect.TypeFor[T]())
	}
	return v
}

func testPurgeRecords(t *testing.T, s store.RecordStore) {
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	if err := complete(s, slot(1), c.Token, `1`, t0.Add(time.Second)); err != nil { // expires t0+1s+retention
		t.Fatal(err)
	}
	c2 := claim(t, s, request(slot(2), "k2", t0), store.ClaimAcquired)
	if err := s.MarkUncertain(ctx, slot(2), c2.Token, "timeout", t0, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	claim(t, s, request(slot(3), "k3", t0), store.ClaimAcquired) // expires t0+lease+retention
	st, err := must[store.Purger](t, s).Purge(ctx, store.PurgeRequest{Now: t0.Add(3 * time.Hour), Concerns: store.ConcernRecords})
	if err != nil || st != (store.PurgeStats{Records: 1}) {
		t.Errorf("Purge(records) at +3h = %+v, %v; want 1 record (the uncertain one)", st, err)
	}
	if _, err := s.Get(ctx, "k2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(k2) after purge = %v, want ErrNotFound", err)
	}
	for _, k := range []string{"k1", "k3"} {
		if _, err := s.Get(ctx, k); err != nil {
			t.Errorf("Get(%s) after purge = %v, want the record (retained)", k, err)
		}
	}
}

func testPurgeApprovals(t *testing.T, s store.ApprovalStore) {
	if _, err := s.CreateApproval(ctx, approval("apr_old", "k1", t0)); err != nil { // expires t0+1h
		t.Fatal(err)
	}
	if _, err := s.CreateApproval(ctx, approval("apr_new", "k2", t0.Add(90*time.Minute))); err != nil {
		t.Fatal(err)
	}
	st, err := must[store.Purger](t, s).Purge(ctx, store.PurgeRequest{Now: t0.Add(2 * time.Hour), Concerns: store.ConcernApprovals})
	if err != nil || st != (store.PurgeStats{Approvals: 1}) {
		t.Errorf("Purge(approvals) at +2h = %+v, %v; want 1 approval", st, err)
	}
	if _, err := s.GetApproval(ctx, "apr_old"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetApproval(apr_old) after purge = %v, want ErrNotFound", err)
	}
	if _, err := s.GetApproval(ctx, "apr_new"); err != nil {
		t.Errorf("GetApproval(apr_new) after purge = %v, want the approval", err)
	}
}

func testPurgeAudit(t *testing.T, s store.AuditLog) {
	for i := range 3 {
		if err := s.AppendAudit(ctx, store.AuditEntry{Time: t0.Add(time.Duration(i) * time.Hour), Tenant: "acme", Principal: "p", Decision: store.DecisionAllow, Outcome: store.OutcomeOK}); err != nil {
			t.Fatal(err)
		}
	}
	p := must[store.Purger](t, s)
	if st, err := p.Purge(ctx, store.PurgeRequest{Now: t0.Add(3 * time.Hour), Concerns: store.ConcernAudit}); err != nil || st.Audit != 0 {
		t.Errorf("Purge(audit) without AuditBefore = %+v, %v; want nothing removed", st, err)
	}
	st, err := p.Purge(ctx, store.PurgeRequest{Now: t0.Add(3 * time.Hour), AuditBefore: t0.Add(90 * time.Minute), Concerns: store.ConcernAudit})
	if err != nil || st != (store.PurgeStats{Audit: 2}) {
		t.Errorf("Purge(audit before +90m) = %+v, %v; want 2 entries", st, err)
	}
	left, err := s.QueryAudit(ctx, store.AuditQuery{})
	if err != nil || len(left) != 1 || !left[0].Time.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("audit after purge = %+v, %v; want the +2h entry only", left, err)
	}
}

// A purge limited to some concerns leaves the others alone: a store that
// keeps another gateway's audit log, say, loses none of it when this
// gateway purges its records there.
func testPurgeConcerns(t *testing.T, s store.Store) {
	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	if err := complete(s, slot(1), c.Token, `1`, t0); err != nil { // expires t0+retention
		t.Fatal(err)
	}
	if _, err := s.CreateApproval(ctx, approval("apr_1", "k1", t0)); err != nil { // expires t0+1h
		t.Fatal(err)
	}
	if err := s.AppendAudit(ctx, store.AuditEntry{Time: t0, Tenant: "acme", Principal: "alice", Decision: store.DecisionAllow, Outcome: store.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	l := store.RateLimit{Rate: 1, Burst: 1}
	if ok, _, err := s.TakeToken(ctx, "alice|pay", l, t0); err != nil || !ok {
		t.Fatalf("TakeToken of a new bucket = %v, %v; want ok", ok, err)
	}
	later := t0.Add(retention + time.Hour)
	st, err := s.Purge(ctx, store.PurgeRequest{Now: later, AuditBefore: later, Concerns: store.ConcernAudit})
	if err != nil || st != (store.PurgeStats{Audit: 1}) {
		t.Errorf("Purge(audit only) = %+v, %v; want the audit entry only", st, err)
	}
	if _, err := s.Get(ctx, "k1"); err != nil {
		t.Errorf("Get(k1) after an audit-only purge = %v, want the record", err)
	}
	if _, err := s.GetApproval(ctx, "apr_1"); err != nil {
		t.Errorf("GetApproval after an audit-only purge = %v, want the approval", err)
	}
	if err := s.AppendAudit(ctx, store.AuditEntry{Time: t0, Tenant: "acme", Principal: "bob", Decision: store.DecisionAllow, Outcome: store.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	st, err = s.Purge(ctx, store.PurgeRequest{Now: later, AuditBefore: later, Concerns: store.ConcernRecords | store.ConcernApprovals})
	if err != nil || st != (store.PurgeStats{Records: 1, Approvals: 1}) {
		t.Errorf("Purge(records, approvals) = %+v, %v; want 1 record and 1 approval, no audit", st, err)
	}
	if got, err := s.QueryAudit(ctx, store.AuditQuery{}); err != nil || len(got) != 1 || got[0].Principal != "bob" {
		t.Errorf("audit after a records-and-approvals purge = %+v, %v; want bob's entry kept", got, err)
	}
	// The bucket was kept too: it is still empty at t0 (a bucket purged and
	// seen afresh would be full).
	if ok, _, err := s.TakeToken(ctx, "alice|pay", l, t0); err != nil || ok {
		t.Errorf("TakeToken at t0 after purges of other concerns = %v, %v; want refused (the bucket is kept, empty)", ok, err)
	}
}

// testCompleteAudited checks a [store.AuditedRecorder]: a fenced
// completion writes neither the outcome nor the audit entry; a live one
// writes both; of concurrent completions of one claim exactly one lands,
// with its own entry and no other.
func testCompleteAudited(t *testing.T, s store.Store) {
	ar := s.(store.AuditedRecorder)
	completion := func(sl store.Slot, token uint64, value string) store.Completion {
		return store.Completion{Slot: sl, Token: token, Value: json.RawMessage(value), Now: t0.Add(time.Second), ExpiresAt: t0.Add(time.Second + retention)}
	}
	entry := func(key, reason string) store.AuditEntry {
		return store.AuditEntry{Time: t0, Tenant: "acme", Principal: "alice", SessionID: "s", Step: 1, Tool: "bank/transfer_funds",
			Key: key, Decision: store.DecisionAllow, Reason: reason, Outcome: store.OutcomeOK, Latency: time.Millisecond}
	}
	audited := func(key string) []store.AuditEntry {
		t.Helper()
		es, err := s.QueryAudit(ctx, store.AuditQuery{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		return es
	}

	c := claim(t, s, request(slot(1), "k1", t0), store.ClaimAcquired)
	if err := ar.CompleteAudited(ctx, completion(slot(1), c.Token+1, `{"late":true}`), entry("k1", "stale owner")); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("CompleteAudited with another token = %v, want ErrFenced", err)
	}
	if es := audited("k1"); len(es) != 0 {
		t.Errorf("a fenced CompleteAudited left audit entries %+v, want none", es)
	}
	claim(t, s, request(slot(1), "k1", t0.Add(time.Second)), store.ClaimInProgress)
	if err := ar.CompleteAudited(ctx, completion(slot(1), c.Token, `{"transaction_id":"tx-1"}`), entry("k1", "owner")); err != nil {
		t.Fatalf("CompleteAudited: %v", err)
	}
	if r := claim(t, s, request(slot(1), "k1", t0.Add(2*time.Second)), store.ClaimDone); string(r.Record.Value) != `{"transaction_id":"tx-1"}` {
		t.Errorf("record after CompleteAudited = %+v, want done with the value", r.Record)
	}
	if es := audited("k1"); len(es) != 1 || es[0].Reason != "owner" || es[0].Outcome != "ok" || es[0].Latency != time.Millisecond {
		t.Errorf("audit after CompleteAudited = %+v, want the one entry written with it", es)
	}

	c2 := claim(t, s, request(slot(2), "k2", t0), store.ClaimAcquired)
	errs := make([]error, 16)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			errs[i] = ar.CompleteAudited(ctx, completion(slot(2), c2.Token, fmt.Sprintf(`{"n":%d}`, i)), entry("k2", fmt.Sprintf("caller %d", i)))
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("callers %d and %d both completed one claim", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrFenced):
			t.Errorf("concurrent CompleteAudited %d = %v, want nil or ErrFenced", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no concurrent CompleteAudited succeeded")
	}
	if r := claim(t, s, request(slot(2), "k2", t0.Add(2*time.Second)), store.ClaimDone); string(r.Record.Value) != fmt.Sprintf(`{"n":%d}`, winner) {
		t.Errorf("record = %s, want the winner's {\"n\":%d}", r.Record.Value, winner)
	}
	if es := audited("k2"); len(es) != 1 || es[0].Reason != fmt.Sprintf("caller %d", winner) {
		t.Errorf("audit of concurrent completions = %+v, want only the winner's entry (caller %d)", es, winner)
	}
}
