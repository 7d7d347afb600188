package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/tools"
)

type balanceArgs struct {
	Account string `json:"account" jsonschema:"the account number, like ACC-00001"`
}

type balance struct {
	Account string `json:"account"`
	Balance string `json:"balance"`
}

// A typed Go function becomes a tool: its schema comes from the argument
// struct, and its handler decodes and encodes JSON.
func ExampleNewFunc() {
	getBalance, err := tools.NewFunc("bank/get_balance",
		tools.Card{Summary: "Show the balance of an account", Scopes: []string{"accounts:read"}, ReadOnly: true},
		func(ctx context.Context, in balanceArgs) (balance, error) {
			if in.Account == "ACC-99999" {
				return balance{}, &tools.DomainError{Code: "ACCOUNT_CLOSED", Message: "the account is closed"}
			}
			return balance{Account: in.Account, Balance: "1000.00"}, nil
		})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(getBalance.InputSchema))

	res, err := getBalance.Handler(context.Background(), json.RawMessage(`{"account":"ACC-00001"}`))
	fmt.Println(string(res), err)

	_, err = getBalance.Handler(context.Background(), json.RawMessage(`{"account":"ACC-99999"}`))
	var de *tools.DomainError
	fmt.Println(errors.As(err, &de), de.Code)

	_, err = getBalance.Handler(context.Background(), json.RawMessage(`{"acount":"ACC-00001"}`))
	fmt.Println(errors.Is(err, tools.ErrInvalidArguments), tools.IsNoEffect(err))
	// Output:
	// {"type":"object","properties":{"account":{"type":"string","description":"the account number, like ACC-00001"}},"required":["account"],"additionalProperties":false}
	// {"account":"ACC-00001","balance":"1000.00"} <nil>
	// true ACCOUNT_CLOSED
	// true true
}
