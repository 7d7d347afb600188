package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/testservices"
	"github.com/toolgate/toolgate/runtime/gateway/redisstore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

func TestMain(m *testing.M) { os.Exit(testservices.Main(m)) }

var prefixes atomic.Int64

// freshPrefix returns the shared test server's URL and a key prefix no
// other test uses, "toolgate-test:TAG:PID:N:".
func freshPrefix(tb testing.TB, tag string) (url, prefix string) {
	return testservices.RedisURL(tb), fmt.Sprintf("toolgate-test:%s:%d:%d:", tag, os.Getpid(), prefixes.Add(1))
}

// open returns a store under a fresh prefix, closed when the test ends.
func open(t *testing.T) *redisstore.Store {
	s, _, _ := openBehind(t, "store")
	return s
}

// openBehind is open for a test that looks behind the store: it also
// returns the store's prefix and a plain client of its server, both
// closed when the test ends.
func openBehind(t *testing.T, tag string) (*redisstore.Store, string, *redis.Client) {
	t.Helper()
	url, prefix := freshPrefix(t, tag)
	s, err := redisstore.Open(context.Background(), url, &redisstore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(o)
	t.Cleanup(func() { rdb.Close() })
	return s, prefix, rdb
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
}

// A claim Redis applied but whose answer was lost never ran; the retry
// runs it at once.
func TestLostClaimReply(t *testing.T) {
	storetest.RunLostClaimReply(t, func(t *testing.T) store.Store { return open(t) })
}

// Text an audit entry cannot keep as it is (too long, not UTF-8) is cut
// at a character's start or replaced: every call gets its entry, valid
// UTF-8, and the chain verifies.
func TestAuditText(t *testing.T) {
	storetest.RunAuditText(t, func(t *testing.T) store.Store { return open(t) })
}

// A Redis that loses its data (restarted without persistence) loses the
// fencing counter too; tokens handed out afterwards must still exceed the
// old ones, so an owner from before the loss cannot complete a new claim.
func TestTokensGrowAcrossDataLoss(t *testing.T) {
	ctx := context.Background()
	s, prefix, rdb := openBehind(t, "loss")
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	sl := store.Slot{Tenant: "acme", Principal: "alice", SessionID: "s", Step: 1, Tool: "bank/pay"}
	req := store.ClaimRequest{Slot: sl, Principal: "alice", Key: "k1", Fingerprint: "fp", Now: t0,
		LeaseExpires: t0.Add(time.Minute), ExpiresAt: t0.Add(time.Hour), TakeOver: true}
	c1, err := s.Claim(ctx, req)
	if err != nil || c1.Status != store.ClaimAcquired {
		t.Fatalf("Claim = %+v, %v; want acquired", c1, err)
	}

	// The data loss: every key of the store is gone.
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("Keys(%s*) = %v, %v; want the store's keys", prefix, keys, err)
	}
	if err := rdb.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}

	req.Now = t0.Add(time.Second)
	c2, err := s.Claim(ctx, req)
	if err != nil || c2.Status != store.ClaimAcquired {
		t.Fatalf("Claim after the loss = %+v, %v; want acquired", c2, err)
	}
	if c2.Token <= c1.Token {
		t.Errorf("token after the data loss = %d, want > %d (the token before it)", c2.Token, c1.Token)
	}
	err = s.Complete(ctx, store.Completion{Slot: sl, Token: c1.Token, Value: json.RawMessage(`"stale"`), Now: req.Now, ExpiresAt: t0.Add(time.Hour)})
	if !errors.Is(err, store.ErrFenced) {
		t.Errorf("Complete by the owner from before the loss = %v, want ErrFenced", err)
	}
}

