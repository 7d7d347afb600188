package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/sqliteutil"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

var _ gateway.Store = (*Store)(nil)

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
}

// Store is the SQLite implementation of gateway.Store. It is safe for
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
// and applies the embedded schema migrations.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.MaxBatch < 0 {
		return nil, fmt.Errorf("%w: sqlitestore: Options.MaxBatch is negative", gateway.ErrInvalidOptions)
	}
	if o.BusyTimeout < 0 || o.Readers < 0 {
		return nil, fmt.Errorf("%w: sqlitestore: Options.BusyTimeout and Options.Readers must not be negative", gateway.ErrInvalidOptions)
	}
	db, err := sqliteutil.Open(ctx, path, &sqliteutil.Options{BusyTimeout: o.BusyTimeout, Readers: o.Readers})
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	if err := sqliteutil.Migrate(ctx, db.W, migrations); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	s := &Store{db: db}
	s.w = sqliteutil.NewWriter(db.W, o.MaxBatch, &sqliteutil.BatchHooks{Begin: s.loadToken, End: s.storeToken})
	return s, nil
}

// Close finishes queued writes and closes the database. The Store must not
// be used afterwards.
func (s *Store) Close() error {
	return errors.Join(s.w.Close(), s.db.Close())
}

// zeroTime encodes the zero time.Time (whose UnixNano is undefined).
const zeroTime = math.MinInt64

func ns(t time.Time) int64 {
	if t.IsZero() {
		return zeroTime
	}
	return t.UnixNano()
}

func fromNS(v int64) time.Time {
	if v == zeroTime {
		return time.Time{}
	}
	return time.Unix(0, v).UTC()
}

func (s *Store) write(ctx context.Context, fn sqliteutil.WriteFunc) error {
	return s.wrap(s.w.Do(ctx, fn))
}

func (s *Store) writeBare(ctx context.Context, fn sqliteutil.WriteFunc) error {
	return s.wrap(s.w.DoBare(ctx, fn))
}

// wrap prefixes store failures, leaving the sentinels and context errors bare.
func (s *Store) wrap(err error) error {
	if err != nil && !errors.Is(err, gateway.ErrFenced) && !errors.Is(err, gateway.ErrNotFound) &&
		!errors.Is(err, gateway.ErrApprovalState) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("sqlitestore: %w", err)
	}
	return err
}

const recordColumns = `tenant, session_id, step, tool, principal, key, fingerprint, state, token,
	lease_expires, value, domain_error, reason, attempts, created, updated, expires`

type rowScanner interface{ Scan(dest ...any) error }

func scanRecord(row rowScanner) (gateway.Record, error) {
	var r gateway.Record
	var state string
	var token int64
	var lease, created, updated, expires int64
	var value, domainErr []byte
	err := row.Scan(&r.Slot.Tenant, &r.Slot.SessionID, &r.Slot.Step, &r.Slot.Tool, &r.Slot.Principal, &r.Key,
		&r.Fingerprint, &state, &token, &lease, &value, &domainErr, &r.Reason, &r.Attempts, &created, &updated, &expires)
	if err != nil {
		return r, err
	}
	r.Principal = r.Slot.Principal
	r.State = gateway.State(state)
	r.Token = uint64(token)
	r.LeaseExpires, r.CreatedAt, r.UpdatedAt, r.ExpiresAt = fromNS(lease), fromNS(created), fromNS(updated), fromNS(expires)
	if value != nil {
		r.Value = json.RawMessage(value)
	}
	if domainErr != nil {
		// Numbers stay json.Number so a replayed refusal's details are the
		// recorded bytes ("974.50"), not a float's rendering ("974.5").
		r.DomainError = new(tools.DomainError)
		dec := json.NewDecoder(bytes.NewReader(domainErr))
		dec.UseNumber()
		if err := dec.Decode(r.DomainError); err != nil {
			return r, fmt.Errorf("decode domain error: %w", err)
		}
	}
	return r, nil
}

func nullBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

func encodeDomainError(de *tools.DomainError) (any, error) {
	if de == nil {
		return nil, nil
	}
	b, err := json.Marshal(de)
	if err != nil {
		return nil, fmt.Errorf("encode domain error: %w", err)
	}
	return b, nil
}

const slotWhere = `tenant = ? AND principal = ? AND session_id = ? AND step = ? AND tool = ?`

func slotArgs(s gateway.Slot) []any { return []any{s.Tenant, s.Principal, s.SessionID, s.Step, s.Tool} }

