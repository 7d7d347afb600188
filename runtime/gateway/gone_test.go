package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/metricstest"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/internal/gatewaytest"
	"github.com/toolgate/toolgate/tools"
)

// A call re-sent after its tool has gone (removed from the registry,
// quarantined, restricted to other tenants) gets the outcome its key's
// record holds, never UNKNOWN_TOOL, which tells the client that nothing
// ran (invariant 9); with no record of its own it is UNKNOWN_TOOL as
// before.
func TestGoneToolAnswersFromRecord(t *testing.T) {
	const transfer = "bank/transfer_funds"
	removed := func(e *env) { e.Registry.Remove(transfer) }
	movedAway := func(e *env) { // now a tool of tenant globex only
		snap := e.Registry.Snapshot()
		i, ok := snap.Lookup(transfer)
		if !ok {
			e.T.Fatalf("no tool %s", transfer)
		}
		moved := *snap.Tool(i)
		moved.Tenants = []string{"globex"}
		e.Registry.Remove(transfer)
		if err := e.Registry.Add(moved); err != nil {
			e.T.Fatal(err)
		}
	}
	first := transferCall(alice, "s1", 1, okArgs)
	tests := []struct {
		name    string
		handler tools.Handler // nil: the env's transfer
		gone    func(*env)
		resend  gateway.Call
		advance time.Duration
		// want: "" a cached result; else the error type.
		want gateway.ErrorType
	}{
		{name: "value, removed", gone: removed, resend: transferCall(alice, "s1", 1, ` {"amount":2.505e2,"target_account":"ACC-00002","source_account":"ACC-00001"}`)},
		{name: "value, restricted to another tenant", gone: movedAway, resend: first},
		{name: "domain error", gone: removed, resend: first, want: gateway.DomainErrorType,
			handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
				return nil, &tools.DomainError{Code: "INSUFFICIENT_FUNDS", Message: "not enough"}
			}},
		{name: "uncertain", gone: removed, resend: first, want: gateway.UncertainOutcome,
			handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
				return nil, errors.New("connection reset")
			}},
		{name: "record expired", gone: removed, resend: first, advance: 25 * time.Hour, want: gateway.UnknownTool},
		{name: "other principal, same tenant", gone: removed, resend: transferCall(tools.Principal{ID: "carol", Tenant: "acme", Scopes: alice.Scopes}, "s1", 1, okArgs), want: gateway.UnknownTool},
		{name: "other tenant", gone: removed, resend: transferCall(eve, "s1", 1, okArgs), want: gateway.UnknownTool},
		{name: "other arguments", gone: removed, resend: transferCall(alice, "s1", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":9}`), want: gateway.UnknownTool},
		{name: "other step", gone: removed, resend: transferCall(alice, "s1", 2, okArgs), want: gateway.UnknownTool},
		{name: "bare name", gone: removed, resend: gateway.Call{Principal: alice, SessionID: "s1", Step: 1, Tool: "transfer_funds", Arguments: json.RawMessage(okArgs)}, want: gateway.UnknownTool},
		{name: "empty session", gone: removed, resend: transferCall(alice, "", 1, okArgs), want: gateway.UnknownTool},
		{name: "arguments not an object", gone: removed, resend: transferCall(alice, "s1", 1, `[1]`), want: gateway.UnknownTool},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			if tc.handler != nil {
				e.SetTransfer(tc.handler)
			}
			firstRes, firstErr := e.Gateway.Execute(ctx, first)
			tc.gone(e)
			e.Clock.Advance(tc.advance)
			res, err := e.Gateway.Execute(ctx, tc.resend)
			if tc.want == "" {
				if err != nil || firstErr != nil {
					t.Fatalf("Execute(re-send) = %v, first call %v; want the first call's result", err, firstErr)
				}
				if !res.Cached || res.IdempotencyKey != firstRes.IdempotencyKey || string(res.Value) != string(firstRes.Value) {
					t.Errorf("Execute(re-send) = cached %v, key %s, value %s; want cached, key %s, value %s",
						res.Cached, res.IdempotencyKey, res.Value, firstRes.IdempotencyKey, firstRes.Value)
				}
				if got := metricstest.Count(t, e.Prom, "toolgate_gateway_replays_total", "tool", transfer); got != 1 {
					t.Errorf("replays_total{tool=%q} = %v, want 1", transfer, got)
				}
				entries, err := e.Store.QueryAudit(ctx, store.AuditQuery{})
				if err != nil {
					t.Fatal(err)
				}
				if last := entries[len(entries)-1]; last.Outcome != store.OutcomeReplayed || last.Key != firstRes.IdempotencyKey || last.Decision != store.DecisionAllow {
					t.Errorf("audit entry = outcome %s, key %s, decision %s; want replayed, key %s, allow", last.Outcome, last.Key, last.Decision, firstRes.IdempotencyKey)
				}
			} else {
				ge := wantType(t, "Execute(re-send)", err, tc.want)
				if tc.want == gateway.DomainErrorType && !ge.Cached {
					t.Errorf("Execute(re-send) = %+v, want a cached domain error", ge)
				}
				if tc.want != gateway.UnknownTool && ge.IdempotencyKey != gwError(t, firstErr).IdempotencyKey {
					t.Errorf("Execute(re-send) key = %s, want the first call's %s", ge.IdempotencyKey, gwError(t, firstErr).IdempotencyKey)
				}
			}
			if n := e.Runs.Total(); tc.handler == nil && n != 1 {
				t.Errorf("handler ran %d times, want 1", n)
			}
		})
	}
}

