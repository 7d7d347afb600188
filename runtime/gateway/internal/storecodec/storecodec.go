// Package storecodec is what the gateway's durable stores share about their
// rows: one column list and one scanner per concern (records, approvals,
// audit entries) for the SQL stores, the time encoding, the domain-error
// encoding every store uses, and the audit query's filter. Each store
// keeps its own dialect's SQL; what a row means is written once, here.
package storecodec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// Row is one result row: *sql.Row, *sql.Rows, pgx.Row and pgx.Rows.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result set: *sql.Rows and pgx.Rows.
type Rows interface {
	Row
	Next() bool
	Err() error
}

// ZeroTime encodes the zero [time.Time] (whose UnixNano is undefined), so
// that it sorts before every real instant.
const ZeroTime int64 = math.MinInt64

// NS encodes t as Unix nanoseconds, the zero time as [ZeroTime].
func NS(t time.Time) int64 {
	if t.IsZero() {
		return ZeroTime
	}
	return t.UnixNano()
}

// Time decodes NS.
func Time(v int64) time.Time {
	if v == ZeroTime {
		return time.Time{}
	}
	return time.Unix(0, v).UTC()
}

// Round is t as a store returns it after storing it: UTC, at nanosecond
// precision since the epoch.
func Round(t time.Time) time.Time { return Time(NS(t)) }

// EncodeDomainError encodes a domain error for storage; nil stays nil.
func EncodeDomainError(de *tools.DomainError) ([]byte, error) {
	if de == nil {
		return nil, nil
	}
	b, err := json.Marshal(de)
	if err != nil {
		return nil, fmt.Errorf("encode domain error: %w", err)
	}
	return b, nil
}

// DecodeDomainError decodes EncodeDomainError's bytes. Numbers stay
// [json.Number] so a replayed refusal's details are the recorded bytes
// ("974.50"), not a float's rendering ("974.5").
func DecodeDomainError(b []byte) (*tools.DomainError, error) {
	de := new(tools.DomainError)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(de); err != nil {
		return nil, fmt.Errorf("decode domain error: %w", err)
	}
	return de, nil
}

// RecordColumns are the records table's columns in ScanRecord's order; the
// slot's columns come first, in SlotArgs' order.
const RecordColumns = `tenant, principal, session_id, step, tool, key, fingerprint, state, token,
	lease_expires, value, domain_error, reason, attempts, created, updated, expires, owner`

// SlotArgs are a slot's values in the order of its columns.
func SlotArgs(s store.Slot) []any { return []any{s.Tenant, s.Principal, s.SessionID, s.Step, s.Tool} }

// ScanRecord scans a row of [RecordColumns].
func ScanRecord(row Row) (store.Record, error) {
	var r store.Record
	var state string
	var token, lease, created, updated, expires int64
	var value, domainErr []byte
	err := row.Scan(&r.Slot.Tenant, &r.Slot.Principal, &r.Slot.SessionID, &r.Slot.Step, &r.Slot.Tool, &r.Key,
		&r.Fingerprint, &state, &token, &lease, &value, &domainErr, &r.Reason, &r.Attempts, &created, &updated, &expires, &r.Owner)
	if err != nil {
		return r, err
	}
	r.Principal = r.Slot.Principal
	r.State = store.State(state)
	r.Token = uint64(token)
	r.LeaseExpires, r.CreatedAt, r.UpdatedAt, r.ExpiresAt = Time(lease), Time(created), Time(updated), Time(expires)
	if value != nil {
		r.Value = json.RawMessage(value)
	}
	if domainErr != nil {
		if r.DomainError, err = DecodeDomainError(domainErr); err != nil {
			return r, err
		}
	}
	return r, nil
}

// ApprovalColumns are the approvals table's columns in ScanApproval's
// order.
const ApprovalColumns = `id, tenant, principal, session_id, step, tool, key, fingerprint, requester, arguments,
	taint, granted, approver, created, granted_at, expires, definition`

