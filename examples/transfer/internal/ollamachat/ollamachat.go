// Package ollamachat is the transfer chat's Ollama backend (OLLAMA_HOST),
// in its own package so that only a program that runs it links the Ollama
// client.
package ollamachat

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/examples/transfer/internal/chat"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/ollama"
)

// Backend is --backend ollama: envelope mode by default (the turn envelope
// as Ollama's JSON-Schema format).
func Backend(ctx context.Context, f chat.Flags) (chat.Setup, error) {
	s := chat.Setup{Model: f.Model, Mode: chat.ModeOr(f.Mode, llm.ModeEnvelope)}
	if s.Model == "" {
		s.Model = chat.DefaultOllamaModel
	}
	b, err := ollama.New(s.Model, &ollama.Options{Temperature: f.Temperature, Seed: f.Seed})
	if err != nil {
		return chat.Setup{}, err
	}
	s.Backend = b
	// The model's num_ctx (its Modelfile) is the window requests run
	// with. Without one the server's default applies, which no endpoint
	// reports, and the guard stays off; a server that does not answer
	// fails the first request instead, more clearly.
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if n, perr := b.ContextSize(pctx); perr == nil {
		s.ContextTokens = n
	}
	return s, nil
}
