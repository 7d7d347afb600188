package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/sqliteutil"
	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/internal/storecodec"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

var _ store.Store = (*Store)(nil)

// Options configures Open. A nil *Options means defaults.
type Options struct {
	// BusyTimeout is how long a write waits for another process holding the
	// database's write lock. Zero means 5s.
	BusyTimeout time.Duration
	// Readers is the size of the read connection pool. Zero means 4.
	Readers int
	// MaxBatch bounds how many concurrent writes share one transaction (one
	// fsync). Zero means 256; 1 disables group commit.
	MaxBatch int
	// ReadOnly opens the file without writing it (a reader such as
	// toolgate audit verify): no migration runs, a file of an older schema
	// is refused with [ErrOlderSchema], and every write fails.
	ReadOnly bool
}

// ErrOlderSchema is wrapped by the error of [Open] with [Options.ReadOnly]
// for a file of an older schema, which only an Open that may write
// migrates.
var ErrOlderSchema = errors.New("older than this build's schema")

// Store is the SQLite implementation of [store.Store]. It is safe for
// concurrent use; see the package documentation for durability and
// concurrency guarantees.
type Store struct {
	db *sqliteutil.DB
	w  *sqliteutil.Writer

	// The fencing counter of the current batch, read when the batch begins
	// (under the write lock) and written back once before it commits. Only
	// the writer's goroutine touches it.
	token, tokenStored uint64
}

// Open opens (creating when missing) the store in the SQLite file at path
// and applies the embedded schema migrations; with [Options.ReadOnly] it
// does neither.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.MaxBatch < 0 {
		return nil, fmt.Errorf("%w: sqlitestore: Options.MaxBatch is negative", store.ErrInvalidOptions)
	}
	if o.BusyTimeout < 0 || o.Readers < 0 {
		return nil, fmt.Errorf("%w: sqlitestore: Options.BusyTimeout and Options.Readers must not be negative", store.ErrInvalidOptions)
	}
	db, err := sqliteutil.Open(ctx, path, &sqliteutil.Options{BusyTimeout: o.BusyTimeout, Readers: o.Readers, ReadOnly: o.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	if o.ReadOnly {
		err = checkVersion(ctx, db)
	} else {
		err = sqliteutil.Migrate(ctx, db.W, migrations)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitestore: %s: %w", path, err)
	}
	s := &Store{db: db}
	s.w = sqliteutil.NewWriter(db, o.MaxBatch, &sqliteutil.BatchHooks{Begin: s.loadToken, End: s.storeToken})
	return s, nil
}

// checkVersion refuses a file whose schema is not this build's, for a
// read-only Open.
func checkVersion(ctx context.Context, db *sqliteutil.DB) error {
	var version int
	if err := db.R.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	switch {
	case version < len(migrations):
		return fmt.Errorf("schema version %d is %w (%d)", version, ErrOlderSchema, len(migrations))
	case version > len(migrations):
		return fmt.Errorf("schema version %d is newer than this build's %d", version, len(migrations))
	}
	return nil
}

// Close finishes queued writes and closes the database. The Store must not
// be used afterwards.
func (s *Store) Close() error {
	return errors.Join(s.w.Close(), s.db.Close())
}

var ns, fromNS = storecodec.NS, storecodec.Time

func (s *Store) write(ctx context.Context, fn sqliteutil.WriteFunc) error {
	return s.wrap(s.w.Do(ctx, fn))
}

func (s *Store) writeBare(ctx context.Context, fn sqliteutil.WriteFunc) error {
	return s.wrap(s.w.DoBare(ctx, fn))
}

// wrap prefixes store failures, leaving the sentinels and context errors bare.
func (s *Store) wrap(err error) error {
	if err != nil && !errors.Is(err, store.ErrFenced) && !errors.Is(err, store.ErrNotFound) &&
		!errors.Is(err, store.ErrApprovalState) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("sqlitestore: %w", err)
	}
	return err
}

const recordColumns = storecodec.RecordColumns

func nullBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

const slotWhere = `tenant = ? AND principal = ? AND session_id = ? AND step = ? AND tool = ?`

var slotArgs = storecodec.SlotArgs

