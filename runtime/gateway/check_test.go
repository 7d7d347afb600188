package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/tools"
)

func TestCheck(t *testing.T) {
	reg := tools.NewRegistry()
	ran := 0
	err := reg.Add(tools.Tool{
		ID:          "bank/transfer_funds",
		Card:        tools.Card{Name: "transfer_funds", Scopes: []string{"payments:write"}},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number","exclusiveMinimum":0}},"required":["amount"]}`),
		Handler: func(_ context.Context, _ json.RawMessage) (json.RawMessage, error) {
			ran++
			return json.RawMessage(`{}`), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(reg, memstore.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	payer := tools.Principal{ID: "u1", Tenant: "acme", Scopes: []string{"payments:write"}}
	reader := tools.Principal{ID: "u2", Tenant: "acme"}
	tests := []struct {
		name string
		call gateway.Call
		want gateway.ErrorType // "" = accepted
	}{
		{"valid", gateway.Call{Principal: payer, SessionID: "s", Step: 1, Tool: "bank/transfer_funds", Arguments: json.RawMessage(`{"amount":5}`)}, ""},
		{"no principal", gateway.Call{SessionID: "s", Step: 1, Tool: "bank/transfer_funds", Arguments: json.RawMessage(`{"amount":5}`)}, gateway.Unauthenticated},
		{"unknown tool", gateway.Call{Principal: payer, SessionID: "s", Step: 1, Tool: "bank/nope", Arguments: json.RawMessage(`{}`)}, gateway.UnknownTool},
		{"missing scope", gateway.Call{Principal: reader, SessionID: "s", Step: 1, Tool: "bank/transfer_funds", Arguments: json.RawMessage(`{"amount":5}`)}, gateway.PermissionDenied},
		{"invalid", gateway.Call{Principal: payer, SessionID: "s", Step: 1, Tool: "bank/transfer_funds", Arguments: json.RawMessage(`{"amount":-5}`)}, gateway.ValidationError},
		{"undeclared property", gateway.Call{Principal: payer, SessionID: "s", Step: 1, Tool: "bank/transfer_funds", Arguments: json.RawMessage(`{"amount":5,"memo":"x"}`)}, gateway.ValidationError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := gw.Check(t.Context(), tt.call)
			var ge *gateway.Error
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("%s: Check = %v, want nil", tt.name, err)
			case tt.want != "" && (!errors.As(err, &ge) || ge.Type != tt.want):
				t.Errorf("%s: Check = %v, want %s", tt.name, err, tt.want)
			}
		})
	}
	if ran != 0 {
		t.Errorf("Check ran the handler %d times", ran)
	}
}
