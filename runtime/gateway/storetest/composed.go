package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// Composed is a gateway's store setup: Base, passed to [gateway.New], and
// Parts, its Options.Stores. Other is a store no part uses, for a second
// gateway that shares only the rate limits with the first.
type Composed struct {
	Base  store.Store
	Parts gateway.Stores
	Other store.Store
}

// RunComposed checks a gateway whose concerns live in different stores
// (newSetup makes a fresh setup per call): each concern is read and written
// where Options.Stores sends it and nowhere else, two gateways sharing only
// a rate-limit store share their buckets, and Gateway.Purge purges each
// store of this gateway's concerns only.
func RunComposed(t *testing.T, newSetup func(t *testing.T) Composed) {
	t.Helper()
	ctx := context.Background()
	c := newSetup(t)
	records, audit := where[store.RecordStore](c.Parts.Records, c.Base), where[store.AuditLog](c.Parts.Audit, c.Base)
	clock := newManualClock(t0)
	reg := tools.NewRegistry()
	if err := reg.Add(tools.Tool{ID: "bank/pay", Card: tools.Card{Name: "pay", Scopes: []string{"payments:write"}},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
		Handler: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			return args, nil
		}}); err != nil {
		t.Fatal(err)
	}
	opts := func(stores gateway.Stores) *gateway.Options {
		return &gateway.Options{Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Stores: stores,
			RateLimit: store.RateLimit{Rate: 1.0 / 3600, Burst: 2}, Retention: time.Hour}
	}
	g, err := gateway.New(reg, c.Base, opts(c.Parts))
	if err != nil {
		t.Fatal(err)
	}
	alice := tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"payments:write"}}
	call := gateway.Call{Principal: alice, SessionID: "composed", Step: 1, Tool: "bank/pay", Arguments: json.RawMessage(`{"n":1}`)}
	res, err := g.Execute(ctx, call)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if r, err := records.Get(ctx, res.IdempotencyKey); err != nil || string(r.Value) != `{"n":1}` {
		t.Errorf("record in the records store = %+v, %v; want the call's outcome", r, err)
	}
	if c.Parts.Records != nil && !same(c.Parts.Records, c.Base) {
		if _, err := c.Base.Get(ctx, res.IdempotencyKey); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("record in the base store = %v, want ErrNotFound (records live elsewhere)", err)
		}
	}
	entries, err := audit.QueryAudit(ctx, store.AuditQuery{Key: res.IdempotencyKey})
	if err != nil || len(entries) != 1 || entries[0].Principal != "alice" {
		t.Errorf("audit entries for the call in the audit log = %+v, %v; want alice's one", entries, err)
	}
	if c.Parts.Audit != nil && !same(c.Parts.Audit, c.Base) {
		if got, err := c.Base.QueryAudit(ctx, store.AuditQuery{}); err != nil || len(got) != 0 {
			t.Errorf("audit entries in the base store = %+v, %v; want none (the audit log lives elsewhere)", got, err)
		}
	}

	// A second gateway with other stores for everything but the rate
	// limits takes from the same bucket: alice's burst of 2 is spent.
	if c.Parts.RateLimits != nil && c.Other != nil {
		g2, err := gateway.New(reg, c.Other, opts(gateway.Stores{RateLimits: c.Parts.RateLimits}))
		if err != nil {
			t.Fatal(err)
		}
		call2 := call
		call2.Step = 2
		if _, err := g2.Execute(ctx, call2); err != nil {
			t.Fatalf("second gateway's call: %v", err)
		}
		call2.Step = 3
		var ge *gateway.Error
		if _, err := g.Execute(ctx, call2); !errors.As(err, &ge) || ge.Type != gateway.RateLimited {
			t.Errorf("third call, after two through two gateways sharing the bucket = %v, want RATE_LIMITED", err)
		}
	}

	// Purge: the base store keeps what is not this gateway's to remove.
	if err := c.Base.AppendAudit(ctx, store.AuditEntry{Time: t0, Tenant: "other", Principal: "carol", Decision: store.DecisionAllow, Outcome: store.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	clock.set(t0.Add(3 * time.Hour))
	st, err := g.Purge(ctx, time.Hour)
	if err != nil {
		t.Fatalf("Gateway.Purge: %v", err)
	}
	if st.Records < 1 {
		t.Errorf("Gateway.Purge = %+v, want the call's record removed", st)
	}
	if _, err := records.Get(ctx, res.IdempotencyKey); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("record after the purge = %v, want ErrNotFound", err)
	}
	if c.Parts.Audit != nil && !same(c.Parts.Audit, c.Base) {
		if got, err := c.Base.QueryAudit(ctx, store.AuditQuery{}); err != nil || len(got) != 1 || got[0].Principal != "carol" {
			t.Errorf("base store's audit after this gateway's purge = %+v, %v; want carol's entry kept", got, err)
		}
		if got, err := audit.QueryAudit(ctx, store.AuditQuery{Key: res.IdempotencyKey}); err != nil || len(got) != 0 {
			t.Errorf("audit log after the purge = %+v, %v; want alice's old entry removed", got, err)
		}
	}
}

// where returns the store that holds a concern: its part, else the base.
func where[S any](part S, base store.Store) S {
	if any(part) != nil {
		return part
	}
	return any(base).(S)
}

// same reports whether a and b are one store value.
func same(a, b any) bool {
	defer func() { recover() }() // incomparable values are not the same
	return a == b
}

// manualClock is a [gateway.Clock] the test moves by hand.
type manualClock struct{ ns atomic.Int64 }

func newManualClock(t time.Time) *manualClock {
	c := &manualClock{}
	c.set(t)
	return c
}

func (c *manualClock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

func (c *manualClock) set(t time.Time) { c.ns.Store(t.UnixNano()) }
