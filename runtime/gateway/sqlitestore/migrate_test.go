package sqlitestore

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/sqliteutil"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// A database written before the slot held its principal (schema 2) is
// brought forward on open with every row usable: a done record replays for
// the principal that claimed it, another principal of the tenant gets a
// slot of its own, and a pending approval keeps its slot's principal.
func TestMigrationKeepsRecordsOfSchema2(t *testing.T) {
	ctx := context.Background()
	path, db := oldSchema(t, 2)
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if _, err := db.W.ExecContext(ctx, `INSERT INTO records(tenant, session_id, step, tool, principal, key, fingerprint,
		state, token, lease_expires, value, domain_error, reason, attempts, created, updated, expires)
		VALUES ('acme', 's', 1, 'bank/pay', 'alice', 'k-old', 'fp', 'done', 41, ?, CAST('{"ok":1}' AS BLOB), NULL, '', 1, ?, ?, ?)`,
		t0.Add(time.Minute).UnixNano(), t0.UnixNano(), t0.UnixNano(), t0.Add(24*time.Hour).UnixNano()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.ExecContext(ctx, `UPDATE counters SET value = 41 WHERE name = 'fencing'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.ExecContext(ctx, `INSERT INTO approvals(id, tenant, session_id, step, tool, key, fingerprint,
		requester, arguments, granted, approver, created, granted_at, expires, taint)
		VALUES ('apr_old', 'acme', 's', 2, 'bank/pay', 'k2', 'fp2', 'alice', CAST('{}' AS BLOB), 0, '', ?, ?, ?, '')`,
		t0.UnixNano(), int64(math.MinInt64), t0.Add(time.Hour).UnixNano()); err != nil {
		t.Fatal(err)
	}
	db.Close()

	st, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("Open of a schema-2 database: %v", err)
	}
	defer st.Close()
	alice := store.Slot{Tenant: "acme", Principal: "alice", SessionID: "s", Step: 1, Tool: "bank/pay"}
	req := store.ClaimRequest{Slot: alice, Principal: "alice", Key: "k-old", Fingerprint: "fp", Now: t0.Add(time.Second),
		LeaseExpires: t0.Add(time.Minute), ExpiresAt: t0.Add(time.Hour)}
	c, err := st.Claim(ctx, req)
	if err != nil || c.Status != store.ClaimDone || string(c.Record.Value) != `{"ok":1}` || c.Record.Slot != alice {
		t.Fatalf("Claim of the migrated record = %+v, %v; want done with {\"ok\":1} in %+v", c, err, alice)
	}
	bob := alice
	bob.Principal = "bob"
	c, err = st.Claim(ctx, store.ClaimRequest{Slot: bob, Principal: "bob", Key: "k-bob", Fingerprint: "fp", Now: t0.Add(time.Second),
		LeaseExpires: t0.Add(time.Minute), ExpiresAt: t0.Add(time.Hour)})
	if err != nil || c.Status != store.ClaimAcquired || c.Token <= 41 {
		t.Errorf("bob's claim of the same session step = %+v, %v; want acquired with a token above 41", c, err)
	}
	a, err := st.GetApproval(ctx, "apr_old")
	if err != nil || a.Slot.Principal != "alice" || a.Requester != "alice" {
		t.Errorf("migrated approval = %+v, %v; want its slot's principal alice", a, err)
	}
	if _, err := st.Get(ctx, "k-missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(missing) = %v, want ErrNotFound", err)
	}
}

// A database with audit entries written before the chain (schema 3) is
// brought forward with the anchor past them ([storetest.RunLegacyAudit]).
func TestMigrationAnchorsOldAudit(t *testing.T) {
	ctx := context.Background()
	path, db := oldSchema(t, 3)
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		if _, err := db.W.ExecContext(ctx, `INSERT INTO audit(at, tenant, principal, session_id, step, tool, key, decision, reason,
			outcome, approval_id, latency) VALUES (?, 'acme', 'alice', 's', ?, 'bank/pay', '', 'allow', '', 'ok', '', 0)`,
			t0.Add(-time.Duration(i+1)*time.Minute).UnixNano(), i); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	st, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.RunLegacyAudit(t, st, 3, t0)
}

// oldSchema creates a database of schema n (its first n migrations) in a
// temporary folder and returns its path and the open database.
func oldSchema(t *testing.T, n int) (string, *sqliteutil.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gateway.db")
	db, err := sqliteutil.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqliteutil.Migrate(context.Background(), db.W, migrations[:n]); err != nil {
		t.Fatal(err)
	}
	return path, db
}

// TestOpenReadOnly: a read-only Open migrates nothing (a file of an older
// schema is refused with ErrOlderSchema and keeps its version), reads a
// file of this schema, and fails every write.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	path, db := oldSchema(t, len(migrations)-1)
	db.Close()
	if st, err := Open(ctx, path, &Options{ReadOnly: true}); !errors.Is(err, ErrOlderSchema) {
		if err == nil {
			st.Close()
		}
		t.Fatalf("read-only Open of schema %d = %v; want ErrOlderSchema", len(migrations)-1, err)
	}
	db, err := sqliteutil.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var version int
	if err := db.R.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil || version != len(migrations)-1 {
		t.Errorf("schema version after the read-only Open = %d, %v; want %d", version, err, len(migrations)-1)
	}
	db.Close()
	st, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendAudit(ctx, store.AuditEntry{Time: time.Unix(1, 0), Tenant: "acme", Tool: "bank/pay", Decision: "allow"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	ro, err := Open(ctx, path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open of this schema: %v", err)
	}
	defer ro.Close()
	if e, err := ro.LastAudit(ctx); err != nil || e.Seq != 1 {
		t.Errorf("LastAudit = %+v, %v; want entry 1", e, err)
	}
	if err := ro.AppendAudit(ctx, store.AuditEntry{Time: time.Unix(2, 0), Tenant: "acme", Tool: "bank/pay", Decision: "allow"}); err == nil {
		t.Error("AppendAudit on a read-only store succeeded")
	}
}
