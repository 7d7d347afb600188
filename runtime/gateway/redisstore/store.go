package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/internal/storecodec"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

var _ store.Store = (*Store)(nil)

// Options configures Open and New. A nil *Options means defaults.
type Options struct {
	// Prefix starts every key the store writes, so several stores (or
	// other applications) can share one Redis database. Zero means
	// "toolgate:".
	Prefix string
	// MaxPipeline bounds how many concurrent scripts share one round trip
	// (one pipeline). Zero means 128; 1 sends each script by itself.
	MaxPipeline int
}

// Store is the Redis implementation of [store.Store]. It is safe for
// concurrent use, by many goroutines and many processes sharing one Redis
// server and prefix.
type Store struct {
	rdb    redis.UniversalClient
	owned  bool // Close closes rdb
	prefix string
	pipe   *pipeliner
}

// Open connects to the Redis server at url (redis://[user:pass@]host:port/db
// or rediss:// for TLS), checks it answers and returns the store. Close
// closes the connection pool.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("%w: redisstore: %v", store.ErrInvalidOptions, err)
	}
	if !strings.Contains(url, "protocol=") {
		// RESP2: RESP3 makes the client look for push notifications before
		// every reply, a system call each, and the store subscribes to none.
		o.Protocol = 2
	}
	rdb := redis.NewClient(o)
	s, err := New(rdb, opts)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	s.owned = true
	if err := s.Ping(ctx); err != nil {
		rdb.Close()
		return nil, err
	}
	return s, nil
}

// New returns a store over an existing client, which the caller keeps
// owning (Close does not close it). Scripts need a single Redis server or a
// primary; Redis Cluster is not supported (scripts touch keys of several
// hash slots).
func New(rdb redis.UniversalClient, opts *Options) (*Store, error) {
	if rdb == nil {
		return nil, fmt.Errorf("%w: redisstore: nil client", store.ErrInvalidOptions)
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = "toolgate:"
	}
	if o.MaxPipeline < 0 {
		return nil, fmt.Errorf("%w: redisstore: Options.MaxPipeline is negative", store.ErrInvalidOptions)
	}
	if o.MaxPipeline == 0 {
		o.MaxPipeline = 128
	}
	return &Store{rdb: rdb, prefix: o.Prefix, pipe: newPipeliner(rdb, o.MaxPipeline)}, nil
}

// Ping checks that the server answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redisstore: ping: %w", err)
	}
	return nil
}

// Close sends the scripts already queued, and closes the connection pool
// when Open made it. The Store must not be used afterwards.
func (s *Store) Close() error {
	s.pipe.close()
	if s.owned {
		return s.rdb.Close()
	}
	return nil
}

// Key layout under the prefix P:
//
//	P slot:<tenant>\x1f<principal>\x1f<session>\x1f<step>\x1f<tool>
//	                                              hash, one idempotency record
//	P key:<idempotency key>                       string, the record's name
//	P recs                                        sorted set, records by expiry (ms)
//	P fence                                       counter, the last fencing token
//	P apr:<id>                                    hash, one approval
//	P aprs                                        sorted set, approvals by expiry (ms)
//	P audit, P audit:seq                          sorted set (lexical), counter
//	P audit:chain                                 sorted set by seq, the hash chain
//	P audit:head, P audit:anchor                  hashes {seq, hash}: the chain's ends
//	P audit:cps                                   hash, checkpoints by seq
//	P bucket:<name>                               hash, one token bucket
//
// Records written before the slot held its principal live under
// P rec:<tenant>\x1f<session>\x1f<step>\x1f<tool> (legacyRecKey); a claim by
// the principal that wrote one moves it to that principal's slot, so no
// outcome recorded before an upgrade is lost or run again. Every gateway
// sharing a prefix must be upgraded together.
func (s *Store) recKey(sl store.Slot) string {
	return s.prefix + "slot:" + sl.Tenant + "\x1f" + sl.Principal + "\x1f" + sl.SessionID + "\x1f" + strconv.Itoa(sl.Step) + "\x1f" + sl.Tool
}

