package local_test

import (
	"context"
	"fmt"
	"log"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/local"
)

// A GGUF model in this process, no server: the envelope's grammar masks
// every token the model writes. (Compiled, not run: it needs
// libllama.so and a model file.)
func Example() {
	b, err := local.New("tinyllama-1.1b-chat-q4_0.gguf", &local.Options{
		Library: "/opt/llama/libllama.so", // "" reads TOOLGATE_LIBLLAMA
		Threads: 4,
	})
	if err != nil {
		log.Fatal(err) // local.ErrLibrary or local.ErrModel, saying what is missing
	}
	defer b.Close()
	env, err := grammar.Envelope([]grammar.EnvelopeTool{{Name: "get_balance",
		Schema: []byte(`{"type":"object","properties":{"account":{"type":"string"}},"required":["account"]}`)}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	resp, err := b.Chat(context.Background(), &llm.Request{
		Messages:   []llm.Message{{Role: llm.RoleUser, Content: "What is the balance of ACC-00001?"}},
		Tools:      []llm.ToolSpec{{Name: "get_balance", Parameters: []byte(`{"type":"object","properties":{"account":{"type":"string"}},"required":["account"]}`)}},
		Constraint: llm.Constraint{Mode: llm.ModeGrammar, GBNF: env.GBNF},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Action, resp.Usage.CachedPromptTokens)
}
