package llm_test

import (
	"fmt"

	"github.com/toolgate/toolgate/llm"
)

func ExampleParseEnvelope() {
	for _, reply := range []string{
		`{"action":"call","tool":"get_balance","arguments":{"account":"ACC-00001"}}`,
		`{"action":"find_tools","query":"refund a payment"}`,
		`{"action":"call","tool":"get_balance","arguments":{},"admin":true}`,
	} {
		env, err := llm.ParseEnvelope([]byte(reply))
		if err != nil {
			fmt.Println("rejected:", err)
			continue
		}
		switch env.Action {
		case llm.ActionCall:
			fmt.Println("call", env.Tool, string(env.Arguments))
		case llm.ActionFindTools:
			fmt.Println("find_tools", env.Query)
		}
	}
	// Output:
	// call get_balance {"account":"ACC-00001"}
	// find_tools refund a payment
	// rejected: llm: not a turn envelope: action "call" takes exactly the keys action, tool, arguments; got 4 keys
}