func (s *Store) legacyRecKey(sl store.Slot) string {
	return s.prefix + "rec:" + sl.Tenant + "\x1f" + sl.SessionID + "\x1f" + strconv.Itoa(sl.Step) + "\x1f" + sl.Tool
}

// t20 encodes t as 20-digit, zero-padded Unix nanoseconds; times before
// 1970 (and the zero time) become all zeros, before every real instant.
func t20(t time.Time) string {
	n := t.UnixNano()
	if t.IsZero() || n < 0 {
		n = 0
	}
	// By hand rather than with fmt's %020d: every call formats several.
	var b [20]byte
	for i := range b {
		b[len(b)-1-i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[:])
}

// round is t as the store gives it back: t20, decoded.
func round(t time.Time) time.Time {
	r, _ := from20(t20(t))
	return r
}

func from20(s string) (time.Time, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad time %q", s)
	}
	if n == 0 {
		return time.Time{}, nil
	}
	return time.Unix(0, n).UTC(), nil
}

// score is an expiry-index score: whole milliseconds, rounded down, so that
// every time <= now has a score <= now's.
func score(t time.Time) string {
	if t.IsZero() || t.UnixNano() < 0 {
		return "0"
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}

// ttl is how long Redis keeps a key expiring at end, seen from now (both
// the caller's times, so the server's clock never decides). A key at or
// past its end lingers one second: it already counts as absent.
func ttl(now, end time.Time) string {
	ms := end.Sub(now).Milliseconds()
	return strconv.FormatInt(max(ms, 1000), 10)
}

// wrap prefixes store failures, leaving context errors bare.
func wrap(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("redisstore: %s: %w", op, err)
}

var claimStatus = map[int64]store.ClaimStatus{
	1: store.ClaimAcquired, 2: store.ClaimInProgress, 3: store.ClaimDone, 4: store.ClaimUncertain, 5: store.ClaimMismatch,
}

// Claim implements [store.Store].
func (s *Store) Claim(ctx context.Context, req store.ClaimRequest) (store.Claim, error) {
	takeover := "0"
	if req.TakeOver {
		takeover = "1"
	}
	rec := s.recKey(req.Slot)
	v, err := s.pipe.run(ctx, claimScript, []string{rec, s.prefix + "fence", s.prefix + "recs", s.prefix + "key:" + req.Key, s.legacyRecKey(req.Slot)},
		t20(req.Now), t20(req.LeaseExpires), t20(req.ExpiresAt), req.Slot.Principal, req.Key, req.Fingerprint, takeover,
		req.Slot.Tenant, req.Slot.SessionID, req.Slot.Step, req.Slot.Tool, ttl(req.Now, req.ExpiresAt), score(req.ExpiresAt),
		s.prefix+"key:", max(req.Now.UnixMicro(), 0), req.Owner).Slice()
	if err != nil {
		return store.Claim{}, wrap("claim", err)
	}
	if len(v) != 3 {
		return store.Claim{}, fmt.Errorf("redisstore: claim: unexpected reply %v", v)
	}
	code, _ := v[0].(int64)
	st, ok := claimStatus[code]
	if !ok {
		return store.Claim{}, fmt.Errorf("redisstore: claim: unexpected status %v", v[0])
	}
	var r store.Record
	if tok, fresh := v[2].(string); fresh && st == store.ClaimAcquired {
		token, err := strconv.ParseUint(tok, 10, 64)
		if err != nil {
			return store.Claim{}, fmt.Errorf("redisstore: claim: bad token %q", tok)
		}
		now := round(req.Now)
		r = store.Record{Slot: req.Slot, Principal: req.Slot.Principal, Key: req.Key, Fingerprint: req.Fingerprint,
			State: store.StateInProgress, Token: token, LeaseExpires: round(req.LeaseExpires), Attempts: 1, Owner: req.Owner,
			CreatedAt: now, UpdatedAt: now, ExpiresAt: round(req.ExpiresAt)}
	} else if r, err = decodeRecord(v[2]); err != nil {
		return store.Claim{}, fmt.Errorf("redisstore: claim: %w", err)
	}
	out := store.Claim{Status: st, Record: r}
	if st == store.ClaimAcquired {
		out.Token = r.Token
		prev, _ := v[1].(string)
		out.Previous = store.State(prev)
	}
	return out, nil
}

// pairs turns a flat HGETALL reply into a map.
func pairs(v any) (map[string]string, error) {
	list, ok := v.([]any)
	if !ok || len(list)%2 != 0 {
		return nil, fmt.Errorf("unexpected hash reply %T", v)
	}
	m := make(map[string]string, len(list)/2)
	for i := 0; i < len(list); i += 2 {
		k, _ := list[i].(string)
		val, _ := list[i+1].(string)
		m[k] = val
	}
	return m, nil
}

func decodeRecord(v any) (store.Record, error) {
	m, err := pairs(v)
	if err != nil {
		return store.Record{}, err
	}
	return recordFrom(m)
}

func recordFrom(m map[string]string) (store.Record, error) {
	var r store.Record
	var errs []error
	num := func(f string) int64 {
		n, err := strconv.ParseInt(m[f], 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("bad %s %q", f, m[f]))
		}
		return n
	}
	tm := func(f string) time.Time {
		t, err := from20(m[f])
		errs = append(errs, err)
		return t
	}
	r.Slot = store.Slot{Tenant: m["tenant"], Principal: m["principal"], SessionID: m["session"], Step: int(num("step")), Tool: m["tool"]}
	r.Principal, r.Key, r.Fingerprint, r.State, r.Reason, r.Owner = m["principal"], m["key"], m["fp"], store.State(m["state"]), m["reason"], m["owner"]
	r.Token = uint64(num("token"))
	r.Attempts = int(num("attempts"))
	r.LeaseExpires, r.CreatedAt, r.UpdatedAt, r.ExpiresAt = tm("lease"), tm("created"), tm("updated"), tm("expires")
	if v, ok := m["value"]; ok {
		r.Value = json.RawMessage(v)
	}
	if d, ok := m["derr"]; ok {
		var err error
		r.DomainError, err = storecodec.DecodeDomainError([]byte(d))
		errs = append(errs, err)
	}
	return r, errors.Join(errs...)
}

