package grammar_test

import (
	"encoding/json"
	"fmt"
	"log"

	"github.com/toolgate/toolgate/grammar"
)

// One schema to a llama.cpp grammar, a turn's tools to one envelope
// grammar, and a schema rewritten for OpenAI's strict mode.
func Example() {
	schema := []byte(`{"type":"object","properties":{"account":{"type":"string","pattern":"^ACC-[0-9]{5}$"}},"required":["account"]}`)
	balanceSchema := json.RawMessage(schema)
	transferSchema := json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]}`)

	cache := grammar.NewCache(0)                                           // bounded LRU (DefaultCacheEntries); share it
	res, err := grammar.FromSchema(schema, &grammar.Options{Cache: cache}) // res.GBNF, res.Relaxations, res.Bounds
	if err != nil {
		log.Fatal(err)
	}
	env, err := grammar.Envelope([]grammar.EnvelopeTool{ // one grammar for the turn
		{Name: "transfer_funds", Schema: transferSchema},
		{Name: "get_balance", Schema: balanceSchema},
	}, &grammar.Options{NoFindTools: true, Cache: cache}) // a repeated shortlist costs a hash
	if err != nil {
		log.Fatal(err)
	}
	// env.GBNF; env.Excluded lists tools whose schema failed (they are left out, never unconstrained);
	// env.Bounds the limits the envelope adds
	spec, relax, err := grammar.OpenAIStrict(schema) // response_format / strict tools
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(res.Relaxations), env.Tools, len(env.Excluded))
	fmt.Println(string(spec), len(relax))
	// Output:
	// 0 [transfer_funds get_balance] 0
	// {"type":"object","properties":{"account":{"type":"string","pattern":"^ACC-[0-9]{5}$"}},"required":["account"],"additionalProperties":false} 0
}
