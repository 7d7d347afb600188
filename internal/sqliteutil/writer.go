package sqliteutil

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// ErrClosed is returned by Writer.Do after Close.
var ErrClosed = errors.New("sqliteutil: writer closed")

// WriteFunc is one logical write. It runs inside a transaction shared with
// other WriteFuncs of the same batch, isolated from them by a savepoint: when
// it returns an error its own changes are rolled back and the others commit.
// It must not commit or roll back tx, and must not retain it.
type WriteFunc func(ctx context.Context, tx *sql.Tx) error

// Writer is a group-commit front end to a single writer connection. Do
// calls that arrive while a transaction is being committed are collected
// and run together in the next transaction, so N concurrent writes cost one
// fsync instead of N. With synchronous=FULL that is what lets a durable
// store keep up with many concurrent callers. Safe for concurrent use.
type Writer struct {
	db       *sql.DB
	maxBatch int
	ops      chan *writeOp
	stop     chan struct{}
	done     chan struct{}

	mu     sync.RWMutex // held for reading while sending on ops
	closed bool
}

type writeOp struct {
	ctx context.Context
	fn  WriteFunc
	err chan error
}

// NewWriter starts a Writer over db, which should be a DB's W pool. maxBatch
// bounds the writes per transaction; zero means 256.
func NewWriter(db *sql.DB, maxBatch int) *Writer {
	if maxBatch <= 0 {
		maxBatch = 256
	}
	w := &Writer{db: db, maxBatch: maxBatch, ops: make(chan *writeOp, maxBatch),
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// Do runs fn in a write transaction and returns once that transaction is
// durably committed (nil) or fn's error, or the commit's error. When ctx is
// done before fn starts, fn does not run and ctx's error is returned; once
// it started, Do waits for the commit (bounded by one batch), so that a nil
// error always means "committed" and a non-nil one from fn means "rolled back".
func (w *Writer) Do(ctx context.Context, fn WriteFunc) error {
	op := &writeOp{ctx: ctx, fn: fn, err: make(chan error, 1)}
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return ErrClosed
	}
	select {
	case w.ops <- op:
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	w.mu.RUnlock()
	return <-op.err
}

// Close stops the writer after the writes already queued. It does not close db.
func (w *Writer) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.stop)
	}
	w.mu.Unlock()
	<-w.done
	return nil
}

func (w *Writer) loop() {
	defer close(w.done)
	batch := make([]*writeOp, 0, w.maxBatch)
	for {
		var first *writeOp
		select {
		case first = <-w.ops:
		case <-w.stop:
			// Drain what was queued before Close.
			for {
				select {
				case op := <-w.ops:
					w.run([]*writeOp{op})
				default:
					return
				}
			}
		}
		batch = append(batch[:0], first)
	fill:
		for len(batch) < w.maxBatch {
			select {
			case op := <-w.ops:
				batch = append(batch, op)
			default:
				break fill
			}
		}
		w.run(batch)
	}
}

// run executes one batch in one transaction.
func (w *Writer) run(batch []*writeOp) {
	// The batch's writes must finish even if the caller that happened to be
	// first gave up: the others are waiting for the same commit.
	ctx := context.Background()
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		for _, op := range batch {
			op.err <- fmt.Errorf("sqliteutil: begin: %w", err)
		}
		return
	}
	errs := make([]error, len(batch))
	for i, op := range batch {
		if err := op.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		errs[i] = runIsolated(ctx, tx, op)
	}
	if err := tx.Commit(); err != nil {
		for _, op := range batch {
			op.err <- fmt.Errorf("sqliteutil: commit: %w", err)
		}
		return
	}
	for i, op := range batch {
		op.err <- errs[i]
	}
}

func runIsolated(ctx context.Context, tx *sql.Tx, op *writeOp) (err error) {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT op"); err != nil {
		return fmt.Errorf("sqliteutil: savepoint: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqliteutil: write panicked: %v", p)
		}
		if err != nil {
			if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO op"); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		if _, rerr := tx.ExecContext(ctx, "RELEASE op"); rerr != nil && err == nil {
			err = fmt.Errorf("sqliteutil: release savepoint: %w", rerr)
		}
	}()
	// Once started, a write runs to the end: its caller waits for the commit.
	return op.fn(context.WithoutCancel(op.ctx), tx)
}