func fenced(op string, n int64, err error) error {
	if err != nil {
		return wrap(op, err)
	}
	if n != 1 {
		return store.ErrFenced
	}
	return nil
}

// Complete implements [store.Store].
func (s *Store) Complete(ctx context.Context, c store.Completion) error {
	keys, args, err := s.completion(c)
	if err != nil {
		return err
	}
	n, err := s.pipe.run(ctx, completeScript, keys, args...).Int64()
	return fenced("complete", n, err)
}

// completion is completeScript's keys and arguments for c.
func (s *Store) completion(c store.Completion) ([]string, []any, error) {
	kind, payload := "none", ""
	switch {
	case c.DomainError != nil:
		b, err := storecodec.EncodeDomainError(c.DomainError)
		if err != nil {
			return nil, nil, fmt.Errorf("redisstore: %w", err)
		}
		kind, payload = "derr", string(b)
	case c.Value != nil:
		kind, payload = "value", string(c.Value)
	}
	return []string{s.recKey(c.Slot), s.prefix + "recs"}, []any{strconv.FormatUint(c.Token, 10), t20(c.Now), t20(c.ExpiresAt),
		ttl(c.Now, c.ExpiresAt), score(c.ExpiresAt), kind, payload, s.prefix + "key:"}, nil
}

var _ store.AuditedRecorder = (*Store)(nil)

// CompleteAudited implements [store.AuditedRecorder]: one script does the
// fenced completion and, when it lands, the audit append, so a completed
// call costs one script (and one place in a pipeline) instead of two.
func (s *Store) CompleteAudited(ctx context.Context, c store.Completion, e store.AuditEntry) error {
	keys, args, err := s.completion(c)
	if err != nil {
		return err
	}
	akeys, aargs, err := s.audit(e)
	if err != nil {
		return err
	}
	n, err := s.pipe.run(ctx, completeAuditScript, append(keys, akeys...), append(args, aargs...)...).Int64()
	return fenced("complete", n, err)
}

