package gateway

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// Stores takes some of the gateway's concerns from stores other than the
// one passed to [New]: each field is one concern's interface of package
// [store]. A nil field means New's store.
type Stores struct {
	Records    store.RecordStore
	Approvals  store.ApprovalStore
	Audit      store.AuditLog
	RateLimits store.RateLimitStore
}

// compose returns the Store the gateway works on: base itself when parts
// names nothing else, else a Store that sends each concern to its part.
func compose(base store.Store, parts Stores) (store.Store, error) {
	if base == nil && (parts.Records == nil || parts.Approvals == nil || parts.Audit == nil || parts.RateLimits == nil) {
		return nil, fmt.Errorf("%w: nil store, and Options.Stores does not name every concern", ErrInvalidOptions)
	}
	c := &composite{RecordStore: parts.Records, ApprovalStore: parts.Approvals, AuditLog: parts.Audit, RateLimitStore: parts.RateLimits}
	if c.RecordStore == nil {
		c.RecordStore = base
	}
	if c.ApprovalStore == nil {
		c.ApprovalStore = base
	}
	if c.AuditLog == nil {
		c.AuditLog = base
	}
	if c.RateLimitStore == nil {
		c.RateLimitStore = base
	}
	if base != nil && same(c.RecordStore, base) && same(c.ApprovalStore, base) && same(c.AuditLog, base) && same(c.RateLimitStore, base) {
		return base, nil
	}
	return c, nil
}

// composite sends each concern to its own store.
type composite struct {
	store.RecordStore
	store.ApprovalStore
	store.AuditLog
	store.RateLimitStore
}

// Purge purges each distinct store that is a Purger of the concerns it
// holds for this gateway, and sums the counts. A store that is no Purger
// keeps what it holds (its owner purges it).
func (c *composite) Purge(ctx context.Context, r store.PurgeRequest) (store.PurgeStats, error) {
	type part struct {
		store    any
		concerns store.Concerns
	}
	var parts []part
	add := func(s any, cs store.Concerns) {
		if !r.Concerns.Has(cs) {
			return
		}
		for i := range parts {
			if same(parts[i].store, s) {
				parts[i].concerns |= cs
				return
			}
		}
		parts = append(parts, part{s, cs})
	}
	add(c.RecordStore, store.ConcernRecords)
	add(c.ApprovalStore, store.ConcernApprovals)
	add(c.AuditLog, store.ConcernAudit)
	add(c.RateLimitStore, store.ConcernRateLimits)
	var total store.PurgeStats
	for _, p := range parts {
		pu, ok := p.store.(store.Purger)
		if !ok {
			continue
		}
		req := r
		req.Concerns = p.concerns
		st, err := pu.Purge(ctx, req)
		if err != nil {
			return total, err
		}
		total.Records += st.Records
		total.Approvals += st.Approvals
		total.Audit += st.Audit
	}
	return total, nil
}

// same reports whether a and b are the same store value. Values of
// incomparable types are never the same.
func same(a, b any) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta != nil && ta.Comparable() && a == b
}

// Clock tells the gateway the time. It is injected so that the decision
// core is deterministic and tests can move time by hand. Implementations
// must be safe for concurrent use.
type Clock interface {
	Now() time.Time
}

// systemClock is the wall clock, the Clock of a nil [Options.Clock].
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }
