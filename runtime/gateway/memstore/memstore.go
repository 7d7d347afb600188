// Package memstore is the in-memory reference implementation of
// [store.Store]: every method under one mutex, nothing durable. It is what
// tests and single-process demos use, and the behaviour other stores are
// measured against (storetest.Run).
package memstore

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/internal/storecodec"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// Store is an in-memory [store.Store]. The zero value is not usable; call
// New. Safe for concurrent use; every method is atomic.
type Store struct {
	mu        sync.Mutex
	records   map[store.Slot]*store.Record
	byKey     map[string]store.Slot
	approvals map[string]*store.Approval
	audit     []store.AuditEntry // in chain order
	anchor    store.AuditAnchor
	cps       []store.AuditCheckpoint
	buckets   map[string]*bucket
	nextToken uint64
}

type bucket struct {
	tokens float64
	last   time.Time
	limit  store.RateLimit
}

var (
	_ store.Store          = (*Store)(nil)
	_ store.AuditChain     = (*Store)(nil)
	_ store.ApprovalDenier = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{
		records:   map[store.Slot]*store.Record{},
		byKey:     map[string]store.Slot{},
		approvals: map[string]*store.Approval{},
		buckets:   map[string]*bucket{},
		anchor:    store.AuditAnchor{Hash: auditchain.Genesis},
	}
}

func copyRecord(r *store.Record) store.Record {
	c := *r
	c.Value = slices.Clone(r.Value)
	if r.DomainError != nil {
		d := *r.DomainError
		c.DomainError = &d
	}
	return c
}