// A re-send of a call that is still running when its tool goes gets
// IN_PROGRESS, from the gateway running it and from another gateway
// sharing the store.
func TestGoneToolInProgress(t *testing.T) {
	e := newEnv(t, nil)
	started, release := make(chan struct{}), make(chan struct{})
	e.SetTransfer(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-release
		return json.RawMessage(`{"ok":true}`), nil
	})
	done := make(chan error, 1)
	go func() {
		_, err := e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, okArgs))
		done <- err
	}()
	<-started
	e.Registry.Remove("bank/transfer_funds")
	other := gatewaytest.NewOn(t, e.Store, nil)
	other.Registry.Remove("bank/transfer_funds")
	for name, gw := range map[string]*gateway.Gateway{"running gateway": e.Gateway, "other gateway": other.Gateway} {
		t.Run(name, func(t *testing.T) {
			_, err := gw.Execute(ctx, transferCall(alice, "s1", 1, okArgs))
			if ge := wantType(t, "Execute(re-send)", err, gateway.InProgress); !ge.Retryable {
				t.Errorf("IN_PROGRESS = %+v, want retryable", ge)
			}
		})
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// failingGet is a store whose Get fails.
type failingGet struct{ store.Store }

func (failingGet) Get(context.Context, string) (store.Record, error) {
	return store.Record{}, errors.New("connection refused")
}

// A store that cannot be read answers the call of a gone tool as
// UNKNOWN_TOOL, not as an internal error.
func TestGoneToolStoreError(t *testing.T) {
	e := gatewaytest.NewOn(t, failingGet{gatewaytest.New(t, nil).Store}, nil)
	if _, err := e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, okArgs)); err != nil {
		t.Fatal(err)
	}
	e.Registry.Remove("bank/transfer_funds")
	_, err := e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, okArgs))
	wantType(t, "Execute(re-send)", err, gateway.UnknownTool)
}

// TestGoneToolRunsNoOtherTenantsCode: a call of a tool restricted to
// another tenant is UNKNOWN_TOOL for the caller's tenant; looking for its
// record must not validate it against that tool, nor run that tool's
// Validator (code of a tool the caller cannot see).
func TestGoneToolRunsNoOtherTenantsCode(t *testing.T) {
	var ran int
	e := newEnv(t, func(o *gateway.Options) {
		o.Validators = map[string]gateway.Validator{
			"bank/transfer_funds": func(context.Context, gateway.Call, json.RawMessage) error { ran++; return nil },
		}
	})
	snap := e.Registry.Snapshot()
	i, ok := snap.Lookup("bank/transfer_funds")
	if !ok {
		t.Fatal("no tool bank/transfer_funds")
	}
	globex := *snap.Tool(i)
	globex.Tenants = []string{"globex"}
	e.Registry.Remove(globex.ID)
	if err := e.Registry.Add(globex); err != nil {
		t.Fatal(err)
	}
	wantType(t, "another tenant's tool", second(e.Gateway.Execute(ctx, transferCall(alice, "s1", 1, okArgs))), gateway.UnknownTool)
	if ran != 0 {
		t.Errorf("the other tenant's Validator ran %d times for a call of acme's principal", ran)
	}
}
