package ollama_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/ollama"
)

// A model on a local Ollama server, wrapped in llm.Checked (repairs,
// retries, token budget, metrics), asked for one turn constrained by the
// envelope schema. (Not run: it needs an Ollama server.)
func Example() {
	ctx := context.Background()
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "Weather in Paris?"}}
	shortlist := []llm.ToolSpec{{Name: "get_weather", Description: "Current weather for a city",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}}
	envelopeSchema := json.RawMessage(`{"type":"object"}`) // grammar.EnvelopeSchema of the shortlist, in real code
	validate := func(ctx context.Context, tool string, args json.RawMessage) error { return nil }

	b, err := ollama.New("qwen3:8b", nil) // OLLAMA_HOST, default http://127.0.0.1:11434
	if err != nil {
		log.Fatal(err)
	}
	cb, err := llm.Checked(b, &llm.Options{
		Validate:   validate,                     // func(ctx, tool, args) error, e.g. the gateway's schema check
		Registerer: prometheus.DefaultRegisterer, // toolgate_llm_* metrics
	})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := cb.Chat(ctx, &llm.Request{Messages: msgs, Tools: shortlist,
		Constraint: llm.Constraint{EnvelopeSchema: envelopeSchema}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Action, resp.Calls, resp.Answer)
}
