package storetest

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// verifyChain verifies c and fails t unless it holds want entries (want < 0:
// any number) in one unbroken chain.
func verifyChain(t *testing.T, c store.AuditChain, pub ed25519.PublicKey, want int) auditchain.Report {
	t.Helper()
	rep, err := auditchain.Verify(ctx, c, pub)
	if err != nil {
		t.Fatalf("auditchain.Verify: %v", err)
	}
	if rep.Break != nil {
		t.Fatalf("auditchain.Verify: %v", rep.Break)
	}
	if want >= 0 && rep.Entries != want {
		t.Fatalf("auditchain.Verify checked %d entries, want %d", rep.Entries, want)
	}
	return rep
}

// testAuditChain: the entries get consecutive sequence numbers, each links
// to the one before, the hashes match the content, QueryAudit returns the
// chain fields too, and a signed checkpoint verifies.
func testAuditChain(t *testing.T, s store.AuditLog) {
	c := must[store.AuditChain](t, s)
	verifyChain(t, c, nil, 0)
	if _, err := c.LastAudit(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LastAudit of an empty log = %v, want ErrNotFound", err)
	}
	for i := range 5 {
		// Times out of order: the chain's order is the append order.
		e := store.AuditEntry{Time: t0.Add(time.Duration(5-i) * time.Second), Tenant: "acme", Principal: "alice",
			Tool: "bank/pay", Key: fmt.Sprintf("k%d", i), Decision: store.DecisionAllow, Outcome: store.OutcomeOK, Reason: "ünïcode \t \"quoted\"",
			Seq: 99, Prev: "forged", Hash: "forged"} // ignored: the store assigns them
		if err := s.AppendAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.ReadAuditChain(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("ReadAuditChain returned %d entries, want 5", len(got))
	}
	a, err := c.AuditAnchor(ctx)
	if err != nil || a.Seq != 0 || a.Hash != auditchain.Genesis {
		t.Fatalf("AuditAnchor of a fresh store = %+v, %v; want {0 genesis}", a, err)
	}
	for i, e := range got {
		want := auditchain.Chain(e, a.Seq+uint64(i)+1, a.Hash)
		if i > 0 {
			want = auditchain.Chain(e, got[i-1].Seq+1, got[i-1].Hash)
		}
		if e.Seq != want.Seq || e.Prev != want.Prev || e.Hash != want.Hash || e.V != auditchain.Version || e.Key != fmt.Sprintf("k%d", i) {
			t.Errorf("entry %d = seq %d prev %.8s hash %.8s v %d key %s; want seq %d prev %.8s hash %.8s", i, e.Seq, e.Prev, e.Hash, e.V, e.Key, want.Seq, want.Prev, want.Hash)
		}
	}
	if last, err := c.LastAudit(ctx); err != nil || last.Seq != got[4].Seq || last.Hash != got[4].Hash {
		t.Errorf("LastAudit = seq %d hash %.8s, %v; want entry %d", last.Seq, last.Hash, err, got[4].Seq)
	}
	page, err := c.ReadAuditChain(ctx, got[1].Seq, 2)
	if err != nil || len(page) != 2 || page[0].Seq != got[2].Seq {
		t.Errorf("ReadAuditChain(after %d, limit 2) = %d entries (%v), want entries %d and %d", got[1].Seq, len(page), err, got[2].Seq, got[3].Seq)
	}
	q, err := s.QueryAudit(ctx, store.AuditQuery{Key: "k3"})
	if err != nil || len(q) != 1 || q[0].Hash != got[3].Hash || q[0].Seq != got[3].Seq {
		t.Errorf("QueryAudit(k3) = %+v, %v; want the entry with its chain fields", q, err)
	}
	verifyChain(t, c, nil, 5)

	pub, key, _ := ed25519.GenerateKey(nil)
	cp, err := auditchain.Sign(ctx, c, key, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if cp.Seq != got[4].Seq || cp.Hash != got[4].Hash {
		t.Errorf("checkpoint = %+v, want it at the last entry %d", cp, got[4].Seq)
	}
	cps, err := c.AuditCheckpoints(ctx)
	if err != nil || len(cps) != 1 || cps[0].Sig != cp.Sig || !cps[0].Time.Equal(cp.Time) || cps[0].KeyID != cp.KeyID {
		t.Fatalf("AuditCheckpoints = %+v, %v; want [%+v]", cps, err, cp)
	}
	if rep := verifyChain(t, c, pub, 5); rep.Signed != 1 || rep.LastSigned != cp.Seq {
		t.Errorf("report = %+v, want 1 signed checkpoint at %d", rep, cp.Seq)
	}
	other, _, _ := ed25519.GenerateKey(nil)
	if rep, err := auditchain.Verify(ctx, c, other); err != nil || rep.Break == nil {
		t.Errorf("auditchain.Verify with another public key = %+v, %v; want a break at the checkpoint", rep, err)
	}
}

// testAuditChainConcurrent: entries appended concurrently form one chain
// with no gap and no repeat.
func testAuditChainConcurrent(t *testing.T, s store.AuditLog) {
	c := must[store.AuditChain](t, s)
	const writers, each = 16, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := s.AppendAudit(ctx, store.AuditEntry{Time: t0, Tenant: "acme", Principal: fmt.Sprintf("p%d", w),
					Tool: "bank/pay", Key: fmt.Sprintf("k%d-%d", w, i), Decision: store.DecisionAllow, Outcome: store.OutcomeOK}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	verifyChain(t, c, nil, writers*each)
}

// testPurgeAuditChain: the retention purge removes the oldest entries in
// the chain's order, keeps an entry older than the bound that follows a
// newer one, moves the anchor and drops the checkpoints before it, and
// the rest still verifies, also after more appends.
func testPurgeAuditChain(t *testing.T, s store.AuditLog) {
	c, p := must[store.AuditChain](t, s), must[store.Purger](t, s)
	// Hours 0, 1, 3, 2, 4: the entry of hour 2 follows the one of hour 3.
	for _, h := range []int{0, 1, 3, 2, 4} {
		if err := s.AppendAudit(ctx, store.AuditEntry{Time: t0.Add(time.Duration(h) * time.Hour), Tenant: "acme", Principal: "p",
			Tool: "t", Decision: store.DecisionAllow, Outcome: store.OutcomeOK, Key: fmt.Sprintf("h%d", h)}); err != nil {
			t.Fatal(err)
		}
	}
	_, key, _ := ed25519.GenerateKey(nil)
	pub := key.Public().(ed25519.PublicKey)
	first, err := c.ReadAuditChain(ctx, 0, 10)
	if err != nil || len(first) != 5 {
		t.Fatalf("ReadAuditChain = %d entries, %v", len(first), err)
	}
	if _, err := auditchain.Sign(ctx, c, key, t0); err != nil {
		t.Fatal(err)
	}
	// A checkpoint at the second entry, which the purge removes.
	early := store.AuditCheckpoint{Seq: first[1].Seq, Hash: first[1].Hash, Time: t0, KeyID: auditchain.KeyID(pub)}
	early.Sig = sign(key, early)
	if err := c.AddAuditCheckpoint(ctx, early); err != nil {
		t.Fatal(err)
	}
	st, err := p.Purge(ctx, store.PurgeRequest{Now: t0.Add(5 * time.Hour), AuditBefore: t0.Add(150 * time.Minute), Concerns: store.ConcernAudit})
	if err != nil || st.Audit != 2 {
		t.Fatalf("Purge(before hour 2.5) = %+v, %v; want the 2 entries before the hour-3 one removed", st, err)
	}
	a, err := c.AuditAnchor(ctx)
	if err != nil || a.Seq != first[1].Seq || a.Hash != first[1].Hash {
		t.Fatalf("anchor after the purge = %+v, %v; want entry %d's", a, err, first[1].Seq)
	}
	cps, err := c.AuditCheckpoints(ctx)
	if err != nil || len(cps) != 1 || cps[0].Seq != first[4].Seq {
		t.Errorf("checkpoints after the purge = %+v, %v; want only the one at %d", cps, err, first[4].Seq)
	}
	verifyChain(t, c, pub, 3)
	if err := s.AppendAudit(ctx, store.AuditEntry{Time: t0.Add(6 * time.Hour), Tenant: "acme", Principal: "p", Tool: "t", Decision: store.DecisionAllow, Outcome: store.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	verifyChain(t, c, pub, 4)
	// Everything goes; the anchor is the last entry, and the next append
	// follows it.
	st, err = p.Purge(ctx, store.PurgeRequest{Now: t0.Add(7 * time.Hour), AuditBefore: t0.Add(7 * time.Hour), Concerns: store.ConcernAudit})
	if err != nil || st.Audit != 4 {
		t.Fatalf("Purge(all) = %+v, %v; want 4 removed", st, err)
	}
	verifyChain(t, c, pub, 0)
	if _, err := c.LastAudit(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LastAudit after purging every entry = %v, want ErrNotFound", err)
	}
	if err := s.AppendAudit(ctx, store.AuditEntry{Time: t0.Add(8 * time.Hour), Tenant: "acme", Principal: "p", Tool: "t", Decision: store.DecisionAllow, Outcome: store.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	if rep := verifyChain(t, c, pub, 1); rep.First != first[4].Seq+2 {
		t.Errorf("the entry after a full purge has seq %d, want %d (numbers are never reused)", rep.First, first[4].Seq+2)
	}
}

func sign(key ed25519.PrivateKey, cp store.AuditCheckpoint) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, auditchain.CheckpointMessage(cp.Seq, cp.Hash, cp.Time)))
}

// RunAuditShared checks that the audit entries appended concurrently
// through n handles to one store (n processes) form one chain.
func RunAuditShared(t *testing.T, open Handles, n int) {
	t.Helper()
	stores := open(t, n)
	const each = 40
	var wg sync.WaitGroup
	for i, st := range stores {
		for w := range 4 {
			wg.Go(func() {
				for j := range each / 4 {
					if err := st.AppendAudit(ctx, store.AuditEntry{Time: t0.Add(time.Duration(j) * time.Millisecond), Tenant: "acme",
						Principal: fmt.Sprintf("h%d", i), Tool: "t", Key: fmt.Sprintf("%d-%d-%d", i, w, j), Decision: store.DecisionAllow, Outcome: store.OutcomeOK}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	for i, st := range stores {
		t.Run(fmt.Sprintf("handle%d", i), func(t *testing.T) {
			verifyChain(t, must[store.AuditChain](t, st), nil, n*each)
		})
	}
}

// RunLegacyAudit checks a store opened over audit entries written before
// it kept a chain: legacy of them, at times before t0 (a store created by
// an earlier toolgate). The anchor is past them, new entries follow them
// in sequence and verify, and the retention purge removes them by time
// without moving the anchor back.
func RunLegacyAudit(t *testing.T, st store.Store, legacy int, t0 time.Time) {
	t.Helper()
	c := must[store.AuditChain](t, st)
	for i := range 2 {
		if err := st.AppendAudit(ctx, store.AuditEntry{Time: t0.Add(time.Duration(i)), Tenant: "acme", Principal: "bob", Tool: "t",
			Decision: store.DecisionAllow, Outcome: store.OutcomeOK}); err != nil {
			t.Fatal(err)
		}
	}
	if a, err := c.AuditAnchor(ctx); err != nil || a.Seq != uint64(legacy) || a.Hash != auditchain.Genesis {
		t.Fatalf("anchor over %d entries from before the chain = %+v, %v; want {%d genesis}", legacy, a, err, legacy)
	}
	if rep := verifyChain(t, c, nil, 2); rep.First != uint64(legacy)+1 {
		t.Errorf("the first chained entry is %d, want %d", rep.First, legacy+1)
	}
	st2, err := st.Purge(ctx, store.PurgeRequest{Now: t0.Add(time.Hour), AuditBefore: t0, Concerns: store.ConcernAudit})
	if err != nil || st2.Audit != legacy {
		t.Fatalf("Purge(before t0) = %+v, %v; want the %d old entries removed", st2, err, legacy)
	}
	if rep := verifyChain(t, c, nil, 2); rep.Anchor.Seq != uint64(legacy) {
		t.Errorf("anchor after purging the old entries = %+v, want %d", rep.Anchor, legacy)
	}
	if left, err := st.QueryAudit(ctx, store.AuditQuery{}); err != nil || len(left) != 2 {
		t.Errorf("QueryAudit after the purge = %d entries, %v; want the 2 chained ones", len(left), err)
	}
}