// Claim implements gateway.Store.
func (s *Store) Claim(ctx context.Context, req gateway.ClaimRequest) (gateway.Claim, error) {
	var out gateway.Claim
	// Without a savepoint: a claim that fails part-way has at most deleted
	// an expired record (which counts as absent anyway) or used a token.
	err := s.writeBare(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
		out = gateway.Claim{}
		now := ns(req.Now)
		cur, err := scanRecord(tx.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM records WHERE `+slotWhere, slotArgs(req.Slot)...))
		absent := errors.Is(err, sql.ErrNoRows)
		if err != nil && !absent {
			return err
		}
		if !absent && ns(cur.ExpiresAt) <= now {
			if _, err := tx.ExecContext(ctx, `DELETE FROM records WHERE `+slotWhere, slotArgs(req.Slot)...); err != nil {
				return err
			}
			absent = true
		}
		switch {
		case absent:
			token := s.nextToken()
			_, err = tx.ExecContext(ctx, `INSERT INTO records(`+recordColumns+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, 'in_progress', ?, ?, NULL, NULL, '', 1, ?, ?, ?)`,
				req.Slot.Tenant, req.Slot.SessionID, req.Slot.Step, req.Slot.Tool, req.Slot.Principal, req.Key,
				req.Fingerprint, int64(token), ns(req.LeaseExpires), now, now, ns(req.ExpiresAt))
			if err != nil {
				return err
			}
			out.Status, out.Token = gateway.ClaimAcquired, token
			out.Record = gateway.Record{Slot: req.Slot, Principal: req.Slot.Principal, Key: req.Key, Fingerprint: req.Fingerprint,
				State: gateway.StateInProgress, Token: token, LeaseExpires: fromNS(ns(req.LeaseExpires)), Attempts: 1,
				CreatedAt: fromNS(now), UpdatedAt: fromNS(now), ExpiresAt: fromNS(ns(req.ExpiresAt))}
			return nil
		case cur.Key != req.Key:
			out.Status, out.Record = gateway.ClaimMismatch, cur
			return nil
		case cur.State == gateway.StateDone:
			out.Status, out.Record = gateway.ClaimDone, cur
			return nil
		case cur.State == gateway.StateInProgress && ns(cur.LeaseExpires) > now:
			out.Status, out.Record = gateway.ClaimInProgress, cur
			return nil
		case !req.TakeOver:
			out.Status, out.Record = gateway.ClaimUncertain, cur
			return nil
		}
		token := s.nextToken()
		_, err = tx.ExecContext(ctx, `UPDATE records SET state = 'in_progress', token = ?, lease_expires = ?,
			expires = ?, attempts = attempts + 1, updated = ?, value = NULL, domain_error = NULL, reason = ''
			WHERE `+slotWhere, append([]any{int64(token), ns(req.LeaseExpires), ns(req.ExpiresAt), now}, slotArgs(req.Slot)...)...)
		if err != nil {
			return err
		}
		out.Status, out.Token, out.Previous = gateway.ClaimAcquired, token, cur.State
		cur.State, cur.Token, cur.LeaseExpires, cur.ExpiresAt = gateway.StateInProgress, token, fromNS(ns(req.LeaseExpires)), fromNS(ns(req.ExpiresAt))
		cur.Attempts++
		cur.UpdatedAt = fromNS(now)
		cur.Value, cur.DomainError, cur.Reason = nil, nil, ""
		out.Record = cur
		return nil
	})
	if err != nil {
		return gateway.Claim{}, err
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
		return gateway.ErrFenced
	}
	return nil
}

const fenceWhere = slotWhere + ` AND state = 'in_progress' AND token = ? AND lease_expires > ?`

// Complete implements gateway.Store.
func (s *Store) Complete(ctx context.Context, c gateway.Completion) error {
	de, err := encodeDomainError(c.DomainError)
	if err != nil {
		return fmt.Errorf("sqlitestore: %w", err)
	}
	var value any
	if c.DomainError == nil {
		value = nullBytes(c.Value)
	}
	now := ns(c.Now)
	args := append([]any{value, de, now, ns(c.ExpiresAt)}, slotArgs(c.Slot)...)
	args = append(args, int64(c.Token), now)
	return s.execFenced(ctx, `UPDATE records SET state = 'done', value = ?, domain_error = ?, reason = '',
		updated = ?, expires = ? WHERE `+fenceWhere, args)
}

