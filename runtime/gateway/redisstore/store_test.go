package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/testservices"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/redisstore"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

func TestMain(m *testing.M) { os.Exit(testservices.Main(m)) }

var prefixes atomic.Int64

// open returns a store under a prefix no other test uses, on the shared
// test server.
func open(t *testing.T) *redisstore.Store {
	t.Helper()
	url := testservices.RedisURL(t)
	prefix := fmt.Sprintf("toolgate-test:%d:%d:", os.Getpid(), prefixes.Add(1))
	s, err := redisstore.Open(context.Background(), url, &redisstore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) gateway.Store { return open(t) })
}