// MarkUncertain implements [store.Store].
func (s *Store) MarkUncertain(ctx context.Context, slot store.Slot, token uint64, reason string, now, expiresAt time.Time) error {
	n, err := s.pipe.run(ctx, uncertainScript, []string{s.recKey(slot), s.prefix + "recs"},
		strconv.FormatUint(token, 10), t20(now), t20(expiresAt), ttl(now, expiresAt), score(expiresAt), reason, s.prefix+"key:").Int64()
	return fenced("mark uncertain", n, err)
}

// Release implements [store.Store].
func (s *Store) Release(ctx context.Context, slot store.Slot, token uint64, now time.Time) error {
	n, err := s.pipe.run(ctx, releaseScript, []string{s.recKey(slot), s.prefix + "recs"},
		strconv.FormatUint(token, 10), t20(now), s.prefix+"key:").Int64()
	return fenced("release", n, err)
}

// Get implements [store.Store].
func (s *Store) Get(ctx context.Context, key string) (store.Record, error) {
	rec, err := s.rdb.Get(ctx, s.prefix+"key:"+key).Result()
	if errors.Is(err, redis.Nil) {
		return store.Record{}, store.ErrNotFound
	}
	if err != nil {
		return store.Record{}, wrap("get", err)
	}
	m, err := s.rdb.HGetAll(ctx, rec).Result()
	if err != nil {
		return store.Record{}, wrap("get", err)
	}
	// The key index and the record are written together; a record gone
	// (released or purged between the two reads) or now bound to another
	// key is not this key's.
	if len(m) == 0 || m["key"] != key {
		return store.Record{}, store.ErrNotFound
	}
	r, err := recordFrom(m)
	if err != nil {
		return store.Record{}, fmt.Errorf("redisstore: get: %w", err)
	}
	return r, nil
}

