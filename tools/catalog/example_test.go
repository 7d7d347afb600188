package catalog_test

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
)

// Parse keeps every good tool and reports each bad one as FILE:LINE: reason;
// a tool object that says "scopes" twice has no one meaning and is refused.
func ExampleParse() {
	file := `{"name":"get_balance","description":"Show the balance of an account. Any account you hold.","scopes":["accounts:read"],"annotations":{"readOnlyHint":true}}
{"name":"wipe","scopes":["admin"],"scopes":[]}
{"name":"transfer_funds","summary":"Send money to another account","scopes":["payments:write"],"inputSchema":{"type":"object","properties":{"amount":{"type":"string"}}}}
`
	ts, err := catalog.Parse(strings.NewReader(file), "bank.jsonl", "bank")
	for _, t := range ts {
		fmt.Printf("%s %q scopes=%v read_only=%v\n", t.ID, t.Card.Summary, t.Card.Scopes, t.Card.ReadOnly)
	}
	fmt.Println(err)

	reg := tools.NewRegistry()
	fmt.Println(reg.Add(ts...), reg.Snapshot().Len())
	// Output:
	// bank/get_balance "Show the balance of an account." scopes=[accounts:read] read_only=true
	// bank/transfer_funds "Send money to another account" scopes=[payments:write] read_only=false
	// bank.jsonl:2: duplicate member name "scopes"
	// <nil> 2
}
