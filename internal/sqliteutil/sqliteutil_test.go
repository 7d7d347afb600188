package sqliteutil_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/sqliteutil"
)

func openDB(t *testing.T) *sqliteutil.DB {
	t.Helper()
	db, err := sqliteutil.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openWriter returns a fresh database with schema applied and a writer over
// it (hooks may be nil), both closed when the test ends.
func openWriter(t *testing.T, schema string, hooks *sqliteutil.BatchHooks) (*sqliteutil.DB, *sqliteutil.Writer) {
	t.Helper()
	db := openDB(t)
	if _, err := db.W.Exec(schema); err != nil {
		t.Fatal(err)
	}
	w := sqliteutil.NewWriter(db, 0, hooks)
	t.Cleanup(func() { w.Close() })
	return db, w
}

func TestOpenPragmas(t *testing.T) {
	db := openDB(t)
	for _, c := range []struct {
		pool *sql.DB
		name string
		want int
	}{
		{db.W, "synchronous", 2}, // FULL
		{db.R, "synchronous", 2},
		{db.W, "busy_timeout", 5000},
		{db.W, "foreign_keys", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got int
			if err := c.pool.QueryRow("PRAGMA " + c.name).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("PRAGMA %s = %d, want %d", c.name, got, c.want)
			}
		})
	}
}

// A file name holding characters URIs reserve opens that very file, with
// the pragmas applied, and creates no other.
func TestOpenReservedCharacters(t *testing.T) {
	for _, name := range []string{"a#b.db", "a?b.db", "a%20b.db", "a b.db"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			db, err := sqliteutil.Open(context.Background(), path, nil)
			if err != nil {
				t.Fatalf("Open(%q): %v", name, err)
			}
			var fk int
			err = db.W.QueryRow("PRAGMA foreign_keys").Scan(&fk)
			db.Close()
			if err != nil || fk != 1 {
				t.Errorf("Open(%q): foreign_keys = %d, %v; want the pragmas applied", name, fk, err)
			}
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if !slices.Contains(names, name) || slices.ContainsFunc(names, func(n string) bool { return !strings.HasPrefix(n, name) }) {
				t.Errorf("Open(%q) left %q in its folder, want %q and its -wal/-shm only", name, names, name)
			}
		})
	}
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	steps := []string{"CREATE TABLE a(x INTEGER)", "CREATE TABLE b(y INTEGER)"}
	if err := sqliteutil.Migrate(ctx, db.W, steps[:1]); err != nil {
		t.Fatal(err)
	}
	if err := sqliteutil.Migrate(ctx, db.W, steps); err != nil {
		t.Fatalf("second Migrate (one step pending) = %v", err)
	}
	if err := sqliteutil.Migrate(ctx, db.W, steps); err != nil {
		t.Fatalf("Migrate with nothing pending = %v", err)
	}
	var v int
	db.W.QueryRow("PRAGMA user_version").Scan(&v)
	if v != 2 {
		t.Errorf("user_version = %d, want 2", v)
	}
	if err := sqliteutil.Migrate(ctx, db.W, steps[:1]); err == nil {
		t.Error("Migrate with fewer steps than applied = nil, want an error (newer schema)")
	}
}

// A file that holds tables but no schema version belongs to another
// program: Migrate refuses it instead of failing on a clashing table name or,
// worse, adding its tables beside the other program's.
func TestMigrateRefusesForeignDatabase(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if _, err := db.W.Exec("CREATE TABLE records(x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	err := sqliteutil.Migrate(ctx, db.W, []string{"CREATE TABLE a(x INTEGER)"})
	if !errors.Is(err, sqliteutil.ErrForeign) {
		t.Fatalf("Migrate of a database with another program's table = %v, want ErrForeign", err)
	}
	if !strings.Contains(err.Error(), "records") {
		t.Errorf("Migrate error = %q, want it to name the table it found", err)
	}
	var n int
	db.W.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'a'").Scan(&n)
	if n != 0 {
		t.Error("Migrate refused the file but created its table in it")
	}
}

// A failing write in a batch rolls back alone; the others commit.
func TestWriterIsolatesFailures(t *testing.T) {
	ctx := context.Background()
	db, w := openWriter(t, "CREATE TABLE t(k INTEGER PRIMARY KEY)", nil)
	boom := errors.New("boom")
	const n = 100
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.Do(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
				if _, err := tx.ExecContext(ctx, "INSERT INTO t(k) VALUES (?)", i); err != nil {
					return err
				}
				if i%3 == 0 {
					return boom // inserted, then rolled back to the savepoint
				}
				return nil
			})
		}()
	}
	wg.Wait()
	var want int
	for i, err := range errs {
		if i%3 == 0 {
			if !errors.Is(err, boom) {
				t.Errorf("Do(%d) = %v, want boom", i, err)
			}
			continue
		}
		want++
		if err != nil {
			t.Errorf("Do(%d) = %v, want nil", i, err)
		}
	}
	var got int
	db.R.QueryRow("SELECT count(*) FROM t WHERE k % 3 != 0").Scan(&got)
	var bad int
	db.R.QueryRow("SELECT count(*) FROM t WHERE k % 3 = 0").Scan(&bad)
	if got != want || bad != 0 {
		t.Errorf("committed rows = %d (and %d failed ones), want %d and 0", got, bad, want)
	}
	w.Close()
	if err := w.Do(ctx, func(context.Context, *sqliteutil.Tx) error { return nil }); !errors.Is(err, sqliteutil.ErrClosed) {
		t.Errorf("Do after Close = %v, want ErrClosed", err)
	}
}

