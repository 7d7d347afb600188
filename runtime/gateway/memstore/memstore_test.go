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
