package sqliteutil

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/toolgate/toolgate/internal/batching"
)

// ErrClosed is returned by [Writer.Do] after Close.
var ErrClosed = errors.New("sqliteutil: writer closed")

// WriteFunc is one logical write. It runs inside a transaction shared with
// other writes of the same batch, isolated from them by a savepoint: when
// it returns an error its own changes are rolled back and the others commit.
// It must not retain tx.
type WriteFunc func(ctx context.Context, tx *Tx) error

// Tx is the transaction a [WriteFunc] runs in. Its statements are prepared
// once per [Writer] and reused, so SQLite does not parse the same SQL again
// for every write.
type Tx struct {
	tx *sql.Tx
	w  *Writer
}

// ExecContext executes one statement.
func (t *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.w.stmt(query); st != nil {
		return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

// QueryContext runs a query; the caller closes the rows.
func (t *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.w.stmt(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query expected to return at most one row.
func (t *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.w.stmt(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// Writer is a group-commit front end to a single writer connection. Writes
// that arrive while a transaction is being committed are collected and run
// together in the next transaction, so N concurrent writes cost one fsync
// instead of N. With synchronous=FULL that is what lets a durable store keep
// up with many concurrent callers. Safe for concurrent use.
type Writer struct {
	db       *sql.DB
	file     *DB // checked before each commit ([DB.CheckFile])
	maxBatch int
	q        *batching.Queue[*writeOp]
	done     chan struct{} // closed when the consumer returns

	hooks BatchHooks

	batches, writes atomic.Int64

	stmtMu  sync.Mutex
	stmts   map[string]*sql.Stmt
	pending map[string]bool // seen in a transaction, prepared after its commit
}

type writeOp struct {
	ctx  context.Context
	fn   WriteFunc
	bare bool // fn runs without a savepoint
	// merge, when set, runs once for the ops of a batch that share key,
	// with their items in order (DoMerged).
	merge MergeFunc
	key   string
	item  any
	// query, when fn is nil, is a single statement run without a savepoint
	// (a failing statement changes nothing by itself); n gets its row count.
	query string
	args  []any
	n     int64
	err   chan error
}

// BatchHooks let a Writer's user keep per-batch state: Begin runs right
// after each batch's transaction began (the write lock is held, so it may
// read state that other processes change), End right before its commit
// (to write that state back once per batch). An error from Begin or End
// fails the whole batch. Both run on the writer's goroutine, which is the
// only one running write functions, so state they share with write
// functions needs no lock.
type BatchHooks struct {
	Begin func(ctx context.Context, tx *Tx) error
	End   func(ctx context.Context, tx *Tx) error
}

// NewWriter starts a [Writer] over db's writer connection (W). maxBatch
// bounds the writes per transaction; zero means 256. hooks may be nil.
// Before each commit it checks that db's file is still in place
// ([DB.CheckFile]); a batch whose file was removed or replaced is rolled
// back, each of its callers getting an error wrapping [ErrFileGone].
func NewWriter(db *DB, maxBatch int, hooks *BatchHooks) *Writer {
	if maxBatch <= 0 {
		maxBatch = 256
	}
	w := &Writer{db: db.W, file: db, maxBatch: maxBatch, q: batching.New[*writeOp](maxBatch, ErrClosed),
		done: make(chan struct{}), stmts: map[string]*sql.Stmt{}, pending: map[string]bool{}}
	if hooks != nil {
		w.hooks = *hooks
	}
	go func() {
		defer close(w.done)
		w.q.Consume(maxBatch, w.fill, w.run)
	}()
	return w
}

// Do runs fn in a write transaction and returns once that transaction is
// durably committed (nil) or fn's error, or the commit's error. When ctx is
// done before fn starts, fn does not run and ctx's error is returned; once
// it started, fn runs to the end with a context that is not cancelled and
// Do waits for the commit (bounded by one batch), so that a nil error always
// means "committed" and an error from fn means "rolled back".
func (w *Writer) Do(ctx context.Context, fn WriteFunc) error {
	return w.submit(ctx, &writeOp{ctx: ctx, fn: fn, err: make(chan error, 1)})
}

// DoBare is Do without the savepoint: when fn fails, the changes it made
// before failing stay in the batch and are committed. Use it only when every
// prefix of fn's writes is harmless on its own (a claim that deleted an
// expired record and then failed to insert); it saves two statements per
// write.
func (w *Writer) DoBare(ctx context.Context, fn WriteFunc) error {
	return w.submit(ctx, &writeOp{ctx: ctx, fn: fn, bare: true, err: make(chan error, 1)})
}

// MergeFunc writes the items of several DoMerged calls at once. It runs
// inside a savepoint: when it fails, none of the items is written, and every
// one of the calls gets the error.
type MergeFunc func(ctx context.Context, tx *Tx, items []any) error

// DoMerged is Do for writes that are cheaper together (appends to one
// table: one multi-row INSERT instead of N statements): the DoMerged calls
// with the same key that land in one batch run as one call of merge, the
// first call's, with all their items in arrival order, at the place of
// the first of them. Each call returns once the batch is committed, with
// merge's error or the commit's.
func (w *Writer) DoMerged(ctx context.Context, key string, item any, merge MergeFunc) error {
	return w.submit(ctx, &writeOp{ctx: ctx, merge: merge, key: key, item: item, err: make(chan error, 1)})
}

// Exec runs one statement in the next batch, like Do, and returns the
// number of rows it changed once committed.
func (w *Writer) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	op := &writeOp{ctx: ctx, query: query, args: args, err: make(chan error, 1)}
	if err := w.submit(ctx, op); err != nil {
		return 0, err
	}
	return op.n, nil
}

func (w *Writer) submit(ctx context.Context, op *writeOp) error {
	if err := w.q.Submit(ctx, op); err != nil {
		return err
	}
	return <-op.err
}

// Close stops the writer after the writes already queued and closes its
// prepared statements. It does not close db.
func (w *Writer) Close() error {
	w.q.Close()
	<-w.done
	w.stmtMu.Lock()
	defer w.stmtMu.Unlock()
	var errs []error
	for q, st := range w.stmts {
		errs = append(errs, st.Close())
		delete(w.stmts, q)
	}
	return errors.Join(errs...)
}

// stmt returns the prepared statement for query, or nil the first time a
// query is seen: the writer's only connection is then busy with the
// transaction, so the statement is prepared after the commit
// (prepareNew) and the query runs unprepared this once.
func (w *Writer) stmt(query string) *sql.Stmt {
	w.stmtMu.Lock()
	defer w.stmtMu.Unlock()
	st, ok := w.stmts[query]
	if !ok {
		w.pending[query] = true
	}
	return st
}

// prepareNew prepares the queries first seen in the last transaction. A
// failure leaves the query unprepared; it keeps running unprepared.
func (w *Writer) prepareNew(ctx context.Context) {
	w.stmtMu.Lock()
	defer w.stmtMu.Unlock()
	for q := range w.pending {
		delete(w.pending, q)
		if st, err := w.db.PrepareContext(ctx, q); err == nil {
			w.stmts[q] = st
		}
	}
}

// fillYields bounds how long fill waits for writes that are on their way:
// this many yields in a row that bring no new write end the batch.
const fillYields = 3

// fill adds the queued writes to batch, up to maxBatch. When the queue is
// empty it yields the processor ([runtime.Gosched]) so that the callers the
// last commit woke can submit their next write, and keeps going while
// yields bring new writes, so that those callers share this batch's fsync
// instead of forming a second batch behind it. The wait is bounded: at
// most maxBatch writes, and fillYields yields without an arrival. It never
// sleeps, so a lone caller pays a few yields, not a timer.
func (w *Writer) fill(batch []*writeOp) []*writeOp {
	idle := 0
	for len(batch) < w.maxBatch && idle < fillYields {
		if op, ok := w.q.TryTake(); ok {
			batch = append(batch, op)
			idle = 0
		} else {
			idle++
			runtime.Gosched()
		}
	}
	return batch
}

// WriterStats counts a Writer's work since [NewWriter].
type WriterStats struct {
	// Batches is the number of transactions run, Writes the writes they
	// held (Do, DoBare, DoMerged and Exec calls that reached a batch).
	Batches, Writes int64
}

// Stats reports the batches and writes so far; Writes / Batches is the
// mean batch size, the fsyncs that group commit saved.
func (w *Writer) Stats() WriterStats {
	return WriterStats{Batches: w.batches.Load(), Writes: w.writes.Load()}
}

// run executes one batch in one transaction, counted in Stats.
func (w *Writer) run(batch []*writeOp) {
	w.batches.Add(1)
	w.writes.Add(int64(len(batch)))
	// The batch's writes must finish even if the caller that happened to be
	// first gave up: the others are waiting for the same commit.
	ctx := context.Background()
	sqlTx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		for _, op := range batch {
			op.err <- fmt.Errorf("sqliteutil: begin: %w", err)
		}
		return
	}
	tx := &Tx{tx: sqlTx, w: w}
	fail := func(what string, err error) {
		sqlTx.Rollback()
		for _, op := range batch {
			op.err <- fmt.Errorf("sqliteutil: %s: %w", what, err)
		}
		w.prepareNew(ctx)
	}
	if w.hooks.Begin != nil {
		if err := w.hooks.Begin(ctx, tx); err != nil {
			fail("batch begin hook", err)
			return
		}
	}
	errs := make([]error, len(batch))
	merged := make([]bool, len(batch))
	for i, op := range batch {
		if merged[i] {
			continue
		}
		if err := op.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		switch {
		case op.merge != nil:
			runMerged(ctx, tx, batch, i, merged, errs)
			continue
		case op.fn == nil:
			errs[i] = runStatement(ctx, tx, op)
			continue
		case op.bare:
			errs[i] = runBare(ctx, tx, op)
			continue
		}
		errs[i] = runIsolated(ctx, tx, op)
	}
	if w.hooks.End != nil {
		if err := w.hooks.End(ctx, tx); err != nil {
			fail("batch end hook", err)
			return
		}
	}
	if err := w.file.CheckFile(); err != nil {
		// SQLite would commit to the unlinked file: acknowledged, then lost.
		fail("commit", err)
		return
	}
	if err := sqlTx.Commit(); err != nil {
		fail("commit", err)
		return
	}
	for i, op := range batch {
		op.err <- errs[i]
	}
	w.prepareNew(ctx)
}

// runMerged runs batch[first]'s merge with the items of every op of its
// key from first on whose context is live, and gives them all its error.
func runMerged(ctx context.Context, tx *Tx, batch []*writeOp, first int, merged []bool, errs []error) {
	key := batch[first].key
	var group []int
	var items []any
	for i := first; i < len(batch); i++ {
		op := batch[i]
		if op.merge == nil || op.key != key || merged[i] {
			continue
		}
		merged[i] = true
		if err := op.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		group = append(group, i)
		items = append(items, op.item)
	}
	err := runIsolated(ctx, tx, &writeOp{ctx: context.Background(), fn: func(ctx context.Context, tx *Tx) error {
		return batch[first].merge(ctx, tx, items)
	}})
	for _, i := range group {
		errs[i] = err
	}
}

func runStatement(ctx context.Context, tx *Tx, op *writeOp) error {
	res, err := tx.ExecContext(ctx, op.query, op.args...)
	if err != nil {
		return err
	}
	op.n, err = res.RowsAffected()
	return err
}

func runBare(ctx context.Context, tx *Tx, op *writeOp) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqliteutil: write panicked: %v", p)
		}
	}()
	return op.fn(context.WithoutCancel(op.ctx), tx)
}

func runIsolated(ctx context.Context, tx *Tx, op *writeOp) (err error) {
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
