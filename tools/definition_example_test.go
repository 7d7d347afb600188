package tools_test

import (
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/tools"
)

// A Definition is how every tool is stated; Define derives its card.
func ExampleDefine() {
	t, err := tools.Define("bank", tools.Definition{
		Name:        "issue_full_refund",
		Description: "Refund a transaction in full. The money leaves at once and cannot be recalled.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {"transaction_id": {"type": "string"}}}`),
		Scopes:      []string{"billing:admin"},
		Annotations: &tools.Annotations{DestructiveHint: true},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.ID)
	fmt.Println(t.Card.Summary)
	fmt.Println("irreversible:", t.Card.Irreversible)
	fmt.Println(string(t.InputSchema))

	_, err = tools.Define("bank", tools.Definition{Name: "audit", ReadOnly: true, Irreversible: true})
	fmt.Println(err)
	// Output:
	// bank/issue_full_refund
	// Refund a transaction in full.
	// irreversible: true
	// {"type":"object","properties":{"transaction_id":{"type":"string"}}}
	// tools: invalid tool "audit": "read_only" and "irreversible" contradict each other
}