// Claim implements [store.Store].
func (s *Store) Claim(ctx context.Context, req store.ClaimRequest) (store.Claim, error) {
	if err := ctx.Err(); err != nil {
		return store.Claim{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[req.Slot]
	if ok && !r.ExpiresAt.After(req.Now) {
		s.deleteLocked(req.Slot)
		ok = false
	}
	if !ok {
		s.nextToken++
		r = &store.Record{
			Slot: req.Slot, Principal: req.Principal, Key: req.Key, Fingerprint: req.Fingerprint,
			State: store.StateInProgress, Token: s.nextToken, LeaseExpires: req.LeaseExpires,
			Attempts: 1, Owner: req.Owner, CreatedAt: req.Now, UpdatedAt: req.Now, ExpiresAt: req.ExpiresAt,
		}
		s.records[req.Slot] = r
		s.byKey[req.Key] = req.Slot
		return store.Claim{Status: store.ClaimAcquired, Token: r.Token, Record: copyRecord(r)}, nil
	}
	if r.Key != req.Key {
		return store.Claim{Status: store.ClaimMismatch, Record: copyRecord(r)}, nil
	}
	switch {
	case r.State == store.StateDone:
		return store.Claim{Status: store.ClaimDone, Record: copyRecord(r)}, nil
	case r.State == store.StateInProgress && r.LeaseExpires.After(req.Now):
		return store.Claim{Status: store.ClaimInProgress, Record: copyRecord(r)}, nil
	case !req.TakeOver:
		return store.Claim{Status: store.ClaimUncertain, Record: copyRecord(r)}, nil
	}
	prev := r.State
	s.nextToken++
	r.State = store.StateInProgress
	r.Token = s.nextToken
	r.LeaseExpires = req.LeaseExpires
	r.ExpiresAt = req.ExpiresAt
	r.Attempts++
	r.Owner = req.Owner
	r.UpdatedAt = req.Now
	return store.Claim{Status: store.ClaimAcquired, Token: r.Token, Record: copyRecord(r), Previous: prev}, nil
}

// owned returns the record held by token, or ErrFenced. s.mu is held.
func (s *Store) owned(slot store.Slot, token uint64, now time.Time) (*store.Record, error) {
	r, ok := s.records[slot]
	if !ok || r.Token != token || r.State != store.StateInProgress || !r.LeaseExpires.After(now) {
		return nil, store.ErrFenced
	}
	return r, nil
}

// Complete implements [store.Store].
func (s *Store) Complete(ctx context.Context, c store.Completion) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.owned(c.Slot, c.Token, c.Now)
	if err != nil {
		return err
	}
	r.State = store.StateDone
	if c.DomainError != nil {
		d := *c.DomainError
		r.DomainError, r.Value = &d, nil
	} else {
		r.Value, r.DomainError = slices.Clone(c.Value), nil
	}
	r.UpdatedAt = c.Now
	r.ExpiresAt = c.ExpiresAt
	return nil
}

// MarkUncertain implements [store.Store].
func (s *Store) MarkUncertain(ctx context.Context, slot store.Slot, token uint64, reason string, now, expiresAt time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.owned(slot, token, now)
	if err != nil {
		return err
	}
	r.State = store.StateUncertain
	r.Reason = reason
	r.UpdatedAt = now
	r.ExpiresAt = expiresAt
	return nil
}

// Release implements [store.Store].
func (s *Store) Release(ctx context.Context, slot store.Slot, token uint64, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.owned(slot, token, now); err != nil {
		return err
	}
	s.deleteLocked(slot)
	return nil
}

func (s *Store) deleteLocked(slot store.Slot) {
	if r, ok := s.records[slot]; ok {
		if s.byKey[r.Key] == slot {
			delete(s.byKey, r.Key)
		}
		delete(s.records, slot)
	}
}

// Get implements [store.Store].
func (s *Store) Get(ctx context.Context, key string) (store.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot, ok := s.byKey[key]
	if !ok {
		return store.Record{}, store.ErrNotFound
	}
	return copyRecord(s.records[slot]), nil
}

func copyApproval(a *store.Approval) store.Approval {
	c := *a
	c.Arguments = slices.Clone(a.Arguments)
	return c
}

// CreateApproval implements [store.Store].
func (s *Store) CreateApproval(ctx context.Context, a store.Approval) (store.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.approvals[a.ID]; ok && old.ExpiresAt.After(a.CreatedAt) {
		return copyApproval(old), nil
	}
	n := storecodec.Pending(copyApproval(&a))
	s.approvals[a.ID] = &n
	return copyApproval(&n), nil
}

// GetApproval implements [store.Store].
func (s *Store) GetApproval(ctx context.Context, id string) (store.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.approvals[id]
	if !ok {
		return store.Approval{}, store.ErrNotFound
	}
	return copyApproval(a), nil
}

// GrantApproval implements [store.Store].
func (s *Store) GrantApproval(ctx context.Context, id, approver string, now time.Time) (store.Approval, error) {
	return s.decide(id, approver, now, true)
}

// DenyApproval implements [store.ApprovalDenier].
func (s *Store) DenyApproval(ctx context.Context, id, approver string, now time.Time) (store.Approval, error) {
	return s.decide(id, approver, now, false)
}

// decide records approver's decision on the pending approval id.
func (s *Store) decide(id, approver string, now time.Time, grant bool) (store.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.approvals[id]
	if !ok {
		return store.Approval{}, store.ErrNotFound
	}
	if a.Decided() || !a.ExpiresAt.After(now) {
		return store.Approval{}, store.ErrApprovalState
	}
	*a = storecodec.Decided(*a, approver, now, grant)
	return copyApproval(a), nil
}

// AppendAudit implements [store.Store].
func (s *Store) AppendAudit(ctx context.Context, e store.AuditEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq, prev := s.anchor.Seq, s.anchor.Hash
	if n := len(s.audit); n > 0 {
		seq, prev = s.audit[n-1].Seq, s.audit[n-1].Hash
	}
	s.audit = append(s.audit, auditchain.Chain(e, seq+1, prev))
	return nil
}

// ReadAuditChain implements [store.AuditChain].
func (s *Store) ReadAuditChain(ctx context.Context, after uint64, limit int) ([]store.AuditEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, _ := slices.BinarySearchFunc(s.audit, after+1, func(e store.AuditEntry, seq uint64) int {
		return cmp.Compare(e.Seq, seq)
	})
	return slices.Clone(s.audit[i:min(len(s.audit), i+max(limit, 0))]), nil
}

// LastAudit implements [store.AuditChain].
func (s *Store) LastAudit(ctx context.Context) (store.AuditEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.audit) == 0 {
		return store.AuditEntry{}, store.ErrNotFound
	}
	return s.audit[len(s.audit)-1], nil
}

