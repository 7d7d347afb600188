package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/tools"
)

func ExampleGateway_Execute() {
	reg := tools.NewRegistry()
	_ = reg.Add(tools.Tool{
		ID:          "bank/get_balance",
		Card:        tools.Card{Name: "get_balance", Scopes: []string{"accounts:read"}},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"account":{"type":"string","pattern":"^ACC-[0-9]{5}$"}},"required":["account"]}`),
		Handler: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			// A handler that calls a downstream passes the key on, so a re-run dedupes there.
			_, _ = tools.IdempotencyKey(ctx)
			return json.RawMessage(`{"account":"ACC-00001","balance":"1000.00"}`), nil
		},
	})
	g, err := gateway.New(reg, memstore.New(), &gateway.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	alice := tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"accounts:read"}}
	call := gateway.Call{Principal: alice, SessionID: "session-1", Step: 1, Tool: "bank/get_balance",
		Arguments: json.RawMessage(`{"account":"ACC-00001"}`)}

	res, _ := g.Execute(context.Background(), call)
	fmt.Println(string(res.Value), "cached:", res.Cached)
	res, _ = g.Execute(context.Background(), call) // a retry: replayed, not re-run
	fmt.Println("cached:", res.Cached)

	call.Step, call.Arguments = 2, json.RawMessage(`{"account":"12345"}`)
	_, err = g.Execute(context.Background(), call)
	var gerr *gateway.Error
	if errors.As(err, &gerr) {
		v := gerr.Details.([]gateway.Violation)[0]
		fmt.Println(gerr.Type, "retryable:", gerr.Retryable, v.Pointer)
	}
	// Output:
	// {"account":"ACC-00001","balance":"1000.00"} cached: false
	// cached: true
	// VALIDATION_ERROR retryable: true /account
}
