package sqlitestore_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

func open(t *testing.T, path string) *sqlitestore.Store {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) gateway.Store {
		return open(t, filepath.Join(t.TempDir(), "gateway.db"))
	})
}

// An acknowledged outcome is in the file: a store opened afresh on it
// replays the result, keeps fencing tokens growing and keeps the audit log.
func TestReopenKeepsState(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gateway.db")
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	slot := gateway.Slot{Tenant: "acme", SessionID: "s", Step: 1, Tool: "bank/transfer_funds"}
	req := gateway.ClaimRequest{Slot: slot, Principal: "alice", Key: "k1", Fingerprint: "f1", Now: t0,
		LeaseExpires: t0.Add(time.Minute), ExpiresAt: t0.Add(24 * time.Hour)}

	st, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Claim(ctx, req)
	if err != nil || c.Status != gateway.ClaimAcquired {
		t.Fatalf("Claim = %+v, %v, want acquired", c, err)
	}
	if err := st.Complete(ctx, gateway.Completion{Slot: slot, Token: c.Token, Value: json.RawMessage(`{"ok":1}`),
		Now: t0, ExpiresAt: t0.Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendAudit(ctx, gateway.AuditEntry{Time: t0, Tenant: "acme", Principal: "alice", Tool: slot.Tool,
		Key: "k1", Decision: "allow", Outcome: "success", Latency: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st = open(t, path)
	again, err := st.Claim(ctx, req)
	if err != nil || again.Status != gateway.ClaimDone || string(again.Record.Value) != `{"ok":1}` {
		t.Fatalf("Claim after reopen = %+v, %v, want done with {\"ok\":1}", again, err)
	}
	other := req
	other.Slot.Step, other.Key = 2, "k2"
	c2, err := st.Claim(ctx, other)
	if err != nil || c2.Token <= c.Token {
		t.Errorf("token after reopen = %d, %v, want > %d", c2.Token, err, c.Token)
	}
	audit, err := st.QueryAudit(ctx, gateway.AuditQuery{Key: "k1"})
	if err != nil || len(audit) != 1 || audit[0].Latency != time.Millisecond || !audit[0].Time.Equal(t0) {
		t.Errorf("QueryAudit after reopen = %+v, %v, want the one entry", audit, err)
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	_, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"), &sqlitestore.Options{MaxBatch: -1})
	if !errors.Is(err, gateway.ErrInvalidOptions) {
		t.Errorf("Open(MaxBatch: -1) = %v, want ErrInvalidOptions", err)
	}
}