// Claim implements [store.Store].
func (s *Store) Claim(ctx context.Context, req store.ClaimRequest) (store.Claim, error) {
	var out store.Claim
	// Without a savepoint: a claim that fails part-way has at most deleted
	// an expired record (which counts as absent anyway) or used a token.
	err := s.writeBare(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
		out = store.Claim{}
		now := ns(req.Now)
		// A fresh slot, the common case, is one statement: an insert that
		// does nothing when the slot has a record.
		insert := func() (bool, error) {
			token := s.token + 1
			res, err := tx.ExecContext(ctx, `INSERT INTO records(`+recordColumns+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, 'in_progress', ?, ?, NULL, NULL, '', 1, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
				append(slotArgs(req.Slot), req.Key, req.Fingerprint, int64(token), ns(req.LeaseExpires), now, now, ns(req.ExpiresAt), req.Owner)...)
			if err != nil {
				return false, err
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return false, err
			}
			s.token = token
			out.Status, out.Token = store.ClaimAcquired, token
			out.Record = store.Record{Slot: req.Slot, Principal: req.Slot.Principal, Key: req.Key, Fingerprint: req.Fingerprint,
				State: store.StateInProgress, Token: token, LeaseExpires: fromNS(ns(req.LeaseExpires)), Attempts: 1, Owner: req.Owner,
				CreatedAt: fromNS(now), UpdatedAt: fromNS(now), ExpiresAt: fromNS(ns(req.ExpiresAt))}
			return true, nil
		}
		if done, err := insert(); done || err != nil {
			return err
		}
		cur, err := storecodec.ScanRecord(tx.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM records WHERE `+slotWhere, slotArgs(req.Slot)...))
		if err != nil {
			return err
		}
		if ns(cur.ExpiresAt) <= now {
			// Past its retention the record counts as absent: replace it.
			if _, err := tx.ExecContext(ctx, `DELETE FROM records WHERE `+slotWhere, slotArgs(req.Slot)...); err != nil {
				return err
			}
			done, err := insert()
			if err == nil && !done {
				err = errors.New("claim: the slot's record came back after its deletion")
			}
			return err
		}
		switch {
		case cur.Key != req.Key:
			out.Status, out.Record = store.ClaimMismatch, cur
			return nil
		case cur.State == store.StateDone:
			out.Status, out.Record = store.ClaimDone, cur
			return nil
		case cur.State == store.StateInProgress && ns(cur.LeaseExpires) > now:
			out.Status, out.Record = store.ClaimInProgress, cur
			return nil
		case !req.TakeOver:
			out.Status, out.Record = store.ClaimUncertain, cur
			return nil
		}
		token := s.nextToken()
		_, err = tx.ExecContext(ctx, `UPDATE records SET state = 'in_progress', token = ?, lease_expires = ?,
			expires = ?, attempts = attempts + 1, updated = ?, value = NULL, domain_error = NULL, reason = '', owner = ?
			WHERE `+slotWhere, append([]any{int64(token), ns(req.LeaseExpires), ns(req.ExpiresAt), now, req.Owner}, slotArgs(req.Slot)...)...)
		if err != nil {
			return err
		}
		out.Status, out.Token, out.Previous = store.ClaimAcquired, token, cur.State
		cur.State, cur.Token, cur.LeaseExpires, cur.ExpiresAt = store.StateInProgress, token, fromNS(ns(req.LeaseExpires)), fromNS(ns(req.ExpiresAt))
		cur.Attempts++
		cur.Owner = req.Owner
		cur.UpdatedAt = fromNS(now)
		cur.Value, cur.DomainError, cur.Reason = nil, nil, ""
		out.Record = cur
		return nil
	})
	if err != nil {
		return store.Claim{}, err
	}
	return out, nil
}

func (s *Store) loadToken(ctx context.Context, tx *sqliteutil.Tx) error {
	var v int64
	if err := tx.QueryRowContext(ctx, `SELECT value FROM counters WHERE name = 'fencing'`).Scan(&v); err != nil {
		return err
	}
	s.token, s.tokenStored = uint64(v), uint64(v)
	return nil
}

func (s *Store) storeToken(ctx context.Context, tx *sqliteutil.Tx) error {
	if s.token == s.tokenStored {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE counters SET value = ? WHERE name = 'fencing'`, int64(s.token))
	return err
}

// nextToken hands out the next fencing token of the batch. A claim that
// fails after taking one leaves a gap, never a repeat.
func (s *Store) nextToken() uint64 {
	s.token++
	return s.token
}

// execFenced runs one fenced statement (no savepoint needed: a single
// statement is atomic) and maps "no row changed" to ErrFenced.
func (s *Store) execFenced(ctx context.Context, query string, args []any) error {
	n, err := s.w.Exec(ctx, query, args...)
	if err != nil {
		return s.wrap(err)
	}
	if n != 1 {
		return store.ErrFenced
	}
	return nil
}

const fenceWhere = slotWhere + ` AND state = 'in_progress' AND token = ? AND lease_expires > ?`

// Complete implements [store.Store].
func (s *Store) Complete(ctx context.Context, c store.Completion) error {
	args, err := completeArgs(c)
	if err != nil {
		return fmt.Errorf("sqlitestore: %w", err)
	}
	return s.execFenced(ctx, completeUpdate, args)
}

const completeUpdate = `UPDATE records SET state = 'done', value = ?, domain_error = ?, reason = '',
	updated = ?, expires = ? WHERE ` + fenceWhere

func completeArgs(c store.Completion) ([]any, error) {
	de, err := storecodec.EncodeDomainError(c.DomainError)
	if err != nil {
		return nil, err
	}
	var value any
	if c.DomainError == nil {
		value = nullBytes(c.Value)
	}
	now := ns(c.Now)
	args := append([]any{value, nullBytes(de), now, ns(c.ExpiresAt)}, slotArgs(c.Slot)...)
	return append(args, int64(c.Token), now), nil
}

var (
	_ store.AuditedRecorder = (*Store)(nil)
	_ store.ApprovalDenier  = (*Store)(nil)
)

// auditedCompletion is one CompleteAudited in a batch.
type auditedCompletion struct {
	args  []any // completeUpdate's
	entry auditItem
	done  bool // the update found the live claim
}

// CompleteAudited implements [store.AuditedRecorder]: the completion and,
// when it is not fenced, its audit entry, in one transaction. The calls
// that share a batch run together inside one savepoint (their fenced
// updates one by one, then their audit entries as one multi-row INSERT),
// so either all of them are written or, on an error, none is, and every
// one returns once that batch is committed.
func (s *Store) CompleteAudited(ctx context.Context, c store.Completion, e store.AuditEntry) error {
	args, err := completeArgs(c)
	if err != nil {
		return fmt.Errorf("sqlitestore: %w", err)
	}
	it := &auditedCompletion{args: args, entry: auditItem{e, auditchain.Digest(e)}}
	if err := s.w.DoMerged(ctx, "complete+audit", it, completeAudited); err != nil {
		return s.wrap(err)
	}
	if !it.done {
		return store.ErrFenced
	}
	return nil
}

func completeAudited(ctx context.Context, tx *sqliteutil.Tx, items []any) error {
	var entries []any
	for _, item := range items {
		it := item.(*auditedCompletion)
		n, err := exec(ctx, tx, completeUpdate, it.args...)
		if err != nil {
			return err
		}
		if it.done = n == 1; it.done {
			entries = append(entries, it.entry)
		}
	}
	return insertAudit(ctx, tx, entries)
}

// MarkUncertain implements [store.Store].
func (s *Store) MarkUncertain(ctx context.Context, slot store.Slot, token uint64, reason string, now, expiresAt time.Time) error {
	args := append([]any{reason, ns(now), ns(expiresAt)}, slotArgs(slot)...)
	args = append(args, int64(token), ns(now))
	return s.execFenced(ctx, `UPDATE records SET state = 'uncertain', reason = ?, updated = ?, expires = ?
		WHERE `+fenceWhere, args)
}

// Release implements [store.Store].
func (s *Store) Release(ctx context.Context, slot store.Slot, token uint64, now time.Time) error {
	args := append(slotArgs(slot), int64(token), ns(now))
	return s.execFenced(ctx, `DELETE FROM records WHERE `+fenceWhere, args)
}

// Get implements [store.Store]. It scans the records table: there is no
// index by key (see the schema), as Get serves operators, not calls.
func (s *Store) Get(ctx context.Context, key string) (store.Record, error) {
	r, err := storecodec.ScanRecord(s.db.R.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM records WHERE key = ?
		ORDER BY updated DESC LIMIT 1`, key))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Record{}, store.ErrNotFound
	}
	if err != nil {
		return store.Record{}, fmt.Errorf("sqlitestore: get: %w", err)
	}
	return r, nil
}

const approvalColumns = storecodec.ApprovalColumns

// CreateApproval implements [store.Store].
func (s *Store) CreateApproval(ctx context.Context, a store.Approval) (store.Approval, error) {
	var out store.Approval
	err := s.write(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
		cur, err := storecodec.ScanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, a.ID))
		if err == nil && ns(cur.ExpiresAt) > ns(a.CreatedAt) {
			out = cur
			return nil
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO approvals(`+approvalColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '', ?, ?, ?, ?)`,
			a.ID, a.Slot.Tenant, a.Slot.Principal, a.Slot.SessionID, a.Slot.Step, a.Slot.Tool, a.Key, a.Fingerprint,
			a.Requester, nullBytes(a.Arguments), a.Taint, ns(a.CreatedAt), storecodec.ZeroTime, ns(a.ExpiresAt), a.Definition)
		if err != nil {
			return err
		}
		out = storecodec.Pending(a)
		out.CreatedAt, out.ExpiresAt = fromNS(ns(a.CreatedAt)), fromNS(ns(a.ExpiresAt))
		if a.Arguments != nil {
			out.Arguments = append(json.RawMessage(nil), a.Arguments...)
		}
		return nil
	})
	if err != nil {
		return store.Approval{}, err
	}
	return out, nil
}

// GetApproval implements [store.Store].
func (s *Store) GetApproval(ctx context.Context, id string) (store.Approval, error) {
	a, err := storecodec.ScanApproval(s.db.R.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Approval{}, store.ErrNotFound
	}
	if err != nil {
		return store.Approval{}, fmt.Errorf("sqlitestore: get approval: %w", err)
	}
	return a, nil
}

// GrantApproval implements [store.Store].
func (s *Store) GrantApproval(ctx context.Context, id, approver string, now time.Time) (store.Approval, error) {
	return s.decide(ctx, id, approver, now, true)
}

// DenyApproval implements [store.ApprovalDenier].
func (s *Store) DenyApproval(ctx context.Context, id, approver string, now time.Time) (store.Approval, error) {
	return s.decide(ctx, id, approver, now, false)
}

// decide records approver's decision on the pending approval id (the
// columns a denial takes: see [storecodec.ScanApproval]).
func (s *Store) decide(ctx context.Context, id, approver string, now time.Time, grant bool) (store.Approval, error) {
	var out store.Approval
	err := s.write(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
		a, err := storecodec.ScanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if a.Decided() || ns(a.ExpiresAt) <= ns(now) {
			return store.ErrApprovalState
		}
		if _, err := tx.ExecContext(ctx, `UPDATE approvals SET granted = ?, approver = ?, granted_at = ? WHERE id = ?`,
			grant, approver, ns(now), id); err != nil {
			return err
		}
		out = storecodec.Decided(a, approver, fromNS(ns(now)), grant)
		return nil
	})
	if err != nil {
		return store.Approval{}, err
	}
	return out, nil
}

// AppendAudit implements [store.Store]. The entries appended concurrently
// that share a batch are chained in the batch's order and written by one
// multi-row INSERT per auditChunk entries, and each call returns once that
// batch is committed.
func (s *Store) AppendAudit(ctx context.Context, e store.AuditEntry) error {
	return s.wrap(s.w.DoMerged(ctx, "audit", auditItem{e, auditchain.Digest(e)}, insertAudit))
}

// auditItem is an entry to append with its [auditchain.Digest], computed
// by the caller's goroutine so that the writer, which holds the write
// lock, only hashes the short link.
type auditItem struct {
	e      store.AuditEntry
	digest string
}

var (
	_ store.AuditChain  = (*Store)(nil)
	_ store.AuditHeader = (*Store)(nil)
)

// auditChunk bounds the rows of one audit INSERT (and so the number of
// distinct statements the writer prepares: one per row count).
const auditChunk = 32

// auditCols is the number of columns an audit INSERT writes per row.
const auditCols = 18

// auditInserts[n] inserts n audit entries.
var auditInserts = func() []string {
	out := make([]string, auditChunk+1)
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", auditCols), ", ") + ")"
	for n := 1; n <= auditChunk; n++ {
		out[n] = `INSERT INTO audit(` + storecodec.AuditReadColumns + `) VALUES ` + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	}
	return out
}()

// insertAudit chains the entries after the head that audit_chain holds and
// inserts them, then moves the head: all in the caller's transaction (the
// writer's, which holds SQLite's write lock), so the chain's order is the
// order of the commits, across every process sharing the file. The head is
// read from the table each time, so a rolled-back savepoint leaves nothing
// behind.
func insertAudit(ctx context.Context, tx *sqliteutil.Tx, items []any) error {
	if len(items) == 0 {
		return nil
	}
	var seq int64
	var prev string
	if err := tx.QueryRowContext(ctx, `SELECT head_seq, head_hash FROM audit_chain WHERE id = 1`).Scan(&seq, &prev); err != nil {
		return fmt.Errorf("read the audit chain's head: %w", err)
	}
	args := make([]any, 0, auditCols*min(len(items), auditChunk))
	for len(items) > 0 {
		n := min(len(items), auditChunk)
		args = args[:0]
		for _, it := range items[:n] {
			seq++
			a := it.(auditItem)
			e := auditchain.ChainDigest(a.e, a.digest, uint64(seq), prev)
			prev = e.Hash
			args = append(append(args, storecodec.AuditArgs(e)...), storecodec.ChainArgs(e)...)
		}
		if _, err := tx.ExecContext(ctx, auditInserts[n], args...); err != nil {
			return err
		}
		items = items[n:]
	}
	_, err := tx.ExecContext(ctx, `UPDATE audit_chain SET head_seq = ?, head_hash = ? WHERE id = 1`, seq, prev)
	return err
}

// QueryAudit implements [store.Store].
func (s *Store) QueryAudit(ctx context.Context, q store.AuditQuery) ([]store.AuditEntry, error) {
	query, args := storecodec.AuditQuery(q, func(int) string { return "?" })
	return s.collectAudit(ctx, "query audit", query, args)
}

// ReadAuditChain implements [store.AuditChain].
func (s *Store) ReadAuditChain(ctx context.Context, after uint64, limit int) ([]store.AuditEntry, error) {
	query, args := storecodec.ChainQuery(after, limit, func(int) string { return "?" })
	return s.collectAudit(ctx, "read audit chain", query, args)
}

func (s *Store) collectAudit(ctx context.Context, what, query string, args []any) ([]store.AuditEntry, error) {
	rows, err := s.db.R.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %s: %w", what, err)
	}
	defer rows.Close()
	out, err := storecodec.CollectAudit(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %s: %w", what, err)
	}
	return out, nil
}

// LastAudit implements [store.AuditChain].
func (s *Store) LastAudit(ctx context.Context) (store.AuditEntry, error) {
	return storecodec.LastAudit(s.collectAudit(ctx, "last audit entry", storecodec.LastAuditQuery, nil))
}

// AuditAnchor implements [store.AuditChain].
func (s *Store) AuditAnchor(ctx context.Context) (store.AuditAnchor, error) {
	a, err := storecodec.ScanAnchor(s.db.R.QueryRowContext(ctx, storecodec.AnchorQuery))
	if err != nil {
		return a, fmt.Errorf("sqlitestore: audit anchor: %w", err)
	}
	return a, nil
}

// AuditHead implements [store.AuditHeader].
func (s *Store) AuditHead(ctx context.Context) (store.AuditAnchor, error) {
	h, err := storecodec.ScanAnchor(s.db.R.QueryRowContext(ctx, storecodec.HeadQuery))
	if err != nil {
		return h, fmt.Errorf("sqlitestore: audit head: %w", err)
	}
	return h, nil
}

// AddAuditCheckpoint implements [store.AuditChain].
func (s *Store) AddAuditCheckpoint(ctx context.Context, c store.AuditCheckpoint) error {
	_, err := s.w.Exec(ctx, `INSERT OR REPLACE INTO audit_checkpoints(`+storecodec.CheckpointColumns+`) VALUES (?, ?, ?, ?, ?)`,
		storecodec.CheckpointArgs(c)...)
	return s.wrap(err)
}

// AuditCheckpoints implements [store.AuditChain].
func (s *Store) AuditCheckpoints(ctx context.Context) ([]store.AuditCheckpoint, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+storecodec.CheckpointColumns+` FROM audit_checkpoints ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: audit checkpoints: %w", err)
	}
	defer rows.Close()
	out, err := storecodec.CollectCheckpoints(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: audit checkpoints: %w", err)
	}
	return out, nil
}