// ScanApproval scans a row of [ApprovalColumns]. granted may be a boolean or
// an integer 0/1 column. A denial has no columns of its own: a row whose
// approver is set and which is not granted was denied by that approver at
// granted_at (the time of the decision), so that stores written before
// denials existed need no migration (their approver was set only by a
// grant).
func ScanApproval(row Row) (store.Approval, error) {
	var a store.Approval
	var args []byte
	var created, grantedAt, expires int64
	err := row.Scan(&a.ID, &a.Slot.Tenant, &a.Slot.Principal, &a.Slot.SessionID, &a.Slot.Step, &a.Slot.Tool, &a.Key,
		&a.Fingerprint, &a.Requester, &args, &a.Taint, &a.Granted, &a.Approver, &created, &grantedAt, &expires, &a.Definition)
	if err != nil {
		return a, err
	}
	if args != nil {
		a.Arguments = json.RawMessage(args)
	}
	a.CreatedAt, a.GrantedAt, a.ExpiresAt = Time(created), Time(grantedAt), Time(expires)
	return Denial(a), nil
}

// Denial returns a read from columns that keep a denial as [ScanApproval]
// says: a set approver without a grant, its time in GrantedAt.
func Denial(a store.Approval) store.Approval {
	if !a.Granted && a.Approver != "" {
		a.Denied, a.DeniedAt, a.GrantedAt = true, a.GrantedAt, time.Time{}
	}
	return a
}

// Pending returns a with no decision: what CreateApproval stores.
func Pending(a store.Approval) store.Approval {
	a.Granted, a.Denied, a.Approver, a.GrantedAt, a.DeniedAt = false, false, "", time.Time{}, time.Time{}
	return a
}

// Decided returns the pending a with approver's decision at now.
func Decided(a store.Approval, approver string, now time.Time, grant bool) store.Approval {
	a.Approver = approver
	if grant {
		a.Granted, a.GrantedAt = true, now
	} else {
		a.Denied, a.DeniedAt = true, now
	}
	return a
}

// AuditColumns are the audit table's content columns (the entry without
// its chain fields) in AuditArgs' order.
const AuditColumns = `at, tenant, principal, actor, taint, session_id, step, tool, key, decision, reason, outcome,
	approval_id, latency`

// ChainColumns are the audit table's chain columns in ChainArgs' order.
const ChainColumns = `seq, prev, hash, v`

// AuditReadColumns are [AuditColumns] and [ChainColumns], in CollectAudit's
// order.
const AuditReadColumns = AuditColumns + `, ` + ChainColumns

// AuditArgs are e's values in AuditColumns' order.
func AuditArgs(e store.AuditEntry) []any {
	return []any{NS(e.Time), e.Tenant, e.Principal, e.Actor, e.Taint, e.SessionID, e.Step, e.Tool, e.Key,
		string(e.Decision), e.Reason, string(e.Outcome), e.ApprovalID, int64(e.Latency)}
}

// ChainArgs are e's chain values in ChainColumns' order.
func ChainArgs(e store.AuditEntry) []any {
	return []any{int64(e.Seq), e.Prev, e.Hash, e.V}
}

// CollectAudit reads every row of [AuditReadColumns].
func CollectAudit(rows Rows) ([]store.AuditEntry, error) {
	var out []store.AuditEntry
	for rows.Next() {
		var e store.AuditEntry
		var at, latency, seq int64
		var decision, outcome string
		if err := rows.Scan(&at, &e.Tenant, &e.Principal, &e.Actor, &e.Taint, &e.SessionID, &e.Step, &e.Tool, &e.Key,
			&decision, &e.Reason, &outcome, &e.ApprovalID, &latency, &seq, &e.Prev, &e.Hash, &e.V); err != nil {
			return nil, err
		}
		e.Time, e.Latency, e.Seq = Time(at), time.Duration(latency), uint64(seq)
		e.Decision, e.Outcome = store.Decision(decision), store.Outcome(outcome)
		out = append(out, e)
	}
	return out, rows.Err()
}

