package redisstore_test

import (
	"context"
	"log"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/redisstore"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/tools"
)

// Claims, approvals and the audit log in a SQLite file on this host; the
// rate limits in Redis, so a principal has one budget across hosts.
// (Not run: it needs a Redis server.)
func Example_rateLimitsOnly() {
	ctx := context.Background()
	reg := tools.NewRegistry()
	dir, err := os.MkdirTemp("", "gateway-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	st, err := sqlitestore.Open(ctx, filepath.Join(dir, "gateway.db"), nil) // claims, approvals, audit
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	limits, err := redisstore.Open(ctx, "redis://10.0.0.5:6379/0", nil) // one budget per principal across hosts
	if err != nil {
		log.Fatal(err)
	}
	defer limits.Close()
	g, err := gateway.New(reg, st, &gateway.Options{Stores: gateway.Stores{RateLimits: limits}})
	if err != nil {
		log.Fatal(err)
	}
	_ = g
}
