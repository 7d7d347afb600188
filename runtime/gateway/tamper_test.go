package gateway_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// tamperStore rewrites approvals on their way out of the store, as a
// confused or compromised store might.
type tamperStore struct {
	store.Store
	tamper func(*store.Approval)
}

func (s tamperStore) GetApproval(ctx context.Context, id string) (store.Approval, error) {
	a, err := s.Store.GetApproval(ctx, id)
	if err == nil {
		s.tamper(&a)
	}
	return a, err
}

// TestApprovalBinding: a granted approval lets the call run only when its
// stored key and fingerprint both match the call's.
func TestApprovalBinding(t *testing.T) {
	for name, tamper := range map[string]func(*store.Approval){
		"other fingerprint": func(a *store.Approval) { a.Fingerprint = gateway.Fingerprint([]byte(`{"amount":1}`)) },
		"other key":         func(a *store.Approval) { a.Key = "0000" + a.Key[4:] },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, nil)
			ts := tamperStore{Store: e.Store, tamper: func(*store.Approval) {}}
			g, err := gateway.New(e.Registry, &ts, &gateway.Options{Clock: e.Clock, Logger: quietLogger(), NeedsApproval: func(context.Context, gateway.Call, json.RawMessage) bool { return true }})
			if err != nil {
				t.Fatal(err)
			}
			call := transferCall(alice, "s", 1, okArgs)
			id := wantType(t, "first call", second(g.Execute(ctx, call)), gateway.ConfirmationRequired).ApprovalID
			if _, err := g.Approve(ctx, bob, id); err != nil {
				t.Fatal(err)
			}
			ts.tamper = tamper
			wantType(t, "call with a tampered approval", second(g.Execute(ctx, call)), gateway.ConfirmationRequired)
			if n := e.Runs.Total(); n != 0 {
				t.Fatalf("handler ran %d times on a tampered approval, want 0", n)
			}
			ts.tamper = func(*store.Approval) {}
			if _, err := g.Execute(ctx, call); err != nil {
				t.Errorf("call with the genuine approval: %v", err)
			}
		})
	}
}