// A record written before the slot held its principal (key rec:<tenant>
// \x1f<session>\x1f<step>\x1f<tool>) stays usable: its principal's next claim
// of the slot replays it, Get finds it, and another principal of the
// tenant gets a slot of its own.
func TestLegacyRecordMovesToItsPrincipalsSlot(t *testing.T) {
	ctx := context.Background()
	s, prefix, rdb := openBehind(t, "legacy")
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	t20 := func(t time.Time) string { return fmt.Sprintf("%020d", t.UnixNano()) }
	legacy := prefix + "rec:acme\x1fs\x1f1\x1fbank/pay"
	if err := rdb.HSet(ctx, legacy, "tenant", "acme", "session", "s", "step", "1", "tool", "bank/pay", "principal", "alice",
		"key", "k-old", "fp", "fp", "state", "done", "token", "41", "lease", t20(t0.Add(time.Minute)), "reason", "",
		"attempts", "1", "created", t20(t0), "updated", t20(t0), "expires", t20(t0.Add(time.Hour)), "value", `{"ok":1}`).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, prefix+"key:k-old", legacy, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, prefix+"recs", redis.Z{Score: float64(t0.Add(time.Hour).UnixMilli()), Member: legacy}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, prefix+"fence", "41", 0).Err(); err != nil {
		t.Fatal(err)
	}

	bob := store.Slot{Tenant: "acme", Principal: "bob", SessionID: "s", Step: 1, Tool: "bank/pay"}
	c, err := s.Claim(ctx, store.ClaimRequest{Slot: bob, Principal: "bob", Key: "k-bob", Fingerprint: "fp",
		Now: t0.Add(time.Second), LeaseExpires: t0.Add(time.Minute), ExpiresAt: t0.Add(time.Hour)})
	if err != nil || c.Status != store.ClaimAcquired || c.Token <= 41 {
		t.Errorf("bob's claim of the same session step = %+v, %v; want acquired with a token above 41", c, err)
	}
	alice := bob
	alice.Principal = "alice"
	c, err = s.Claim(ctx, store.ClaimRequest{Slot: alice, Principal: "alice", Key: "k-old", Fingerprint: "fp",
		Now: t0.Add(2 * time.Second), LeaseExpires: t0.Add(time.Minute), ExpiresAt: t0.Add(time.Hour)})
	if err != nil || c.Status != store.ClaimDone || string(c.Record.Value) != `{"ok":1}` || c.Record.Slot != alice {
		t.Fatalf("alice's claim of her legacy record = %+v, %v; want done with {\"ok\":1} in %+v", c, err, alice)
	}
	r, err := s.Get(ctx, "k-old")
	if err != nil || r.Slot != alice || string(r.Value) != `{"ok":1}` {
		t.Errorf("Get(k-old) after the move = %+v, %v; want alice's record", r, err)
	}
	if n, err := rdb.Exists(ctx, legacy).Result(); err != nil || n != 0 {
		t.Errorf("legacy key still exists (%d, %v) after the move", n, err)
	}
	st, err := s.Purge(ctx, store.PurgeRequest{Now: t0.Add(2 * time.Hour)})
	if err != nil || st.Records != 2 {
		t.Errorf("Purge after the retention = %+v, %v; want 2 records (bob's and the moved one)", st, err)
	}
}

// Scripts go out in shared pipelines of EVALSHA. A server that forgot the
// scripts (restarted, or SCRIPT FLUSH) answers NOSCRIPT; each such script
// is sent again with its body, so every concurrent caller still gets its
// answer, and each slot is claimed once.
func TestPipelineSurvivesScriptFlush(t *testing.T) {
	ctx := context.Background()
	s, _, rdb := openBehind(t, "flush")
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	req := func(i int) store.ClaimRequest {
		sl := store.Slot{Tenant: "acme", Principal: "alice", SessionID: "flush", Step: i, Tool: "bank/pay"}
		return store.ClaimRequest{Slot: sl, Principal: "alice", Key: fmt.Sprintf("k%d", i), Fingerprint: "fp", Now: t0,
			LeaseExpires: t0.Add(time.Minute), ExpiresAt: t0.Add(time.Hour)}
	}
	if c, err := s.Claim(ctx, req(0)); err != nil || c.Status != store.ClaimAcquired {
		t.Fatalf("Claim = %+v, %v; want acquired", c, err)
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	const n = 64
	errs := make(chan error, 2*n)
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			for range 2 { // the second claim of each slot finds it in progress
				c, err := s.Claim(ctx, req(i))
				if err != nil {
					errs <- err
				} else if c.Status != store.ClaimAcquired && c.Status != store.ClaimInProgress {
					errs <- fmt.Errorf("claim %d status %d", i, c.Status)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := 1; i <= n; i++ {
		r, err := s.Get(ctx, fmt.Sprintf("k%d", i))
		if err != nil || r.Attempts != 1 || r.State != store.StateInProgress {
			t.Errorf("Get(k%d) = %+v, %v; want one in-progress claim", i, r, err)
		}
	}
	s.Close()
	if _, err := s.Claim(ctx, req(n+1)); err == nil {
		t.Error("Claim on a closed store = nil error, want one")
	}
}

// Audit entries written before the store kept a chain (members of the time
// set only, numbered by the audit:seq counter) stay behind the anchor
// ([storetest.RunLegacyAudit]).
func TestLegacyAuditBehindTheAnchor(t *testing.T) {
	st, prefix, rdb := openBehind(t, "legacy-audit")
	ctx := context.Background()
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		at := t0.Add(-time.Duration(i+1) * time.Minute)
		js := fmt.Sprintf(`{"time":%q,"tenant":"acme","principal":"alice","session_id":"s","step":%d,"tool":"bank/pay","decision":"allow","outcome":"ok","latency":0}`,
			at.Format(time.RFC3339Nano), i)
		if err := rdb.ZAdd(ctx, prefix+"audit", redis.Z{Member: fmt.Sprintf("%020d:%020d:%s", at.UnixNano(), i+1, js)}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.Set(ctx, prefix+"audit:seq", 3, 0).Err(); err != nil {
		t.Fatal(err)
	}
	storetest.RunLegacyAudit(t, st, 3, t0)
}
