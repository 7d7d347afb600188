package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/internal/storecodec"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

var _ store.Store = (*Store)(nil)

// Options configures Open. A nil *Options means defaults.
type Options struct {
	// Schema is the PostgreSQL schema holding the store's tables, created
	// when missing, so several stores can share one database. Zero means
	// "toolgate".
	Schema string
	// MaxConns caps the connection pool. Zero means the URL's
	// pool_max_conns, else 32: a call waits on commits (fsync), so more
	// connections than cores keep the database busy.
	MaxConns int
}

// Store is the PostgreSQL implementation of [store.Store]. It is safe for
// concurrent use, by many goroutines and many processes sharing one
// database and schema.
type Store struct {
	pool *pgxpool.Pool
}

// migrationLock is the advisory-lock key that serializes migrations across
// processes ("toolgate" in ASCII).
const migrationLock = 0x746f6f6c67617465

// Open connects to the database at url (postgres://user:pass@host:port/db?...,
// with pgxpool's pool_max_conns and the like), applies the embedded schema
// migrations and returns the store. Close closes the pool.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Schema == "" {
		o.Schema = "toolgate"
	}
	if o.MaxConns < 0 {
		return nil, fmt.Errorf("%w: pgstore: Options.MaxConns is negative", store.ErrInvalidOptions)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("%w: pgstore: %v", store.ErrInvalidOptions, err)
	}
	switch {
	case o.MaxConns > 0:
		cfg.MaxConns = int32(o.MaxConns)
	case !strings.Contains(url, "pool_max_conns"):
		cfg.MaxConns = 32
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = o.Schema
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if err := migrate(ctx, pool, o.Schema, migrations); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: migrate: %w", err)
	}
	return &Store{pool: pool}, nil
}

// Close closes the connection pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("pgstore: ping: %w", err)
	}
	return nil
}

// migrate brings schema up to date with steps (the package's migrations;
// tests pass a prefix to make an older database).
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, steps []string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)`); err != nil {
			return err
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT version FROM schema_version`).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			_, err = tx.Exec(ctx, `INSERT INTO schema_version VALUES (0)`)
		}
		if err != nil {
			return err
		}
		if v > len(steps) {
			return fmt.Errorf("schema version %d is newer than this program's %d", v, len(steps))
		}
		for ; v < len(steps); v++ {
			if _, err := tx.Exec(ctx, steps[v]); err != nil {
				return fmt.Errorf("step %d: %w", v+1, err)
			}
		}
		_, err = tx.Exec(ctx, `UPDATE schema_version SET version = $1`, v)
		return err
	})
}

var ns, fromNS = storecodec.NS, storecodec.Time

// wrap prefixes store failures, leaving the sentinels and context errors bare.
func wrap(op string, err error) error {
	if err == nil || errors.Is(err, store.ErrFenced) || errors.Is(err, store.ErrNotFound) ||
		errors.Is(err, store.ErrApprovalState) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("pgstore: %s: %w", op, err)
}

const recordColumns = storecodec.RecordColumns

const slotWhere = `tenant = $1 AND principal = $2 AND session_id = $3 AND step = $4 AND tool = $5`

var slotArgs = storecodec.SlotArgs

// claimRetries bounds how often Claim retries when the conflicting record
// vanished (released or purged) between its insert and its lock.
const claimRetries = 16

