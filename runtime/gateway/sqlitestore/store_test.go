package sqlitestore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
	"github.com/toolgate/toolgate/tools"
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
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, filepath.Join(t.TempDir(), "gateway.db"))
	})
}

// An acknowledged outcome is in the file: a store opened afresh on it
// replays the result, keeps fencing tokens growing and keeps the audit log.
// A claim SQLite committed but whose answer was lost never ran; the retry
// runs it at once.
func TestLostClaimReply(t *testing.T) {
	storetest.RunLostClaimReply(t, func(t *testing.T) store.Store {
		return open(t, filepath.Join(t.TempDir(), "gateway.db"))
	})
}

// Text an audit entry cannot keep as it is (too long, not UTF-8) is cut
// at a character's start or replaced: every call gets its entry, valid
// UTF-8, and the chain verifies.
func TestAuditText(t *testing.T) {
	storetest.RunAuditText(t, func(t *testing.T) store.Store { return open(t, filepath.Join(t.TempDir(), "gateway.db")) })
}

func TestReopenKeepsState(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gateway.db")
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	slot := store.Slot{Tenant: "acme", Principal: "alice", SessionID: "s", Step: 1, Tool: "bank/transfer_funds"}
	req := store.ClaimRequest{Slot: slot, Principal: "alice", Key: "k1", Fingerprint: "f1", Now: t0,
		LeaseExpires: t0.Add(time.Minute), ExpiresAt: t0.Add(24 * time.Hour)}

	st, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Claim(ctx, req)
	if err != nil || c.Status != store.ClaimAcquired {
		t.Fatalf("Claim = %+v, %v, want acquired", c, err)
	}
	if err := st.Complete(ctx, store.Completion{Slot: slot, Token: c.Token, Value: json.RawMessage(`{"ok":1}`),
		Now: t0, ExpiresAt: t0.Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendAudit(ctx, store.AuditEntry{Time: t0, Tenant: "acme", Principal: "alice", Tool: slot.Tool,
		Key: "k1", Decision: "allow", Outcome: "success", Latency: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st = open(t, path)
	again, err := st.Claim(ctx, req)
	if err != nil || again.Status != store.ClaimDone || string(again.Record.Value) != `{"ok":1}` {
		t.Fatalf("Claim after reopen = %+v, %v, want done with {\"ok\":1}", again, err)
	}
	other := req
	other.Slot.Step, other.Key = 2, "k2"
	c2, err := st.Claim(ctx, other)
	if err != nil || c2.Token <= c.Token {
		t.Errorf("token after reopen = %d, %v, want > %d", c2.Token, err, c.Token)
	}
	audit, err := st.QueryAudit(ctx, store.AuditQuery{Key: "k1"})
	if err != nil || len(audit) != 1 || audit[0].Latency != time.Millisecond || !audit[0].Time.Equal(t0) {
		t.Errorf("QueryAudit after reopen = %+v, %v, want the one entry", audit, err)
	}
}

// Through the gateway, a completed call's audit entry is written with its
// completion ([store.AuditedRecorder]): exactly one entry per call, the
// one the answer describes, next to the done record; a replay adds its own.
func TestExecuteAuditsWithTheCompletion(t *testing.T) {
	ctx := context.Background()
	st := open(t, filepath.Join(t.TempDir(), "gateway.db"))
	reg := tools.NewRegistry()
	if err := reg.Add(tools.Tool{ID: "bank/pay", Card: tools.Card{Name: "pay", Scopes: []string{"payments:write"}},
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"paid":true}`), nil
		}}); err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(reg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := gateway.Call{Principal: tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"payments:write"}},
		SessionID: "s", Step: 1, Tool: "bank/pay", Arguments: json.RawMessage(`{}`)}
	res, err := g.Execute(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Get(ctx, res.IdempotencyKey)
	if err != nil || rec.State != store.StateDone || string(rec.Value) != `{"paid":true}` {
		t.Fatalf("record = %+v, %v; want done with the value", rec, err)
	}
	audit, err := st.QueryAudit(ctx, store.AuditQuery{Key: res.IdempotencyKey})
	if err != nil || len(audit) != 1 || audit[0].Outcome != "ok" || audit[0].Decision != "allow" || audit[0].Tool != "bank/pay" {
		t.Fatalf("audit = %+v, %v; want one allowed ok entry", audit, err)
	}
	if _, err := g.Execute(ctx, call); err != nil {
		t.Fatal(err)
	}
	audit, err = st.QueryAudit(ctx, store.AuditQuery{Key: res.IdempotencyKey})
	if err != nil || len(audit) != 2 || audit[1].Outcome != "replayed" {
		t.Errorf("audit after a replay = %+v, %v; want the call's entry and the replay's", audit, err)
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	_, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"), &sqlitestore.Options{MaxBatch: -1})
	if !errors.Is(err, store.ErrInvalidOptions) {
		t.Errorf("Open(MaxBatch: -1) = %v, want ErrInvalidOptions", err)
	}
}

// A SQLite file of another program (here: a table named like one of ours)
// is refused with an error that names the file, before anything is written.
func TestOpenRefusesForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE records(x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlitestore.Open(context.Background(), path, nil)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "another program") {
		t.Errorf("Open of another program's SQLite file = %v, want an error naming %s as another program's", err, path)
	}
}

// Two stores on one file stand for two processes: the write lock and the
// per-batch fencing counter keep tokens unique and growing across them.
func TestTwoStoresShareOneFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gateway.db")
	a, b := open(t, path), open(t, path)
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	const perStore = 50
	tokens := make(chan uint64, 2*perStore)
	var wg sync.WaitGroup
	for si, st := range []*sqlitestore.Store{a, b} {
		t.Run(fmt.Sprint(si), func(t *testing.T) {
			for i := range perStore {
				wg.Add(1)
				go func() {
					defer wg.Done()
					slot := store.Slot{Tenant: "acme", Principal: "p", SessionID: fmt.Sprintf("s%d", si), Step: i, Tool: "bank/pay"}
					c, err := st.Claim(ctx, store.ClaimRequest{Slot: slot, Principal: "p", Key: fmt.Sprintf("k%d-%d", si, i),
						Fingerprint: "f", Now: t0, LeaseExpires: t0.Add(time.Minute), ExpiresAt: t0.Add(time.Hour)})
					if err != nil || c.Status != store.ClaimAcquired {
						t.Errorf("Claim = %+v, %v", c, err)
						return
					}
					tokens <- c.Token
				}()
			}
		})
	}
	wg.Wait()
	close(tokens)
	seen := map[uint64]bool{}
	for tok := range tokens {
		if seen[tok] {
			t.Errorf("token %d handed out twice", tok)
		}
		seen[tok] = true
	}
	// A slot released through one store and claimed through the other gets a larger token.
	slot := store.Slot{Tenant: "acme", Principal: "p", SessionID: "shared", Step: 1, Tool: "bank/pay"}
	req := store.ClaimRequest{Slot: slot, Principal: "p", Key: "k", Fingerprint: "f", Now: t0,
		LeaseExpires: t0.Add(time.Minute), ExpiresAt: t0.Add(time.Hour)}
	c1, err := a.Claim(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, slot, c1.Token, t0); err != nil {
		t.Fatal(err)
	}
	c2, err := b.Claim(ctx, req)
	if err != nil || c2.Status != store.ClaimAcquired || c2.Token <= c1.Token {
		t.Errorf("claim through the other store = %+v, %v; want acquired with a token above %d", c2, err, c1.Token)
	}
	if err := a.Complete(ctx, store.Completion{Slot: slot, Token: c1.Token, Value: json.RawMessage(`1`), Now: t0,
		ExpiresAt: t0.Add(time.Hour)}); !errors.Is(err, store.ErrFenced) {
		t.Errorf("late completion with the released token = %v, want ErrFenced", err)
	}
}