// MarkUncertain implements gateway.Store.
func (s *Store) MarkUncertain(ctx context.Context, slot gateway.Slot, token uint64, reason string, now, expiresAt time.Time) error {
	args := append([]any{reason, ns(now), ns(expiresAt)}, slotArgs(slot)...)
	args = append(args, int64(token), ns(now))
	return s.execFenced(ctx, `UPDATE records SET state = 'uncertain', reason = ?, updated = ?, expires = ?
		WHERE `+fenceWhere, args)
}

// Release implements gateway.Store.
func (s *Store) Release(ctx context.Context, slot gateway.Slot, token uint64, now time.Time) error {
	args := append(slotArgs(slot), int64(token), ns(now))
	return s.execFenced(ctx, `DELETE FROM records WHERE `+fenceWhere, args)
}

// Get implements gateway.Store. It scans the records table: there is no
// index by key (see the schema), as Get serves operators, not calls.
func (s *Store) Get(ctx context.Context, key string) (gateway.Record, error) {
	r, err := scanRecord(s.db.R.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM records WHERE key = ?
		ORDER BY updated DESC LIMIT 1`, key))
	if errors.Is(err, sql.ErrNoRows) {
		return gateway.Record{}, gateway.ErrNotFound
	}
	if err != nil {
		return gateway.Record{}, fmt.Errorf("sqlitestore: get: %w", err)
	}
	return r, nil
}

const approvalColumns = `id, tenant, session_id, step, tool, key, fingerprint, requester, arguments,
	granted, approver, created, granted_at, expires, taint, principal`

func scanApproval(row rowScanner) (gateway.Approval, error) {
	var a gateway.Approval
	var args []byte
	var granted int
	var created, grantedAt, expires int64
	err := row.Scan(&a.ID, &a.Slot.Tenant, &a.Slot.SessionID, &a.Slot.Step, &a.Slot.Tool, &a.Key, &a.Fingerprint,
		&a.Requester, &args, &granted, &a.Approver, &created, &grantedAt, &expires, &a.Taint, &a.Slot.Principal)
	if err != nil {
		return a, err
	}
	if args != nil {
		a.Arguments = json.RawMessage(args)
	}
	a.Granted = granted != 0
	a.CreatedAt, a.GrantedAt, a.ExpiresAt = fromNS(created), fromNS(grantedAt), fromNS(expires)
	return a, nil
}

// CreateApproval implements gateway.Store.
func (s *Store) CreateApproval(ctx context.Context, a gateway.Approval) (gateway.Approval, error) {
	var out gateway.Approval
	err := s.write(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
		cur, err := scanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, a.ID))
		if err == nil && ns(cur.ExpiresAt) > ns(a.CreatedAt) {
			out = cur
			return nil
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		granted := 0
		if a.Granted {
			granted = 1
		}
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO approvals(`+approvalColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.ID, a.Slot.Tenant, a.Slot.SessionID, a.Slot.Step, a.Slot.Tool, a.Key, a.Fingerprint, a.Requester,
			nullBytes(a.Arguments), granted, a.Approver, ns(a.CreatedAt), ns(a.GrantedAt), ns(a.ExpiresAt), a.Taint, a.Slot.Principal)
		if err != nil {
			return err
		}
		out = a
		out.CreatedAt, out.GrantedAt, out.ExpiresAt = fromNS(ns(a.CreatedAt)), fromNS(ns(a.GrantedAt)), fromNS(ns(a.ExpiresAt))
		if a.Arguments != nil {
			out.Arguments = append(json.RawMessage(nil), a.Arguments...)
		}
		return nil
	})
	if err != nil {
		return gateway.Approval{}, err
	}
	return out, nil
}

// GetApproval implements gateway.Store.
func (s *Store) GetApproval(ctx context.Context, id string) (gateway.Approval, error) {
	a, err := scanApproval(s.db.R.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return gateway.Approval{}, gateway.ErrNotFound
	}
	if err != nil {
		return gateway.Approval{}, fmt.Errorf("sqlitestore: get approval: %w", err)
	}
	return a, nil
}

