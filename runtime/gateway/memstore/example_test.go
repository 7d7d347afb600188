package memstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// The audit log in a store of its own; claims, approvals and rate limits
// stay in the store passed to New. Any concern can be sent elsewhere the
// same way: gateway.Stores{RateLimits: redis} beside a SQLite store, say.
func Example_auditElsewhere() {
	ctx := context.Background()
	reg := tools.NewRegistry()
	if err := reg.Add(tools.Tool{ID: "demo/echo", Card: tools.Card{Name: "echo"},
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler:     func(_ context.Context, args json.RawMessage) (json.RawMessage, error) { return args, nil }}); err != nil {
		log.Fatal(err)
	}
	st, audit := memstore.New(), memstore.New()
	g, err := gateway.New(reg, st, &gateway.Options{Stores: gateway.Stores{Audit: audit}})
	if err != nil {
		log.Fatal(err)
	}
	alice := tools.Principal{ID: "alice", Tenant: "acme"}
	if _, err := g.Execute(ctx, gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "demo/echo",
		Arguments: json.RawMessage(`{}`)}); err != nil {
		log.Fatal(err)
	}
	inAudit, _ := audit.QueryAudit(ctx, store.AuditQuery{})
	inStore, _ := st.QueryAudit(ctx, store.AuditQuery{})
	fmt.Println(len(inAudit), inAudit[0].Principal, inAudit[0].Outcome)
	fmt.Println(len(inStore))
	// Output:
	// 1 alice ok
	// 0
}
