package redisstore_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway/redisstore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

// handles opens n stores, each with its own connection pool, on one fresh
// key prefix of the test Redis, as n processes would.
func handles(tb testing.TB, n int) []store.Store {
	url, prefix := freshPrefix(tb, "shared")
	return storetest.OpenN(tb, n, func() (store.Store, error) {
		return redisstore.Open(context.Background(), url, &redisstore.Options{Prefix: prefix})
	})
}

// BenchmarkExecuteConcurrent measures Gateway.Execute over one Redis on
// loopback with 32 concurrent callers ([storetest.BenchmarkScaleOut]), through
// one gateway or three.
func BenchmarkExecuteConcurrent(b *testing.B) { storetest.BenchmarkScaleOut(b, handles) }