// TakeToken implements [store.Store].
func (s *Store) TakeToken(ctx context.Context, bucket string, l store.RateLimit, now time.Time) (bool, time.Duration, error) {
	if l.Rate <= 0 || l.Burst <= 0 {
		return true, 0, nil
	}
	var ok bool
	var wait time.Duration
	err := s.write(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
		tokens, last := float64(l.Burst), ns(now)
		err := tx.QueryRowContext(ctx, `SELECT tokens, updated FROM buckets WHERE name = ?`, bucket).Scan(&tokens, &last)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		tokens, last, ok, wait = take(tokens, last, l, ns(now))
		_, err = tx.ExecContext(ctx, `INSERT INTO buckets(name, tokens, updated, rate, burst) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT(name) DO UPDATE SET tokens = excluded.tokens, updated = excluded.updated,
			rate = excluded.rate, burst = excluded.burst`, bucket, tokens, last, l.Rate, l.Burst)
		return err
	})
	if err != nil {
		return false, 0, err
	}
	return ok, wait, nil
}

// take is the token-bucket arithmetic: refill since last (never for time
// going backwards), then take one token or say how long until one is there.
func take(tokens float64, last int64, l store.RateLimit, now int64) (float64, int64, bool, time.Duration) {
	if now > last {
		tokens = math.Min(float64(l.Burst), tokens+float64(now-last)/1e9*l.Rate)
		last = now
	}
	if tokens >= 1 {
		return tokens - 1, last, true, 0
	}
	return tokens, last, false, time.Duration(math.Ceil((1 - tokens) / l.Rate * 1e9))
}

