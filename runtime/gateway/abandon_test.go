package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

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
