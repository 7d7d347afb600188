package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// A Redis that loses its data (restarted without persistence) loses the
// fencing counter too; tokens handed out afterwards must still exceed the
// old ones, so an owner from before the loss cannot complete a new claim.
func TestTokensGrowAcrossDataLoss(t *testing.T) {
	ctx := context.Background()
	url := testservices.RedisURL(t)
	prefix := fmt.Sprintf("toolgate-test:loss:%d:", prefixes.Add(1))
	s, err := redisstore.Open(ctx, url, &redisstore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	sl := gateway.Slot{Tenant: "acme", SessionID: "s", Step: 1, Tool: "bank/pay"}
	req := gateway.ClaimRequest{Slot: sl, Principal: "alice", Key: "k1", Fingerprint: "fp", Now: t0,
		LeaseExpires: t0.Add(time.Minute), ExpiresAt: t0.Add(time.Hour), TakeOver: true}
	c1, err := s.Claim(ctx, req)
	if err != nil || c1.Status != gateway.ClaimAcquired {
		t.Fatalf("Claim = %+v, %v; want acquired", c1, err)
	}

	// The data loss: every key of the store is gone.
	o, _ := redis.ParseURL(url)
	rdb := redis.NewClient(o)
	defer rdb.Close()
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("Keys(%s*) = %v, %v; want the store's keys", prefix, keys, err)
	}
	if err := rdb.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}

	req.Now = t0.Add(time.Second)
	c2, err := s.Claim(ctx, req)
	if err != nil || c2.Status != gateway.ClaimAcquired {
		t.Fatalf("Claim after the loss = %+v, %v; want acquired", c2, err)
	}
	if c2.Token <= c1.Token {
		t.Errorf("token after the data loss = %d, want > %d (the token before it)", c2.Token, c1.Token)
	}
	err = s.Complete(ctx, gateway.Completion{Slot: sl, Token: c1.Token, Value: json.RawMessage(`"stale"`), Now: req.Now, ExpiresAt: t0.Add(time.Hour)})
	if !errors.Is(err, gateway.ErrFenced) {
		t.Errorf("Complete by the owner from before the loss = %v, want ErrFenced", err)
	}
}
