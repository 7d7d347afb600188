package pgstore_test

import (
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// Three gateways, each with its own connection pool to one PostgreSQL
// database (as three processes would have), receive 64 copies of one
// call: the handler runs once and every caller gets its result.
func TestGatewaysShareOneStore(t *testing.T) {
	storetest.RunGateways(t, handles, 3)
}
