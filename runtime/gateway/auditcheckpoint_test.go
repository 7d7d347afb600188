package gateway_test

import (
	"context"
	"crypto/ed25519"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// TestAuditCheckpointer: Tick signs nothing on an empty log, the first
// entry at once, then only once the chain has grown by Every entries; the
// checkpoints verify with the public key.
func TestAuditCheckpointer(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	pub, key, _ := ed25519.GenerateKey(nil)
	clock := newFakeClock()
	cp := &auditchain.Checkpointer{Chain: st, Key: key, Every: 3, Clock: clock}
	appendN := func(n int) {
		for range n {
			if err := st.AppendAudit(ctx, store.AuditEntry{Time: clock.Now(), Tenant: "acme", Principal: "p", Tool: "t", Decision: "allow", Outcome: "ok"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := func(step string, seq uint64) {
		t.Helper()
		got, err := cp.Tick(ctx)
		switch {
		case err != nil:
			t.Fatalf("%s: Tick: %v", step, err)
		case seq == 0 && got != nil:
			t.Errorf("%s: Tick signed entry %d, want no checkpoint", step, got.Seq)
		case seq != 0 && (got == nil || got.Seq != seq):
			t.Errorf("%s: Tick = %+v, want a checkpoint at %d", step, got, seq)
		}
	}
	want("empty log", 0)
	appendN(1)
	want("first entry", 1)
	appendN(2)
	want("two more", 0)
	appendN(1)
	want("three more", 4)
	want("nothing new", 0)
	rep, err := auditchain.Verify(ctx, st, pub)
	if err != nil || rep.Break != nil || rep.Signed != 2 || rep.LastSigned != 4 {
		t.Errorf("auditchain.Verify = %+v (%v), %v; want 2 signed checkpoints, the last at 4", rep, rep.Break, err)
	}
}