// Purge implements [store.Store].
func (s *Store) Purge(ctx context.Context, r store.PurgeRequest) (store.PurgeStats, error) {
	var st store.PurgeStats
	now := ns(r.Now)
	err := s.write(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
		st = store.PurgeStats{}
		var err error
		if r.Concerns.Has(store.ConcernRecords) {
			if st.Records, err = exec(ctx, tx, `DELETE FROM records WHERE expires <= ?`, now); err != nil {
				return err
			}
		}
		if r.Concerns.Has(store.ConcernApprovals) {
			if st.Approvals, err = exec(ctx, tx, `DELETE FROM approvals WHERE expires <= ?`, now); err != nil {
				return err
			}
		}
		if r.Concerns.Has(store.ConcernAudit) && !r.AuditBefore.IsZero() {
			if st.Audit, err = pruneAudit(ctx, tx, ns(r.AuditBefore)); err != nil {
				return err
			}
		}
		if r.Concerns.Has(store.ConcernRateLimits) {
			_, err = exec(ctx, tx, `DELETE FROM buckets WHERE tokens + max(? - updated, 0) / 1e9 * rate >= burst`, now)
		}
		return err
	})
	if err != nil {
		return store.PurgeStats{}, err
	}
	return st, nil
}

func exec(ctx context.Context, tx *sqliteutil.Tx, query string, args ...any) (int, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// pruneAudit removes the oldest audit entries, in the chain's order, while
// they are older than before, and moves the anchor to the last one removed
// (unless it was written before the chain, at or before the anchor), so
// the entries kept still verify. The scan stops at the first entry kept.
func pruneAudit(ctx context.Context, tx *sqliteutil.Tx, before int64) (int, error) {
	var cut sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT seq FROM audit WHERE at >= ? ORDER BY seq LIMIT 1`, before).Scan(&cut); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	bound := int64(math.MaxInt64)
	if cut.Valid {
		bound = cut.Int64
	}
	if _, err := tx.ExecContext(ctx, `UPDATE audit_chain SET (anchor_seq, anchor_hash) = (SELECT seq, hash FROM audit
		WHERE seq < ? AND seq > audit_chain.anchor_seq ORDER BY seq DESC LIMIT 1)
		WHERE id = 1 AND EXISTS (SELECT 1 FROM audit WHERE seq < ? AND seq > audit_chain.anchor_seq)`, bound, bound); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM audit_checkpoints WHERE seq <= (SELECT anchor_seq FROM audit_chain WHERE id = 1)`); err != nil {
		return 0, err
	}
	return exec(ctx, tx, `DELETE FROM audit WHERE seq < ?`, bound)
}
