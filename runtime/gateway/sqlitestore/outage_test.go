package sqlitestore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// The SQLite file refuses writes while a slow tool runs (another process
// holds its write lock, as a backup or a stuck writer does, past the
// store's busy timeout): the tool's outcome is held, answered to
// re-sends, and recorded once the lock is gone; the tool runs once
// (security invariant 9).
func TestRecordOutage(t *testing.T) {
	storetest.RunRecordOutage(t, func(t *testing.T) (store.Store, storetest.Server) {
		path := filepath.Join(t.TempDir(), "gateway.db")
		st := storetest.OpenN(t, 1, func() (store.Store, error) {
			return sqlitestore.Open(context.Background(), path, &sqlitestore.Options{BusyTimeout: 20 * time.Millisecond})
		})[0]
		return st, &writeLock{t: t, path: path}
	})
}

// writeLock is the [storetest.Server] of a SQLite file: Stop takes the
// file's write lock from another connection (BEGIN IMMEDIATE) and keeps
// it, so that every write of the store fails once its busy timeout has
// passed; Start gives it back.
type writeLock struct {
	t    *testing.T
	path string
	db   *sql.DB
	conn *sql.Conn
}

func (l *writeLock) Stop() error {
	db, err := sql.Open("sqlite", "file:"+l.path)
	if err != nil {
		return err
	}
	conn, err := db.Conn(context.Background())
	if err == nil {
		_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
	}
	if err != nil {
		db.Close()
		return err
	}
	l.db, l.conn = db, conn
	l.t.Cleanup(func() { db.Close() })
	return nil
}

func (l *writeLock) Start() error {
	if _, err := l.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		return err
	}
	l.conn.Close()
	return l.db.Close()
}