// AuditAnchor implements [store.AuditChain].
func (s *Store) AuditAnchor(ctx context.Context) (store.AuditAnchor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.anchor, nil
}

// AddAuditCheckpoint implements [store.AuditChain].
func (s *Store) AddAuditCheckpoint(ctx context.Context, c store.AuditCheckpoint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cps = slices.DeleteFunc(s.cps, func(o store.AuditCheckpoint) bool { return o.Seq == c.Seq })
	s.cps = append(s.cps, c)
	slices.SortFunc(s.cps, func(a, b store.AuditCheckpoint) int { return cmp.Compare(a.Seq, b.Seq) })
	return nil
}

// AuditCheckpoints implements [store.AuditChain].
func (s *Store) AuditCheckpoints(ctx context.Context) ([]store.AuditCheckpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cps), nil
}

// QueryAudit implements [store.Store].
func (s *Store) QueryAudit(ctx context.Context, q store.AuditQuery) ([]store.AuditEntry, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 1000
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.AuditEntry
	for _, e := range s.audit {
		if (q.Tenant != "" && e.Tenant != q.Tenant) || (q.Principal != "" && e.Principal != q.Principal) ||
			(q.Tool != "" && e.Tool != q.Tool) || (q.Key != "" && e.Key != q.Key) ||
			(!q.Since.IsZero() && e.Time.Before(q.Since)) || (!q.Until.IsZero() && !e.Time.Before(q.Until)) {
			continue
		}
		out = append(out, e)
	}
	// Stable: equal times keep insertion order.
	slices.SortStableFunc(out, func(a, b store.AuditEntry) int { return a.Time.Compare(b.Time) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// TakeToken implements [store.Store].
func (s *Store) TakeToken(ctx context.Context, name string, l store.RateLimit, now time.Time) (bool, time.Duration, error) {
	if l.Rate <= 0 || l.Burst <= 0 {
		return true, 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[name]
	if !ok {
		b = &bucket{tokens: float64(l.Burst), last: now}
		s.buckets[name] = b
	}
	b.limit = l
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(float64(l.Burst), b.tokens+el.Seconds()*l.Rate)
		b.last = now
	}
	if b.tokens > float64(l.Burst) {
		b.tokens = float64(l.Burst)
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0, nil
	}
	wait := time.Duration((1 - b.tokens) / l.Rate * float64(time.Second))
	return false, wait, nil
}

// Purge implements [store.Store].
func (s *Store) Purge(ctx context.Context, r store.PurgeRequest) (store.PurgeStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st store.PurgeStats
	if r.Concerns.Has(store.ConcernRecords) {
		for slot, rec := range s.records {
			if !rec.ExpiresAt.After(r.Now) {
				s.deleteLocked(slot)
				st.Records++
			}
		}
	}
	if r.Concerns.Has(store.ConcernApprovals) {
		for id, a := range s.approvals {
			if !a.ExpiresAt.After(r.Now) {
				delete(s.approvals, id)
				st.Approvals++
			}
		}
	}
	if r.Concerns.Has(store.ConcernAudit) && !r.AuditBefore.IsZero() {
		n := 0
		for n < len(s.audit) && s.audit[n].Time.Before(r.AuditBefore) {
			n++
		}
		if n > 0 {
			s.anchor = store.AuditAnchor{Seq: s.audit[n-1].Seq, Hash: s.audit[n-1].Hash}
			s.audit = slices.Delete(s.audit, 0, n)
			s.cps = slices.DeleteFunc(s.cps, func(c store.AuditCheckpoint) bool { return c.Seq <= s.anchor.Seq })
			st.Audit = n
		}
	}
	if r.Concerns.Has(store.ConcernRateLimits) {
		for name, b := range s.buckets {
			if b.tokens+r.Now.Sub(b.last).Seconds()*b.limit.Rate >= float64(b.limit.Burst) {
				delete(s.buckets, name)
			}
		}
	}
	return st, nil
}
