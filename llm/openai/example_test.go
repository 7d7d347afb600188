package openai_test

import (
	"context"
	"fmt"
	"log"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/openai"
)

// llama.cpp's llama-server speaks the OpenAI chat API; a turn there is
// constrained by the GBNF grammar of the turn envelope. (Not run: it needs a
// server, at OPENAI_BASE_URL.)
func Example() {
	ctx := context.Background()
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "Weather in Paris?"}}
	var shortlist []llm.ToolSpec                  // the discovered tools
	turnGrammar := `root ::= "{\"answer\":\"\"}"` // grammar.Envelope(...).GBNF, in real code

	b, err := openai.New("local", &openai.Options{LegacyMaxTokens: true}) // llama.cpp reads max_tokens
	if err != nil {
		log.Fatal(err)
	}
	resp, err := b.Chat(ctx, &llm.Request{Messages: msgs, Tools: shortlist,
		Constraint: llm.Constraint{Mode: llm.ModeGrammar, GBNF: turnGrammar}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Action, resp.Answer)
}
