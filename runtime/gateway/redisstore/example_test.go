package redisstore_test

import (
	"context"
	"log"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/redisstore"
	"github.com/toolgate/toolgate/tools"
)

// Every replica opens the same Redis (and prefix); their gateways then share
// claims, approvals, the audit log and rate limits. (Not run: it needs a
// Redis server.)
func Example() {
	ctx := context.Background()
	st, err := redisstore.Open(ctx, "redis://127.0.0.1:6379/0", &redisstore.Options{Prefix: "toolgate:"})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	gw, err := gateway.New(tools.NewRegistry(), st, nil)
	if err != nil {
		log.Fatal(err)
	}
	_ = gw // gw.Execute(ctx, call) from any replica: one execution per call
}