// Exec reports rows changed; DoBare keeps a failing write's earlier
// changes; the batch hooks run around every transaction.
func TestWriterExecBareAndHooks(t *testing.T) {
	ctx := context.Background()
	var begun, ended int
	db, w := openWriter(t, "CREATE TABLE t(k INTEGER PRIMARY KEY); CREATE TABLE batches(n INTEGER)", &sqliteutil.BatchHooks{
		Begin: func(context.Context, *sqliteutil.Tx) error { begun++; return nil },
		End: func(ctx context.Context, tx *sqliteutil.Tx) error {
			ended++
			_, err := tx.ExecContext(ctx, "INSERT INTO batches(n) VALUES (1)")
			return err
		},
	})
	if n, err := w.Exec(ctx, "INSERT INTO t(k) VALUES (1), (2)"); err != nil || n != 2 {
		t.Errorf("Exec(insert 2 rows) = %d, %v, want 2, nil", n, err)
	}
	if n, err := w.Exec(ctx, "UPDATE t SET k = k WHERE k = 99"); err != nil || n != 0 {
		t.Errorf("Exec(update nothing) = %d, %v, want 0, nil", n, err)
	}
	boom := errors.New("boom")
	err := w.DoBare(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO t(k) VALUES (3)"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("DoBare = %v, want boom", err)
	}
	var rows, batches int
	db.R.QueryRow("SELECT count(*) FROM t").Scan(&rows)
	db.R.QueryRow("SELECT count(*) FROM batches").Scan(&batches)
	if rows != 3 {
		t.Errorf("rows = %d, want 3 (DoBare keeps the insert made before its error)", rows)
	}
	if begun != 3 || ended != 3 || batches != 3 {
		t.Errorf("hooks ran begin=%d end=%d (rows %d), want 3 each (three sequential writes)", begun, ended, batches)
	}
}

// DoMerged calls that share a batch run as one merge call with all their
// items (how many share one depends on timing, so it is not asserted);
// every item is written exactly once; a failing merge (here: the
// group whose items include a duplicate key) writes none of its items and
// gives each of its calls the error, while the other writes commit.
func TestWriterMerges(t *testing.T) {
	ctx := context.Background()
	db, w := openWriter(t, "CREATE TABLE t(k INTEGER PRIMARY KEY); CREATE TABLE u(k INTEGER PRIMARY KEY)", nil)
	var mu sync.Mutex
	var merges, largest int
	insert := func(table string) sqliteutil.MergeFunc {
		return func(ctx context.Context, tx *sqliteutil.Tx, items []any) error {
			mu.Lock()
			merges++
			largest = max(largest, len(items))
			mu.Unlock()
			for _, it := range items {
				if _, err := tx.ExecContext(ctx, "INSERT INTO "+table+"(k) VALUES (?)", it); err != nil {
					return err
				}
			}
			return nil
		}
	}
	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = w.DoMerged(ctx, "t", i, insert("t"))
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("DoMerged(%d) = %v, want nil", i, err)
		}
	}
	var rows, distinct int
	db.R.QueryRow("SELECT count(*), count(DISTINCT k) FROM t").Scan(&rows, &distinct)
	if rows != n || distinct != n {
		t.Errorf("rows = %d (%d distinct), want %d: every item written once", rows, distinct, n)
	}
	if merges > n || largest > n {
		t.Errorf("%d merge calls for %d items (largest %d); want at most one call and one item per DoMerged", merges, n, largest)
	}

	// k=1 is already in u: the merge holding it fails as a whole.
	if err := w.DoMerged(ctx, "u", 1, insert("u")); err != nil {
		t.Fatal(err)
	}
	var failed, ok atomic.Int32
	for i := range 50 {
		wg.Go(func() {
			err := w.DoMerged(ctx, "u", 1+i%2*(100+i), insert("u")) // even i: k=1, a duplicate
			if err != nil {
				failed.Add(1)
			} else {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	var inU int
	db.R.QueryRow("SELECT count(*) FROM u").Scan(&inU)
	if failed.Load() < 25 || int(ok.Load())+1 != inU {
		t.Errorf("%d calls failed, %d succeeded, %d rows in u; want every even call to fail and exactly the succeeded calls' rows written (+1)", failed.Load(), ok.Load(), inU)
	}
}

// TestWriterRefusesAVanishedFile: once the database file is removed (its
// folder deleted) or replaced by another file, a write fails with
// [sqliteutil.ErrFileGone] and commits nothing. SQLite itself goes on
// writing to the unlinked file, so every write was acknowledged and then
// lost at the next start, when the path opens a new, empty database.
func TestWriterRefusesAVanishedFile(t *testing.T) {
	tests := []struct {
		name  string
		swap  func(t *testing.T, path string)
		write bool // whether a write still commits
	}{
		{"in place", func(*testing.T, string) {}, true},
		{"folder removed", func(t *testing.T, path string) {
			if err := os.RemoveAll(filepath.Dir(path)); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"file replaced", func(t *testing.T, path string) {
			other := filepath.Join(filepath.Dir(path), "other.db")
			if err := os.WriteFile(other, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db, w := openWriter(t, "CREATE TABLE t(k INTEGER PRIMARY KEY)", nil)
			if _, err := w.Exec(ctx, "INSERT INTO t(k) VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			tc.swap(t, db.Path)
			_, err := w.Exec(ctx, "INSERT INTO t(k) VALUES (2)")
			if tc.write {
				if err != nil {
					t.Fatalf("Exec with the file in place = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, sqliteutil.ErrFileGone) || !strings.Contains(err.Error(), db.Path) {
				t.Fatalf("Exec after the file vanished = %v, want ErrFileGone naming %s", err, db.Path)
			}
			var rows int // through the writer's connection, which still holds the unlinked file
			if err := db.W.QueryRow("SELECT count(*) FROM t").Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if rows != 1 {
				t.Errorf("rows = %d, want 1: the refused write committed", rows)
			}
		})
	}
}
