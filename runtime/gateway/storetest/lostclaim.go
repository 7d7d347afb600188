package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/internal/gatewaytest"
)

// lostClaimReply is a store whose next Claim is applied and then fails, as
// a claim does whose connection is lost after the commit.
type lostClaimReply struct {
	store.Store
	lose atomic.Bool
}

func (s *lostClaimReply) Claim(ctx context.Context, req store.ClaimRequest) (store.Claim, error) {
	c, err := s.Store.Claim(ctx, req)
	if err == nil && s.lose.CompareAndSwap(true, false) {
		return store.Claim{}, errors.New("storetest: the connection was lost after the claim was applied")
	}
	return c, err
}

// RunLostClaimReply checks, through [gateway.Gateway.Execute] on a store
// newStore opens, a claim the store applied but whose answer was lost (a
// fault-injecting wrapper makes the store's Claim fail after it
// committed). Such a call never ran: the gateway calls no tool after a
// failed claim. The caller is told to retry, and its retry runs the call at
// once as its first attempt: not IN_PROGRESS until the lost claim's lease
// expires, not with an uncertain previous attempt, and under
// [gateway.UncertainReconcile] not blocked until reconciled. A lost claim
// that took over an earlier uncertain attempt leaves that one uncertain,
// for the retry to take over at once. It needs [store.Record.Owner] kept
// (the ClaimOwner case of [RunRecords]).
func RunLostClaimReply(t *testing.T, newStore func(t *testing.T) store.Store) {
	for _, tc := range []struct {
		name   string
		policy gateway.UncertainPolicy
		// uncertainFirst: an earlier attempt's outcome is unknown before
		// the claim whose answer is lost.
		uncertainFirst bool
		wantAttempts   int
	}{
		{"rerun", gateway.UncertainRerun, false, 1},
		{"reconcile", gateway.UncertainReconcile, false, 1},
		{"rerun after an uncertain attempt", gateway.UncertainRerun, true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &lostClaimReply{Store: newStore(t)}
			e := gatewaytest.NewOn(t, st, func(o *gateway.Options) { o.Uncertain = tc.policy })
			call := gatewaytest.TransferCall(gatewaytest.Alice, "lost-claim", 1, gatewaytest.OKArgs)
			if tc.uncertainFirst {
				handler := e.Transfer()
				e.SetTransfer(func(context.Context, json.RawMessage) (json.RawMessage, error) {
					return nil, errors.New("bank: connection reset mid-transfer")
				})
				_, err := e.Gateway.Execute(t.Context(), call)
				gatewaytest.WantType(t, "the first attempt", err, gateway.DownstreamFailure)
				e.SetTransfer(handler)
			}
			st.lose.Store(true)
			_, err := e.Gateway.Execute(t.Context(), call)
			if ge := gatewaytest.WantType(t, "the call whose claim's answer was lost", err, gateway.Internal); !ge.RetrySame() {
				t.Fatalf("the call whose claim's answer was lost = %v, want a retryable INTERNAL_ERROR", ge)
			}
			if n := e.Runs.Total(); n != 0 {
				t.Fatalf("the tool ran %d times after a failed claim, want 0", n)
			}
			res, err := e.Gateway.Execute(t.Context(), call)
			if err != nil {
				e.Clock.Advance(2 * time.Hour)
				later, lerr := e.Gateway.Execute(t.Context(), call)
				t.Fatalf("the retry = %v, want the call run (past the lease: %+v, %v)", err, later, lerr)
			}
			if res.Cached || res.Attempts != tc.wantAttempts || res.PreviousUncertain != tc.uncertainFirst {
				t.Errorf("the retry = cached %v, attempts %d, previous uncertain %v; want a run, attempts %d, previous uncertain %v",
					res.Cached, res.Attempts, res.PreviousUncertain, tc.wantAttempts, tc.uncertainFirst)
			}
			if n := e.Runs.Total(); n != 1 {
				t.Errorf("the tool ran %d times, want once", n)
			}
		})
	}
}
