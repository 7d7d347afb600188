package discovery_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// openSQLLog returns a SQLite database in a fresh file, closed when the
// test ends, and a discovery log in it.
func openSQLLog(t *testing.T) (*sql.DB, *discovery.SQLLog) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "discovery.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log, err := discovery.NewSQLLog(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return db, log
}

func TestSQLLogRecordsQueries(t *testing.T) {
	ctx := context.Background()
	db, log := openSQLLog(t)
	if _, err := discovery.NewSQLLog(ctx, db); err != nil { // idempotent
		t.Fatalf("second NewSQLLog: %v", err)
	}
	clock := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	d := newDiscoverer(t, &discovery.Options{Log: log, Clock: func() time.Time { return clock }})
	snap := catalogtest.Registry(t, tool("a/send_invoice", "Email an invoice to a customer"), tool("a/refund", "Refund a payment")).Snapshot()
	for _, q := range []string{"email the invoice", "refund my payment"} {
		t.Run(q, func(t *testing.T) {
			if _, err := d.Shortlist(ctx, snap.Authorize(tools.Principal{ID: "bob", Tenant: "acme"}), discovery.Request{Query: q}); err != nil {
				t.Fatal(err)
			}
		})
	}
	rows, err := db.QueryContext(ctx, `SELECT time, principal, tenant, query, top_tool, confidence FROM discovery_log ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got [][2]string
	for rows.Next() {
		var ts, principal, tenant, query, top string
		var conf float64
		if err := rows.Scan(&ts, &principal, &tenant, &query, &top, &conf); err != nil {
			t.Fatal(err)
		}
		if ts != "2026-05-06T07:08:09Z" || principal != "bob" || tenant != "acme" || conf < 0 || conf > 1 {
			t.Errorf("row = %s %s %s %v", ts, principal, tenant, conf)
		}
		got = append(got, [2]string{query, top})
	}
	want := [][2]string{{"email the invoice", "a/send_invoice"}, {"refund my payment", "a/refund"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("logged (query, top tool) = %v, want %v", got, want)
	}
}

// TestReadSQLLogWithoutTable: a database without the discovery_log table
// holds no log: [discovery.ErrNoSQLLog], and the table is not created.
func TestReadSQLLogWithoutTable(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "other.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`); err != nil {
		t.Fatal(err)
	}
	entries, err := discovery.ReadSQLLog(context.Background(), db)
	if !errors.Is(err, discovery.ErrNoSQLLog) || entries != nil {
		t.Errorf("ReadSQLLog(db without discovery_log) = %v, %v; want nil, ErrNoSQLLog", entries, err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'discovery_log'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("discovery_log tables after ReadSQLLog = %d (%v), want 0", n, err)
	}
}
