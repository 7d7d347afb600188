package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"sync"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/tools"
)

// A handler passes the gateway's idempotency key to whatever performs the
// effect, so that a re-run after an uncertain outcome is deduplicated
// there; its errors say whether the call had an effect.
func Example_handlerIdempotency() {
	var mu sync.Mutex
	ledger := map[string]json.RawMessage{} // stands in for a table with UNIQUE(key)

	transfer := func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		key, ok := tools.IdempotencyKey(ctx) // set by the gateway; handlers need not import it
		if !ok {
			return nil, tools.NoEffect(errors.New("no idempotency key")) // failed before any effect: claim released
		}
		var tr struct {
			Amount float64 `json:"amount"`
		}
		if err := json.Unmarshal(args, &tr); err != nil {
			return nil, tools.NoEffect(err)
		}
		if tr.Amount > 1000 { // refused on the merits: recorded, and replayed to a retry
			return nil, &tools.DomainError{Code: "INSUFFICIENT_FUNDS", Message: "the balance is 1000.00"}
		}
		// A ledger: INSERT the transfer and the key in ONE transaction, UNIQUE(key);
		// on a duplicate key return the stored transfer instead of moving money again.
		// An HTTP API: req.Header.Set("Idempotency-Key", key).
		mu.Lock()
		defer mu.Unlock()
		if done, dup := ledger[key]; dup {
			return done, nil
		}
		ledger[key] = json.RawMessage(`{"status":"sent"}`)
		return ledger[key], nil
	}

	reg := tools.NewRegistry()
	if err := reg.Add(tools.Tool{ID: "bank/transfer_funds", Card: tools.Card{Name: "transfer_funds"},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]}`),
		Handler:     transfer}); err != nil {
		log.Fatal(err)
	}
	g, err := gateway.New(reg, memstore.New(), &gateway.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	call := gateway.Call{Principal: tools.Principal{ID: "alice", Tenant: "acme"}, SessionID: "s-1", Step: 1,
		Tool: "bank/transfer_funds", Arguments: json.RawMessage(`{"amount":25}`)}
	res, err := g.Execute(context.Background(), call)
	fmt.Println(string(res.Value), err, len(ledger))

	call.Step, call.Arguments = 2, json.RawMessage(`{"amount":5000}`)
	_, err = g.Execute(context.Background(), call)
	var gerr *gateway.Error
	fmt.Println(errors.As(err, &gerr), gerr.Type, len(ledger))
	// Output:
	// {"status":"sent"} <nil> 1
	// true DOMAIN_ERROR 1
}