// ChainQuery is the SQL query of AuditChain.ReadAuditChain over the audit
// table: the entries after a sequence number, in the chain's order, with
// placeholder as in [AuditQuery].
func ChainQuery(after uint64, limit int, placeholder func(n int) string) (string, []any) {
	return `SELECT ` + AuditReadColumns + ` FROM audit WHERE seq > ` + placeholder(1) + ` ORDER BY seq LIMIT ` + placeholder(2),
		[]any{int64(after), max(limit, 0)}
}

// LastAuditQuery is the SQL query of AuditChain.LastAudit over the audit
// table: its entry with the highest seq.
const LastAuditQuery = `SELECT ` + AuditReadColumns + ` FROM audit ORDER BY seq DESC LIMIT 1`

// LastAudit is the answer of AuditChain.LastAudit from LastAuditQuery's
// rows: the entry, or [store.ErrNotFound] when there is none.
func LastAudit(out []store.AuditEntry, err error) (store.AuditEntry, error) {
	switch {
	case err != nil:
		return store.AuditEntry{}, err
	case len(out) == 0:
		return store.AuditEntry{}, store.ErrNotFound
	}
	return out[0], nil
}

// AnchorQuery is the SQL query of AuditChain.AuditAnchor over the
// audit_chain table, whose one row (id 1) holds the anchor.
const AnchorQuery = `SELECT anchor_seq, anchor_hash FROM audit_chain WHERE id = 1`

// HeadQuery is the SQL query of AuditHeader.AuditHead over the audit_chain
// table, whose one row (id 1) holds the head.
const HeadQuery = `SELECT head_seq, head_hash FROM audit_chain WHERE id = 1`

// ScanAnchor reads the anchor from AnchorQuery's row, or the head from
// HeadQuery's.
func ScanAnchor(row Row) (store.AuditAnchor, error) {
	var a store.AuditAnchor
	var seq int64
	if err := row.Scan(&seq, &a.Hash); err != nil {
		return store.AuditAnchor{}, err
	}
	a.Seq = uint64(seq)
	return a, nil
}

// CheckpointColumns are the audit_checkpoints table's columns in
// CheckpointArgs' and CollectCheckpoints' order.
const CheckpointColumns = `seq, hash, at, key_id, sig`

// CheckpointArgs are c's values in CheckpointColumns' order.
func CheckpointArgs(c store.AuditCheckpoint) []any {
	return []any{int64(c.Seq), c.Hash, NS(c.Time), c.KeyID, c.Sig}
}

// CollectCheckpoints reads every row of [CheckpointColumns].
func CollectCheckpoints(rows Rows) ([]store.AuditCheckpoint, error) {
	var out []store.AuditCheckpoint
	for rows.Next() {
		var c store.AuditCheckpoint
		var seq, at int64
		if err := rows.Scan(&seq, &c.Hash, &at, &c.KeyID, &c.Sig); err != nil {
			return nil, err
		}
		c.Seq, c.Time = uint64(seq), Time(at)
		out = append(out, c)
	}
	return out, rows.Err()
}

// AuditQuery is the SQL query for q over the audit table, oldest first,
// with placeholder(n) writing the dialect's n-th parameter (? or $n).
func AuditQuery(q store.AuditQuery, placeholder func(n int) string) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, cond+placeholder(len(args)))
	}
	for _, f := range []struct{ col, v string }{{"tenant", q.Tenant}, {"principal", q.Principal}, {"tool", q.Tool}, {"key", q.Key}} {
		if f.v != "" {
			add(f.col+" = ", f.v)
		}
	}
	if !q.Since.IsZero() {
		add("at >= ", NS(q.Since))
	}
	if !q.Until.IsZero() {
		add("at < ", NS(q.Until))
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 1000
	}
	query := `SELECT ` + AuditReadColumns + ` FROM audit`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, limit)
	return query + " ORDER BY at, seq LIMIT " + placeholder(len(args)), args
}