// Claim implements [store.Store]. A free slot takes one statement (an
// insert that does nothing on conflict); a taken one a transaction that
// locks its row (SELECT … FOR UPDATE) and decides.
func (s *Store) Claim(ctx context.Context, req store.ClaimRequest) (store.Claim, error) {
	now := ns(req.Now)
	insertArgs := append(slotArgs(req.Slot), req.Key, req.Fingerprint, ns(req.LeaseExpires), now, ns(req.ExpiresAt), req.Owner)
	fresh := func(r store.Record) store.Claim {
		return store.Claim{Status: store.ClaimAcquired, Token: r.Token, Record: r}
	}
	for range claimRetries {
		r, err := storecodec.ScanRecord(s.pool.QueryRow(ctx, `INSERT INTO records(`+recordColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, 'in_progress', nextval('fencing'), $8, NULL, NULL, '', 1, $9, $9, $10, $11)
			ON CONFLICT DO NOTHING RETURNING `+recordColumns, insertArgs...))
		if err == nil {
			return fresh(r), nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return store.Claim{}, wrap("claim", err)
		}
		var out store.Claim
		gone := false
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			cur, err := storecodec.ScanRecord(tx.QueryRow(ctx, `SELECT `+recordColumns+` FROM records WHERE `+slotWhere+` FOR UPDATE`, slotArgs(req.Slot)...))
			if errors.Is(err, pgx.ErrNoRows) {
				gone = true
				return nil
			}
			if err != nil {
				return err
			}
			if ns(cur.ExpiresAt) <= now {
				// Past its retention the record counts as absent: replace it.
				r, err := storecodec.ScanRecord(tx.QueryRow(ctx, `UPDATE records SET key = $6, fingerprint = $7,
					state = 'in_progress', token = nextval('fencing'), lease_expires = $8, value = NULL, domain_error = NULL,
					reason = '', attempts = 1, created = $9, updated = $9, expires = $10, owner = $11
					WHERE `+slotWhere+` RETURNING `+recordColumns, insertArgs...))
				out = fresh(r)
				return err
			}
			switch {
			case cur.Key != req.Key:
				out = store.Claim{Status: store.ClaimMismatch, Record: cur}
				return nil
			case cur.State == store.StateDone:
				out = store.Claim{Status: store.ClaimDone, Record: cur}
				return nil
			case cur.State == store.StateInProgress && ns(cur.LeaseExpires) > now:
				out = store.Claim{Status: store.ClaimInProgress, Record: cur}
				return nil
			case !req.TakeOver:
				out = store.Claim{Status: store.ClaimUncertain, Record: cur}
				return nil
			}
			r, err := storecodec.ScanRecord(tx.QueryRow(ctx, `UPDATE records SET state = 'in_progress', token = nextval('fencing'),
				lease_expires = $6, expires = $7, attempts = attempts + 1, updated = $8, value = NULL, domain_error = NULL, reason = '',
				owner = $9
				WHERE `+slotWhere+` RETURNING `+recordColumns, append(slotArgs(req.Slot), ns(req.LeaseExpires), ns(req.ExpiresAt), now, req.Owner)...))
			out = fresh(r)
			out.Previous = cur.State
			return err
		})
		if err != nil {
			return store.Claim{}, wrap("claim", err)
		}
		if !gone {
			return out, nil
		}
	}
	return store.Claim{}, fmt.Errorf("pgstore: claim: the slot's record kept vanishing (%d tries)", claimRetries)
}

const fenceWhere = slotWhere + ` AND state = 'in_progress' AND token = $6 AND lease_expires > $7`

// execFenced runs one fenced statement (atomic on its own) and maps "no
// row changed" to ErrFenced.
func (s *Store) execFenced(ctx context.Context, op, query string, args ...any) error {
	tag, err := s.pool.Exec(ctx, query, args...)
	if err != nil {
		return wrap(op, err)
	}
	if tag.RowsAffected() != 1 {
		return store.ErrFenced
	}
	return nil
}

// Complete implements [store.Store].
func (s *Store) Complete(ctx context.Context, c store.Completion) error {
	args, err := completionArgs(c)
	if err != nil {
		return err
	}
	return s.execFenced(ctx, "complete", `UPDATE records SET state = 'done', value = $8, domain_error = $9, reason = '',
		updated = $7, expires = $10 WHERE `+fenceWhere, args...)
}

// completionArgs are c's $1–$10: the slot, the fence (token, now), the
// outcome (value or domain error) and the new expiry.
func completionArgs(c store.Completion) ([]any, error) {
	de, err := storecodec.EncodeDomainError(c.DomainError)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	var value []byte
	if de == nil {
		value = c.Value
	}
	return append(slotArgs(c.Slot), int64(c.Token), ns(c.Now), value, de, ns(c.ExpiresAt)), nil
}

var _ store.AuditedRecorder = (*Store)(nil)

// completeAuditedSQL is the fenced completion and, only when it changed the
// row, the call's audit entry, as one statement: the INSERT reads the
// UPDATE's result, so both land in one commit or neither does. Under READ
// COMMITTED, concurrent completions of one claim queue on the row's lock
// and re-check the fence once the first commits, so exactly one inserts.
var completeAuditedSQL = `WITH done AS (UPDATE records SET state = 'done', value = $8, domain_error = $9, reason = '',
		updated = $7, expires = $10 WHERE ` + fenceWhere + ` RETURNING 1),
	` + chainHead(25, "EXISTS (SELECT 1 FROM done)") + `
	INSERT INTO audit(` + storecodec.AuditReadColumns + `)
	SELECT $11::bigint, $12::text, $13::text, $14::text, $15::text, $16::text, $17::integer, $18::text, $19::text,
		$20::text, $21::text, $22::text, $23::text, $24::bigint, ` + chainValues + ` FROM head`

// chainHead is the CTE "head" that moves the audit chain's head one entry
// on, the entry whose [auditchain.Digest] is the text parameter $digest, when cond
// holds: it takes audit_chain's row lock (a concurrent append waits for
// this one's commit, then chains after it), and yields the new entry's
// sequence number, prev and hash ([auditchain.Hash], computed by
// PostgreSQL's sha256). Every SET expression reads the row as it was.
func chainHead(digest int, cond string) string {
	return fmt.Sprintf(`head AS (UPDATE audit_chain SET head_seq = head_seq + 1, head_prev = head_hash,
		head_hash = encode(sha256(convert_to('toolgate-audit/%d' || E'\n' || (head_seq + 1)::text || E'\n' || head_hash || E'\n'
			|| $%d::text, 'UTF8')), 'hex')
		WHERE id = 1 AND %s RETURNING head_seq, head_prev, head_hash)`, auditchain.Version, digest, cond)
}

// chainValues are the chain columns' values from chainHead's "head".
var chainValues = fmt.Sprintf(`head.head_seq, head.head_prev, head.head_hash, %d`, auditchain.Version)

// CompleteAudited implements [store.AuditedRecorder]: one statement, so a
// completed call waits for one commit instead of two.
func (s *Store) CompleteAudited(ctx context.Context, c store.Completion, e store.AuditEntry) error {
	args, err := completionArgs(c)
	if err != nil {
		return err
	}
	return s.execFenced(ctx, "complete", completeAuditedSQL, append(append(args, storecodec.AuditArgs(e)...), auditchain.Digest(e))...)
}

// MarkUncertain implements [store.Store].
func (s *Store) MarkUncertain(ctx context.Context, slot store.Slot, token uint64, reason string, now, expiresAt time.Time) error {
	return s.execFenced(ctx, "mark uncertain", `UPDATE records SET state = 'uncertain', reason = $8, updated = $7, expires = $9
		WHERE `+fenceWhere, append(slotArgs(slot), int64(token), ns(now), reason, ns(expiresAt))...)
}

// Release implements [store.Store].
func (s *Store) Release(ctx context.Context, slot store.Slot, token uint64, now time.Time) error {
	return s.execFenced(ctx, "release", `DELETE FROM records WHERE `+fenceWhere, append(slotArgs(slot), int64(token), ns(now))...)
}

// Get implements [store.Store].
func (s *Store) Get(ctx context.Context, key string) (store.Record, error) {
	r, err := storecodec.ScanRecord(s.pool.QueryRow(ctx, `SELECT `+recordColumns+` FROM records WHERE key = $1
		ORDER BY updated DESC LIMIT 1`, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Record{}, store.ErrNotFound
	}
	if err != nil {
		return store.Record{}, wrap("get", err)
	}
	return r, nil
}

const approvalColumns = storecodec.ApprovalColumns

// CreateApproval implements [store.Store]: one upsert that replaces only an
// approval expired by a.CreatedAt; otherwise the stored one is returned.
func (s *Store) CreateApproval(ctx context.Context, a store.Approval) (store.Approval, error) {
	var args []byte
	if a.Arguments != nil {
		args = a.Arguments
	}
	for range claimRetries {
		out, err := storecodec.ScanApproval(s.pool.QueryRow(ctx, `INSERT INTO approvals AS a (`+approvalColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
			ON CONFLICT (id) DO UPDATE SET tenant = excluded.tenant, session_id = excluded.session_id, step = excluded.step,
				tool = excluded.tool, key = excluded.key, fingerprint = excluded.fingerprint, requester = excluded.requester,
				arguments = excluded.arguments, taint = excluded.taint, granted = excluded.granted, approver = excluded.approver,
				created = excluded.created, granted_at = excluded.granted_at, expires = excluded.expires,
				principal = excluded.principal, definition = excluded.definition
			WHERE a.expires <= excluded.created
			RETURNING `+approvalColumns,
			a.ID, a.Slot.Tenant, a.Slot.Principal, a.Slot.SessionID, a.Slot.Step, a.Slot.Tool, a.Key, a.Fingerprint,
			a.Requester, args, a.Taint, false, "", ns(a.CreatedAt), ns(time.Time{}), ns(a.ExpiresAt), a.Definition))
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return store.Approval{}, wrap("create approval", err)
		}
		// A live approval with that ID exists: return it, unless it was
		// purged in between (then try again).
		out, err = s.GetApproval(ctx, a.ID)
		if !errors.Is(err, store.ErrNotFound) {
			return out, err
		}
	}
	return store.Approval{}, fmt.Errorf("pgstore: create approval: the approval kept vanishing (%d tries)", claimRetries)
}

