package pgstore_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/testservices"
	"github.com/toolgate/toolgate/runtime/gateway/pgstore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// handles opens n stores, each with its own connection pool, on one fresh
// schema of the test database ([testservices.PostgresSchema]), as n
// processes would. They are closed, and the schema dropped, when the test
// ends.
func handles(tb testing.TB, n int) []store.Store {
	url, schema := testservices.PostgresSchema(tb, "toolgate_test")
	return storetest.OpenN(tb, n, func() (store.Store, error) {
		return pgstore.Open(context.Background(), url, &pgstore.Options{Schema: schema})
	})
}

// BenchmarkExecuteConcurrent measures Gateway.Execute over one PostgreSQL
// database on loopback with 32 concurrent callers ([storetest.BenchmarkScaleOut]),
// through one gateway or three.
func BenchmarkExecuteConcurrent(b *testing.B) { storetest.BenchmarkScaleOut(b, handles) }