// GrantApproval implements gateway.Store.
func (s *Store) GrantApproval(ctx context.Context, id, approver string, now time.Time) (gateway.Approval, error) {
	var out gateway.Approval
	err := s.write(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
		a, err := scanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return gateway.ErrNotFound
		}
		if err != nil {
			return err
		}
		if a.Granted || ns(a.ExpiresAt) <= ns(now) {
			return gateway.ErrApprovalState
		}
		if _, err := tx.ExecContext(ctx, `UPDATE approvals SET granted = 1, approver = ?, granted_at = ? WHERE id = ?`,
			approver, ns(now), id); err != nil {
			return err
		}
		a.Granted, a.Approver, a.GrantedAt = true, approver, fromNS(ns(now))
		out = a
		return nil
	})
	if err != nil {
		return gateway.Approval{}, err
	}
	return out, nil
}

// AppendAudit implements gateway.Store.
func (s *Store) AppendAudit(ctx context.Context, e gateway.AuditEntry) error {
	_, err := s.w.Exec(ctx, `INSERT INTO audit(at, tenant, principal, session_id, step, tool, key,
		decision, reason, outcome, approval_id, latency, actor, taint) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ns(e.Time), e.Tenant, e.Principal, e.SessionID, e.Step, e.Tool, e.Key, e.Decision, e.Reason,
		e.Outcome, e.ApprovalID, int64(e.Latency), e.Actor, e.Taint)
	return s.wrap(err)
}

// QueryAudit implements gateway.Store.
func (s *Store) QueryAudit(ctx context.Context, q gateway.AuditQuery) ([]gateway.AuditEntry, error) {
	var where []string
	var args []any
	for _, f := range []struct{ col, v string }{{"tenant", q.Tenant}, {"principal", q.Principal}, {"tool", q.Tool}, {"key", q.Key}} {
		if f.v != "" {
			where = append(where, f.col+" = ?")
			args = append(args, f.v)
		}
	}
	if !q.Since.IsZero() {
		where = append(where, "at >= ?")
		args = append(args, ns(q.Since))
	}
	if !q.Until.IsZero() {
		where = append(where, "at < ?")
		args = append(args, ns(q.Until))
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 1000
	}
	query := `SELECT at, tenant, principal, session_id, step, tool, key, decision, reason, outcome, approval_id, latency, actor, taint FROM audit`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY at, seq LIMIT ?"
	args = append(args, limit)
	rows, err := s.db.R.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: query audit: %w", err)
	}
	defer rows.Close()
	var out []gateway.AuditEntry
	for rows.Next() {
		var e gateway.AuditEntry
		var at, latency int64
		if err := rows.Scan(&at, &e.Tenant, &e.Principal, &e.SessionID, &e.Step, &e.Tool, &e.Key, &e.Decision,
			&e.Reason, &e.Outcome, &e.ApprovalID, &latency, &e.Actor, &e.Taint); err != nil {
			return nil, fmt.Errorf("sqlitestore: query audit: %w", err)
		}
		e.Time, e.Latency = fromNS(at), time.Duration(latency)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: query audit: %w", err)
	}
	return out, nil
}

// TakeToken implements gateway.Store.
func (s *Store) TakeToken(ctx context.Context, bucket string, l gateway.RateLimit, now time.Time) (bool, time.Duration, error) {
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
func take(tokens float64, last int64, l gateway.RateLimit, now int64) (float64, int64, bool, time.Duration) {
	if now > last {
		tokens = math.Min(float64(l.Burst), tokens+float64(now-last)/1e9*l.Rate)
		last = now
	}
	if tokens >= 1 {
		return tokens - 1, last, true, 0
	}
	return tokens, last, false, time.Duration(math.Ceil((1 - tokens) / l.Rate * 1e9))
}

// Purge implements gateway.Store.
func (s *Store) Purge(ctx context.Context, r gateway.PurgeRequest) (gateway.PurgeStats, error) {
	var st gateway.PurgeStats
	now := ns(r.Now)
	err := s.write(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
		st = gateway.PurgeStats{}
		n, err := exec(ctx, tx, `DELETE FROM records WHERE expires <= ?`, now)
		if err != nil {
			return err
		}
		st.Records = n
		if st.Approvals, err = exec(ctx, tx, `DELETE FROM approvals WHERE expires <= ?`, now); err != nil {
			return err
		}
		if !r.AuditBefore.IsZero() {
			if st.Audit, err = exec(ctx, tx, `DELETE FROM audit WHERE at < ?`, ns(r.AuditBefore)); err != nil {
				return err
			}
		}
		_, err = exec(ctx, tx, `DELETE FROM buckets WHERE tokens + max(? - updated, 0) / 1e9 * rate >= burst`, now)
		return err
	})
	if err != nil {
		return gateway.PurgeStats{}, err
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
