package pgstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/pgstore"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// handles opens n stores, each with its own connection pool, on one fresh
// schema of the test database, as n processes would.
func handles(tb testing.TB, n int) []gateway.Store {
	url, schema := freshSchema(tb)
	return storetest.OpenN(tb, n, func() (gateway.Store, error) {
		return pgstore.Open(context.Background(), url, &pgstore.Options{Schema: schema})
	})
}

// BenchmarkExecuteConcurrent measures Gateway.Execute over one PostgreSQL
// database on loopback with 32 concurrent callers (storetest.BenchmarkExecute),
// through one gateway or three.
func BenchmarkExecuteConcurrent(b *testing.B) {
	for _, gateways := range []int{1, 3} {
		b.Run(fmt.Sprintf("gateways=%d", gateways), func(b *testing.B) {
			storetest.BenchmarkExecute(b, handles, gateways, 32)
		})
	}
}