// GetApproval implements [store.Store].
func (s *Store) GetApproval(ctx context.Context, id string) (store.Approval, error) {
	a, err := storecodec.ScanApproval(s.pool.QueryRow(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Approval{}, store.ErrNotFound
	}
	if err != nil {
		return store.Approval{}, wrap("get approval", err)
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

// decide records approver's decision on the pending approval id in one
// conditional update (the columns a denial takes: see
// [storecodec.ScanApproval]).
func (s *Store) decide(ctx context.Context, id, approver string, now time.Time, grant bool) (store.Approval, error) {
	a, err := storecodec.ScanApproval(s.pool.QueryRow(ctx, `UPDATE approvals SET granted = $4, approver = $2, granted_at = $3
		WHERE id = $1 AND NOT granted AND approver = '' AND expires > $3 RETURNING `+approvalColumns, id, approver, ns(now), grant))
	if err == nil {
		return a, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return store.Approval{}, wrap("decide approval", err)
	}
	if _, err := s.GetApproval(ctx, id); err != nil {
		return store.Approval{}, err
	}
	return store.Approval{}, store.ErrApprovalState
}

// AppendAudit implements [store.Store]: one statement moves the chain's
// head (under its row lock) and inserts the entry chained after it.
func (s *Store) AppendAudit(ctx context.Context, e store.AuditEntry) error {
	_, err := s.pool.Exec(ctx, `WITH `+chainHead(15, "true")+`
		INSERT INTO audit(`+storecodec.AuditReadColumns+`)
		SELECT $1::bigint, $2::text, $3::text, $4::text, $5::text, $6::text, $7::integer, $8::text, $9::text,
			$10::text, $11::text, $12::text, $13::text, $14::bigint, `+chainValues+` FROM head`,
		append(storecodec.AuditArgs(e), auditchain.Digest(e))...)
	return wrap("append audit", err)
}

var (
	_ store.AuditChain     = (*Store)(nil)
	_ store.AuditHeader    = (*Store)(nil)
	_ store.ApprovalDenier = (*Store)(nil)
)

// ReadAuditChain implements [store.AuditChain].
func (s *Store) ReadAuditChain(ctx context.Context, after uint64, limit int) ([]store.AuditEntry, error) {
	query, args := storecodec.ChainQuery(after, limit, func(n int) string { return fmt.Sprintf("$%d", n) })
	return s.collectAudit(ctx, "read audit chain", query, args)
}

func (s *Store) collectAudit(ctx context.Context, op, query string, args []any) ([]store.AuditEntry, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	defer rows.Close()
	out, err := storecodec.CollectAudit(rows)
	if err != nil {
		return nil, wrap(op, err)
	}
	return out, nil
}

// LastAudit implements [store.AuditChain].
func (s *Store) LastAudit(ctx context.Context) (store.AuditEntry, error) {
	return storecodec.LastAudit(s.collectAudit(ctx, "last audit entry", storecodec.LastAuditQuery, nil))
}

// AuditAnchor implements [store.AuditChain].
func (s *Store) AuditAnchor(ctx context.Context) (store.AuditAnchor, error) {
	a, err := storecodec.ScanAnchor(s.pool.QueryRow(ctx, storecodec.AnchorQuery))
	return a, wrap("audit anchor", err)
}

// AuditHead implements [store.AuditHeader].
func (s *Store) AuditHead(ctx context.Context) (store.AuditAnchor, error) {
	h, err := storecodec.ScanAnchor(s.pool.QueryRow(ctx, storecodec.HeadQuery))
	return h, wrap("audit head", err)
}

// AddAuditCheckpoint implements [store.AuditChain].
func (s *Store) AddAuditCheckpoint(ctx context.Context, c store.AuditCheckpoint) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO audit_checkpoints(`+storecodec.CheckpointColumns+`) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (seq) DO UPDATE SET hash = excluded.hash, at = excluded.at, key_id = excluded.key_id, sig = excluded.sig`,
		storecodec.CheckpointArgs(c)...)
	return wrap("add audit checkpoint", err)
}

// AuditCheckpoints implements [store.AuditChain].
func (s *Store) AuditCheckpoints(ctx context.Context) ([]store.AuditCheckpoint, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+storecodec.CheckpointColumns+` FROM audit_checkpoints ORDER BY seq`)
	if err != nil {
		return nil, wrap("audit checkpoints", err)
	}
	defer rows.Close()
	out, err := storecodec.CollectCheckpoints(rows)
	if err != nil {
		return nil, wrap("audit checkpoints", err)
	}
	return out, nil
}

// QueryAudit implements [store.Store].
func (s *Store) QueryAudit(ctx context.Context, q store.AuditQuery) ([]store.AuditEntry, error) {
	query, args := storecodec.AuditQuery(q, func(n int) string { return fmt.Sprintf("$%d", n) })
	return s.collectAudit(ctx, "query audit", query, args)
}

// refill is the bucket's tokens at $3 (now): refilled since updated at
// rate, up to burst, and never for time going backwards.
const refill = `CASE WHEN $3 > b.updated THEN least($5::float8, b.tokens + ($3 - b.updated)::float8 / 1e9 * $4) ELSE b.tokens END`

// TakeToken implements [store.Store]: one upsert, which locks the bucket's
// row, refills it, takes a token when there is one and reports whether it
// did (took), so the bucket is shared by every process.
func (s *Store) TakeToken(ctx context.Context, bucket string, l store.RateLimit, now time.Time) (bool, time.Duration, error) {
	if l.Rate <= 0 || l.Burst <= 0 {
		return true, 0, nil
	}
	var took bool
	var tokens float64
	err := s.pool.QueryRow(ctx, `INSERT INTO buckets AS b (name, tokens, updated, rate, burst, took)
		VALUES ($1, $2, $3, $4, $5, true)
		ON CONFLICT (name) DO UPDATE SET
			took = `+refill+` >= 1,
			tokens = CASE WHEN `+refill+` >= 1 THEN `+refill+` - 1 ELSE `+refill+` END,
			updated = greatest(b.updated, $3), rate = $4, burst = $5
		RETURNING took, tokens`, bucket, float64(l.Burst)-1, ns(now), l.Rate, l.Burst).Scan(&took, &tokens)
	if err != nil {
		return false, 0, wrap("take token", err)
	}
	if took {
		return true, 0, nil
	}
	return false, time.Duration(math.Ceil((1 - tokens) / l.Rate * 1e9)), nil
}

// Purge implements [store.Store], in one transaction.
func (s *Store) Purge(ctx context.Context, r store.PurgeRequest) (store.PurgeStats, error) {
	var st store.PurgeStats
	now := ns(r.Now)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		st = store.PurgeStats{}
		del := func(n *int, query string, arg int64) error {
			tag, err := tx.Exec(ctx, query, arg)
			if err == nil && n != nil {
				*n = int(tag.RowsAffected())
			}
			return err
		}
		var err error
		if r.Concerns.Has(store.ConcernRecords) {
			err = del(&st.Records, `DELETE FROM records WHERE expires <= $1`, now)
		}
		if err == nil && r.Concerns.Has(store.ConcernApprovals) {
			err = del(&st.Approvals, `DELETE FROM approvals WHERE expires <= $1`, now)
		}
		if err == nil && r.Concerns.Has(store.ConcernAudit) && !r.AuditBefore.IsZero() {
			st.Audit, err = pruneAudit(ctx, tx, ns(r.AuditBefore))
		}
		if err == nil && r.Concerns.Has(store.ConcernRateLimits) {
			err = del(nil, `DELETE FROM buckets WHERE tokens + greatest($1 - updated, 0)::float8 / 1e9 * rate >= burst`, now)
		}
		return err
	})
	if err != nil {
		return store.PurgeStats{}, wrap("purge", err)
	}
	return st, nil
}

// pruneAudit removes the oldest audit entries, in the chain's order, while
// they are older than before, and moves the anchor to the last one removed
// (unless it was written before the chain, at or before the anchor), so
// the entries kept still verify. It first takes the chain's row lock: no
// append is in flight meanwhile, so the entries it sees are a prefix of
// the chain and none commits behind its back.
func pruneAudit(ctx context.Context, tx pgx.Tx, before int64) (int, error) {
	var head int64
	if err := tx.QueryRow(ctx, `SELECT head_seq FROM audit_chain WHERE id = 1 FOR UPDATE`).Scan(&head); err != nil {
		return 0, err
	}
	var bound int64
	if err := tx.QueryRow(ctx, `SELECT coalesce((SELECT seq FROM audit WHERE at >= $1 ORDER BY seq LIMIT 1), $2)`,
		before, head+1).Scan(&bound); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `UPDATE audit_chain SET (anchor_seq, anchor_hash) = (SELECT seq, hash FROM audit
		WHERE seq < $1 AND seq > audit_chain.anchor_seq ORDER BY seq DESC LIMIT 1)
		WHERE id = 1 AND EXISTS (SELECT 1 FROM audit WHERE seq < $1 AND seq > audit_chain.anchor_seq)`, bound); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM audit_checkpoints WHERE seq <= (SELECT anchor_seq FROM audit_chain WHERE id = 1)`); err != nil {
		return 0, err
	}
	tag, err := tx.Exec(ctx, `DELETE FROM audit WHERE seq < $1`, bound)
	return int(tag.RowsAffected()), err
}
