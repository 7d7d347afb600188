package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// TestCloseAuditsRunningCalls: a call whose handler still runs when the
// gateway closes (a server's shutdown timeout passed, and the process is
// about to exit) gets an audit entry then, outcome uncertain, naming its
// key, so that the audit tells of the attempt even if the process never
// gets to write the call's own entry. If the handler returns before the
// process ends, that call's own entry follows.
func TestCloseAuditsRunningCalls(t *testing.T) {
	e := newEnv(t, nil)
	release := make(chan struct{})
	started := make(chan struct{})
	e.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-release
		return json.RawMessage(`{"transaction_id":"tx-1"}`), nil
	})
	var (
		wg  sync.WaitGroup
		res *gateway.Result
	)
	wg.Go(func() {
		var err error
		if res, err = e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, okArgs)); err != nil {
			t.Errorf("Execute after Close = %v; want the handler's result (it ran)", err)
		}
	})
	<-started
	if err := e.Gateway.Close(ctx); err != nil {
		t.Fatalf("Close = %v", err)
	}
	entries, err := e.Store.QueryAudit(ctx, store.AuditQuery{Tool: "bank/transfer_funds"})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Outcome != store.OutcomeUncertain || entries[0].Decision != store.DecisionAllow ||
		entries[0].Key == "" || !strings.Contains(entries[0].Reason, "running when the gateway closed") {
		t.Fatalf("audit after Close with a handler running = %+v; want one allowed entry, outcome uncertain, with the call's key, saying it was running when the gateway closed", entries)
	}
	close(release)
	wg.Wait()
	entries, err = e.Store.QueryAudit(ctx, store.AuditQuery{Tool: "bank/transfer_funds"})
	if err != nil {
		t.Fatal(err)
	}
	if res == nil || len(entries) != 2 || entries[1].Outcome != store.OutcomeOK || entries[1].Key != entries[0].Key || entries[1].Key != res.IdempotencyKey {
		t.Errorf("audit once the handler returned = %+v; want the uncertain entry, then the call's own (ok) under the same key", entries)
	}
}

// slowUncertainStore holds the audit entry Close writes for a running
// call (outcome uncertain) until let is closed, and says when one
// arrives, and when any other entry is appended.
type slowUncertainStore struct {
	store.Store
	arrived, other, let chan struct{}
}

func (s *slowUncertainStore) AppendAudit(ctx context.Context, e store.AuditEntry) error {
	if e.Outcome == store.OutcomeUncertain {
		close(s.arrived)
		<-s.let
	} else {
		select {
		case s.other <- struct{}{}:
		default:
		}
	}
	return s.Store.AppendAudit(ctx, e)
}

// TestCloseAuditsRunningCallFirst: when the handler returns while Close
// is still writing that call's uncertain entry, the call's own entry
// waits for it, so that the audit ends with what the call did, never
// with "uncertain" after an outcome it recorded.
func TestCloseAuditsRunningCallFirst(t *testing.T) {
	e := newEnv(t, nil)
	st := &slowUncertainStore{Store: e.Store, arrived: make(chan struct{}), other: make(chan struct{}, 1), let: make(chan struct{})}
	g, err := gateway.New(e.Registry, st, &gateway.Options{Clock: e.Clock, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	release, started := make(chan struct{}), make(chan struct{})
	e.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-release
		return json.RawMessage(`{"transaction_id":"tx-1"}`), nil
	})
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := g.Execute(ctx, transferCall(alice, "s1", 1, okArgs)); err != nil {
			t.Errorf("Execute = %v; want the handler's result", err)
		}
	})
	<-started
	wg.Go(func() {
		if err := g.Close(ctx); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
	<-st.arrived // Close is writing the running call's entry
	close(release)
	// Without the wait the call's own entry lands now, before Close's;
	// give it the chance.
	select {
	case <-st.other:
	case <-time.After(200 * time.Millisecond):
	}
	close(st.let)
	wg.Wait()
	entries, err := e.Store.QueryAudit(ctx, store.AuditQuery{Tool: "bank/transfer_funds"})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Outcome != store.OutcomeUncertain || entries[1].Outcome != store.OutcomeOK {
		var outcomes []store.Outcome
		for _, en := range entries {
			outcomes = append(outcomes, en.Outcome)
		}
		t.Errorf("audit outcomes = %v; want Close's uncertain entry, then the call's own (ok)", outcomes)
	}
}
