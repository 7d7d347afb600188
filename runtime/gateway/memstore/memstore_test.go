package memstore_test

import (
	"errors"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
	"github.com/toolgate/toolgate/tools"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memstore.New() })
}

// A claim applied but whose answer was lost never ran; the retry runs it
// at once.
func TestLostClaimReply(t *testing.T) {
	storetest.RunLostClaimReply(t, func(t *testing.T) store.Store { return memstore.New() })
}

// Text an audit entry cannot keep as it is (too long, not UTF-8) is cut
// at a character's start or replaced: every call gets its entry, valid
// UTF-8, and the chain verifies.
func TestAuditText(t *testing.T) {
	storetest.RunAuditText(t, func(t *testing.T) store.Store { return memstore.New() })
}

// Through Gateway.Execute: three gateways over one in-memory store.
func TestGatewaysShareOneStore(t *testing.T) {
	st := memstore.New()
	storetest.RunGateways(t, func(testing.TB, int) []store.Store { return []store.Store{st, st, st} }, 3)
}

// Records, audit and rate limits in three stores.
func TestComposed(t *testing.T) {
	storetest.RunComposed(t, func(t *testing.T) storetest.Composed {
		return storetest.Composed{Base: memstore.New(), Other: memstore.New(),
			Parts: gateway.Stores{Records: memstore.New(), Audit: memstore.New(), RateLimits: memstore.New()}}
	})
}

func TestNewNeedsEveryConcern(t *testing.T) {
	reg := tools.NewRegistry()
	if _, err := gateway.New(reg, nil, nil); !errors.Is(err, gateway.ErrInvalidOptions) {
		t.Errorf("New(nil store) = %v, want ErrInvalidOptions", err)
	}
	partial := &gateway.Options{Stores: gateway.Stores{Records: memstore.New(), Approvals: memstore.New(), Audit: memstore.New()}}
	if _, err := gateway.New(reg, nil, partial); !errors.Is(err, gateway.ErrInvalidOptions) {
		t.Errorf("New(nil store, no rate-limit store) = %v, want ErrInvalidOptions", err)
	}
	all := &gateway.Options{Stores: gateway.Stores{Records: memstore.New(), Approvals: memstore.New(), Audit: memstore.New(), RateLimits: memstore.New()}}
	if _, err := gateway.New(reg, nil, all); err != nil {
		t.Errorf("New(nil store, every concern in Options.Stores) = %v, want a gateway", err)
	}
	st := memstore.New()
	g, err := gateway.New(reg, st, &gateway.Options{Stores: gateway.Stores{Records: st, Audit: st}})
	if err != nil || g.Store() != store.Store(st) {
		t.Errorf("New(st, Stores naming st only).Store() = %v, %v; want st itself", g.Store(), err)
	}
}