// approvalBody is the immutable part of an approval, stored as JSON.
type approvalBody struct {
	Slot        store.Slot      `json:"slot"`
	Key         string          `json:"key"`
	Fingerprint string          `json:"fingerprint"`
	Requester   string          `json:"requester"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Taint       string          `json:"taint,omitempty"`
	Definition  string          `json:"definition,omitempty"` // absent in an approval stored before it was kept
}

func decodeApproval(id string, v any) (store.Approval, error) {
	m, err := pairs(v)
	if err != nil {
		return store.Approval{}, err
	}
	var b approvalBody
	if err := json.Unmarshal([]byte(m["body"]), &b); err != nil {
		return store.Approval{}, fmt.Errorf("decode approval: %w", err)
	}
	a := store.Approval{ID: id, Slot: b.Slot, Key: b.Key, Fingerprint: b.Fingerprint, Requester: b.Requester,
		Arguments: b.Arguments, Taint: b.Taint, Definition: b.Definition, Granted: m["granted"] == "1", Approver: m["approver"]}
	var e1, e2, e3 error
	a.CreatedAt, e1 = from20(m["created"])
	a.GrantedAt, e2 = from20(m["granted_at"])
	a.ExpiresAt, e3 = from20(m["expires"])
	// A denial is kept as the SQL stores keep it (storecodec.ScanApproval).
	return storecodec.Denial(a), errors.Join(e1, e2, e3)
}

// CreateApproval implements [store.Store].
func (s *Store) CreateApproval(ctx context.Context, a store.Approval) (store.Approval, error) {
	body, err := json.Marshal(approvalBody{Slot: a.Slot, Key: a.Key, Fingerprint: a.Fingerprint, Requester: a.Requester, Arguments: a.Arguments, Taint: a.Taint, Definition: a.Definition})
	if err != nil {
		return store.Approval{}, fmt.Errorf("redisstore: encode approval: %w", err)
	}
	v, err := createApprovalScript.Run(ctx, s.rdb, []string{s.prefix + "apr:" + a.ID, s.prefix + "aprs"},
		t20(a.CreatedAt), t20(a.ExpiresAt), body, "0", "", t20(time.Time{}), ttl(a.CreatedAt, a.ExpiresAt),
		score(a.ExpiresAt)).Slice()
	if err != nil {
		return store.Approval{}, wrap("create approval", err)
	}
	if len(v) != 2 {
		return store.Approval{}, fmt.Errorf("redisstore: create approval: unexpected reply %v", v)
	}
	out, err := decodeApproval(a.ID, v[1])
	if err != nil {
		return store.Approval{}, fmt.Errorf("redisstore: create approval: %w", err)
	}
	return out, nil
}

// GetApproval implements [store.Store].
func (s *Store) GetApproval(ctx context.Context, id string) (store.Approval, error) {
	m, err := s.rdb.HGetAll(ctx, s.prefix+"apr:"+id).Result()
	if err != nil {
		return store.Approval{}, wrap("get approval", err)
	}
	if len(m) == 0 {
		return store.Approval{}, store.ErrNotFound
	}
	flat := make([]any, 0, 2*len(m))
	for k, v := range m {
		flat = append(flat, k, v)
	}
	a, err := decodeApproval(id, flat)
	if err != nil {
		return store.Approval{}, fmt.Errorf("redisstore: get approval: %w", err)
	}
	return a, nil
}

// GrantApproval implements [store.Store].
func (s *Store) GrantApproval(ctx context.Context, id, approver string, now time.Time) (store.Approval, error) {
	return s.decide(ctx, id, approver, now, "1")
}

// DenyApproval implements [store.ApprovalDenier].
func (s *Store) DenyApproval(ctx context.Context, id, approver string, now time.Time) (store.Approval, error) {
	return s.decide(ctx, id, approver, now, "0")
}

// decide records approver's decision on the pending approval id: granted
// "1" or "0" (a denial: the approver set without a grant).
func (s *Store) decide(ctx context.Context, id, approver string, now time.Time, granted string) (store.Approval, error) {
	v, err := decideScript.Run(ctx, s.rdb, []string{s.prefix + "apr:" + id}, approver, t20(now), granted).Slice()
	if err != nil {
		return store.Approval{}, wrap("decide approval", err)
	}
	if len(v) != 2 {
		return store.Approval{}, fmt.Errorf("redisstore: decide approval: unexpected reply %v", v)
	}
	switch code, _ := v[0].(int64); code {
	case 0:
		return store.Approval{}, store.ErrNotFound
	case 2:
		return store.Approval{}, store.ErrApprovalState
	}
	a, err := decodeApproval(id, v[1])
	if err != nil {
		return store.Approval{}, fmt.Errorf("redisstore: decide approval: %w", err)
	}
	return a, nil
}

// AppendAudit implements [store.Store]: one script chains the entry after
// the head and appends it (see auditScript).
func (s *Store) AppendAudit(ctx context.Context, e store.AuditEntry) error {
	keys, args, err := s.audit(e)
	if err != nil {
		return err
	}
	if err := s.pipe.run(ctx, auditScript, keys, args...).Err(); err != nil {
		return wrap("append audit", err)
	}
	return nil
}

// audit returns auditScript's KEYS and ARGV for e.
func (s *Store) audit(e store.AuditEntry) ([]string, []any, error) {
	e.Seq, e.Prev, e.Hash, e.V = 0, "", "", 0 // the script sets them
	b, err := json.Marshal(e)
	if err != nil {
		return nil, nil, fmt.Errorf("redisstore: encode audit entry: %w", err)
	}
	return []string{s.prefix + "audit", s.prefix + "audit:seq", s.prefix + "audit:chain", s.prefix + "audit:head", s.prefix + "audit:anchor"},
		[]any{t20(e.Time), b, auditchain.Digest(e)}, nil
}

var (
	_ store.AuditChain     = (*Store)(nil)
	_ store.AuditHeader    = (*Store)(nil)
	_ store.ApprovalDenier = (*Store)(nil)
)

// ReadAuditChain implements [store.AuditChain]: the chain set, by score.
func (s *Store) ReadAuditChain(ctx context.Context, after uint64, limit int) ([]store.AuditEntry, error) {
	if limit <= 0 {
		return nil, nil
	}
	page, err := s.rdb.ZRangeByScore(ctx, s.prefix+"audit:chain", &redis.ZRangeBy{Min: "(" + strconv.FormatUint(after, 10), Max: "+inf",
		Count: int64(limit)}).Result()
	if err != nil {
		return nil, wrap("read audit chain", err)
	}
	out := make([]store.AuditEntry, 0, len(page))
	for _, m := range page {
		e, err := decodeAudit(m)
		if err != nil {
			return nil, fmt.Errorf("redisstore: read audit chain: %w", err)
		}
		out = append(out, e)
	}
	return out, nil
}

// decodeAudit decodes a member of the audit sets: time:seq:json; the first
// two parts have fixed widths.
func decodeAudit(m string) (store.AuditEntry, error) {
	var e store.AuditEntry
	if len(m) < 42 {
		return e, fmt.Errorf("malformed entry %q", m)
	}
	if err := json.Unmarshal([]byte(m[42:]), &e); err != nil {
		return e, err
	}
	return e, nil
}

// LastAudit implements [store.AuditChain]: the chain set's last member.
func (s *Store) LastAudit(ctx context.Context) (store.AuditEntry, error) {
	m, err := s.rdb.ZRange(ctx, s.prefix+"audit:chain", -1, -1).Result()
	if err != nil {
		return store.AuditEntry{}, wrap("last audit entry", err)
	}
	if len(m) == 0 {
		return store.AuditEntry{}, store.ErrNotFound
	}
	e, err := decodeAudit(m[0])
	if err != nil {
		return store.AuditEntry{}, fmt.Errorf("redisstore: last audit entry: %w", err)
	}
	return e, nil
}

// AuditAnchor implements [store.AuditChain].
func (s *Store) AuditAnchor(ctx context.Context) (store.AuditAnchor, error) {
	return s.chainEnd(ctx, "audit anchor", s.prefix+"audit:anchor")
}

// AuditHead implements [store.AuditHeader]. A chain that has had no entry
// appended has no head hash; its head is then its anchor.
func (s *Store) AuditHead(ctx context.Context) (store.AuditAnchor, error) {
	h, err := s.chainEnd(ctx, "audit head", s.prefix+"audit:head")
	if err != nil || h.Seq > 0 {
		return h, err
	}
	return s.AuditAnchor(ctx)
}

// chainEnd reads the hash {seq, hash} at key: the anchor or the head
// ({0, [auditchain.Genesis]} when absent).
func (s *Store) chainEnd(ctx context.Context, what, key string) (store.AuditAnchor, error) {
	v, err := s.rdb.HMGet(ctx, key, "seq", "hash").Result()
	if err != nil {
		return store.AuditAnchor{}, wrap(what, err)
	}
	a := store.AuditAnchor{Hash: auditchain.Genesis}
	if seq, ok := v[0].(string); ok {
		if a.Seq, err = strconv.ParseUint(seq, 10, 64); err != nil {
			return a, fmt.Errorf("redisstore: %s: bad seq %q", what, seq)
		}
		a.Hash, _ = v[1].(string)
	}
	return a, nil
}

// AddAuditCheckpoint implements [store.AuditChain].
func (s *Store) AddAuditCheckpoint(ctx context.Context, c store.AuditCheckpoint) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("redisstore: encode audit checkpoint: %w", err)
	}
	if err := s.rdb.HSet(ctx, s.prefix+"audit:cps", strconv.FormatUint(c.Seq, 10), b).Err(); err != nil {
		return wrap("add audit checkpoint", err)
	}
	return nil
}

// AuditCheckpoints implements [store.AuditChain].
func (s *Store) AuditCheckpoints(ctx context.Context) ([]store.AuditCheckpoint, error) {
	m, err := s.rdb.HGetAll(ctx, s.prefix+"audit:cps").Result()
	if err != nil {
		return nil, wrap("audit checkpoints", err)
	}
	out := make([]store.AuditCheckpoint, 0, len(m))
	for _, v := range m {
		var c store.AuditCheckpoint
		if err := json.Unmarshal([]byte(v), &c); err != nil {
			return nil, fmt.Errorf("redisstore: audit checkpoints: %w", err)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b store.AuditCheckpoint) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}

// auditPage is how many entries QueryAudit reads per round trip.
const auditPage = 1000

// QueryAudit implements [store.Store]. The time bounds select a range of
// the log; the other filters are applied while reading it, so a narrow
// filter over a long range reads the whole range (audit queries are an
// operator's, rare, and should be bounded by time).
func (s *Store) QueryAudit(ctx context.Context, q store.AuditQuery) ([]store.AuditEntry, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 1000
	}
	lo, hi := "-", "+"
	if !q.Since.IsZero() {
		lo = "[" + t20(q.Since)
	}
	if !q.Until.IsZero() {
		hi = "(" + t20(q.Until)
	}
	var out []store.AuditEntry
	for offset := int64(0); len(out) < limit; offset += auditPage {
		page, err := s.rdb.ZRangeByLex(ctx, s.prefix+"audit", &redis.ZRangeBy{Min: lo, Max: hi, Offset: offset, Count: auditPage}).Result()
		if err != nil {
			return nil, wrap("query audit", err)
		}
		for _, m := range page {
			e, err := decodeAudit(m)
			if err != nil {
				return nil, fmt.Errorf("redisstore: query audit: %w", err)
			}
			if (q.Tenant == "" || e.Tenant == q.Tenant) && (q.Principal == "" || e.Principal == q.Principal) &&
				(q.Tool == "" || e.Tool == q.Tool) && (q.Key == "" || e.Key == q.Key) {
				out = append(out, e)
				if len(out) == limit {
					break
				}
			}
		}
		if len(page) < auditPage {
			break
		}
	}
	return out, nil
}

// TakeToken implements [store.Store]. The bucket lives in Redis, so every
// process sharing the store shares it.
func (s *Store) TakeToken(ctx context.Context, bucket string, l store.RateLimit, now time.Time) (bool, time.Duration, error) {
	if l.Rate <= 0 || l.Burst <= 0 {
		return true, 0, nil
	}
	n := now.UnixNano()
	sec, nsec := n/1e9, n%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	v, err := s.pipe.run(ctx, takeScript, []string{s.prefix + "bucket:" + bucket},
		strconv.FormatFloat(l.Rate, 'g', -1, 64), l.Burst, sec, nsec).Slice()
	if err != nil {
		return false, 0, wrap("take token", err)
	}
	if len(v) != 2 {
		return false, 0, fmt.Errorf("redisstore: take token: unexpected reply %v", v)
	}
	if ok, _ := v[0].(int64); ok == 1 {
		return true, 0, nil
	}
	ts, _ := v[1].(string)
	tokens, err := strconv.ParseFloat(ts, 64)
	if err != nil {
		return false, 0, fmt.Errorf("redisstore: take token: bad tokens %q", ts)
	}
	return false, time.Duration(math.Ceil((1 - tokens) / l.Rate * 1e9)), nil
}

// Purge implements [store.Store]. Buckets need no purge: each expires in
// Redis a minute after it would be full again (a full bucket and no bucket
// are the same).
func (s *Store) Purge(ctx context.Context, r store.PurgeRequest) (store.PurgeStats, error) {
	before := ""
	if r.Concerns.Has(store.ConcernAudit) && !r.AuditBefore.IsZero() {
		before = t20(r.AuditBefore)
	}
	flag := func(c store.Concerns) string {
		if r.Concerns.Has(c) {
			return "1"
		}
		return "0"
	}
	v, err := purgeScript.Run(ctx, s.rdb, []string{s.prefix + "recs", s.prefix + "aprs", s.prefix + "audit",
		s.prefix + "audit:chain", s.prefix + "audit:anchor", s.prefix + "audit:cps"},
		t20(r.Now), score(r.Now), before, s.prefix+"key:", flag(store.ConcernRecords), flag(store.ConcernApprovals)).Int64Slice()
	if err != nil {
		return store.PurgeStats{}, wrap("purge", err)
	}
	if len(v) != 3 {
		return store.PurgeStats{}, fmt.Errorf("redisstore: purge: unexpected reply %v", v)
	}
	return store.PurgeStats{Records: int(v[0]), Approvals: int(v[1]), Audit: int(v[2])}, nil
}
