// Package sqliteutil opens SQLite databases (modernc.org/sqlite, pure Go)
// the way toolgate's embedded stores need them: WAL journal, synchronous=FULL
// so that a committed transaction survives kill -9 and power loss, a busy
// timeout, foreign keys, one writer connection and a pool of readers, schema
// migrations tracked in PRAGMA user_version, and a group-commit [Writer] that
// batches concurrent write transactions into one fsync.
package sqliteutil

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options configures [Open]. A nil *Options means defaults.
type Options struct {
	// BusyTimeout is how long a connection waits for a lock held by another
	// process before failing with SQLITE_BUSY. Zero means 5s.
	BusyTimeout time.Duration
	// Readers is the size of the read pool. Zero means 4.
	Readers int
	// ReadOnly opens the file read-only (SQLite's mode=ro), leaving its
	// journal mode as it is: every write fails, and the file is not
	// created when missing.
	ReadOnly bool
}

// DB is a SQLite database opened as one writer connection and a pool of
// readers. WAL lets readers proceed while the writer commits. Both pools are
// safe for concurrent use; writes should go through one [Writer] (or at least
// only through W, whose single connection serializes them).
type DB struct {
	// W has exactly one connection; its transactions begin IMMEDIATE, so a
	// write transaction takes the write lock up front instead of failing
	// halfway with SQLITE_BUSY.
	W *sql.DB
	// R is the read pool.
	R *sql.DB
	// Path is the database file.
	Path string

	file os.FileInfo // Path's file when opened, for CheckFile
}

// FileURI returns the SQLite URI ("file:" form, which the driver hands to
// SQLite whole, so that SQLite applies parameters such as mode=ro) of the
// file at the absolute path abs with the query q. The path is escaped, so
// that a name holding '?', '#' or '%' names that file: pasted raw, '#'
// would end the path and open (or create) another file.
func FileURI(abs string, q url.Values) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive letter: file:///C:/...
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}

// Open opens (creating when missing, unless [Options.ReadOnly]) the
// database file at path.
func Open(ctx context.Context, path string, opts *Options) (*DB, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.BusyTimeout < 0 {
		return nil, errors.New("sqliteutil: Options.BusyTimeout is negative")
	}
	if o.Readers < 0 {
		return nil, errors.New("sqliteutil: Options.Readers is negative")
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.Readers == 0 {
		o.Readers = 4
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqliteutil: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	if o.ReadOnly {
		q.Set("mode", "ro")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
	}
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	dsn := FileURI(abs, q)

	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqliteutil: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	// The first connection switches the file to WAL; do it before readers open.
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqliteutil: open %s: %w", path, err)
	}
	if mode != "wal" && !o.ReadOnly {
		w.Close()
		return nil, fmt.Errorf("sqliteutil: open %s: journal mode is %q, want wal", path, mode)
	}
	file, err := os.Stat(abs)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqliteutil: open %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqliteutil: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(o.Readers)
	r.SetMaxIdleConns(o.Readers)
	return &DB{W: w, R: r, Path: abs, file: file}, nil
}

// CheckFile returns an error wrapping [ErrFileGone], naming the path,
// when the file at db's path is no longer the one [Open] opened.
func (db *DB) CheckFile() error {
	now, err := os.Stat(db.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s was removed since it was opened; a write now would be lost, so nothing is written until a restart opens it anew", ErrFileGone, db.Path)
	case err != nil:
		return fmt.Errorf("sqliteutil: %w", err)
	case !os.SameFile(db.file, now):
		return fmt.Errorf("%w: %s was replaced by another file since it was opened; a write now would be lost, so nothing is written until a restart opens it anew", ErrFileGone, db.Path)
	}
	return nil
}

// ErrFileGone is wrapped by the error of a write after the database file
// was removed (its folder deleted) or replaced since [Open]: SQLite would
// go on writing to the unlinked file, and what it committed would be lost
// at the next start, when the path opens another database.
var ErrFileGone = errors.New("sqliteutil: the database file is gone")

// Close closes both pools.
func (db *DB) Close() error {
	return errors.Join(db.R.Close(), db.W.Close())
}

// ErrForeign reports a database that holds tables but no schema version:
// another program's file, which [Migrate] leaves untouched.
var ErrForeign = errors.New("sqliteutil: the file holds another program's tables")

// Migrate brings the schema up to date: migrations[i] is the SQL that takes
// user_version i to i+1. Each pending step runs in its own transaction with
// the version bump, so a crash leaves the schema at a whole step. A database
// whose user_version is beyond len(migrations) was written by a newer
// program and is refused; one at user_version 0 that already holds tables is
// refused with [ErrForeign].
func Migrate(ctx context.Context, db *sql.DB, migrations []string) error {
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("sqliteutil: read schema version: %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("sqliteutil: schema version %d is newer than this program's %d", version, len(migrations))
	}
	for i := version; i < len(migrations); i++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("sqliteutil: migration %d: %w", i+1, err)
		}
		// Another process may have migrated meanwhile; re-read under the lock.
		var cur int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqliteutil: migration %d: %w", i+1, err)
		}
		if cur > i {
			tx.Rollback()
			continue
		}
		if cur == 0 {
			if err := checkEmpty(ctx, tx); err != nil {
				tx.Rollback()
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqliteutil: migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", i+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqliteutil: migration %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("sqliteutil: migration %d: %w", i+1, err)
		}
	}
	return nil
}

// checkEmpty returns [ErrForeign], naming a table, when the database at
// user_version 0 already holds one. It runs in the first migration's
// transaction, under the write lock, so a process that migrates the file
// meanwhile is not mistaken for another program.
func checkEmpty(ctx context.Context, tx *sql.Tx) error {
	var name string
	err := tx.QueryRowContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY name LIMIT 1").Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sqliteutil: read the tables: %w", err)
	}
	return fmt.Errorf("%w (table %q, no schema version): not a file this program created", ErrForeign, name)
}
