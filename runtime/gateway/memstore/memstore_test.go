package memstore_test

import (
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) gateway.Store { return memstore.New() })
}

// Through Gateway.Execute: three gateways over one in-memory store.
func TestGatewaysShareOneStore(t *testing.T) {
	st := memstore.New()
	storetest.RunGateways(t, func(testing.TB, int) []gateway.Store { return []gateway.Store{st, st, st} }, 3)
}
