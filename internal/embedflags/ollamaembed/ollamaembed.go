// Package ollamaembed is the Ollama embedding client (/api/embed, through
// [ollama.Backend]) as an [embedflags.API], for the programs that link
// Ollama's SDK.
package ollamaembed

import (
	"github.com/toolgate/toolgate/internal/embedflags"
	"github.com/toolgate/toolgate/llm/ollama"
	"github.com/toolgate/toolgate/tools/discovery"
)

// APIs is this package's client under its --embed-api name.
var APIs = map[string]embedflags.API{"ollama": New}

// New returns an Ollama embedding client for model at url ("" reads
// OLLAMA_HOST, else http://localhost:11434).
func New(model, url string) (discovery.Embedder, error) {
	b, err := ollama.New(model, &ollama.Options{BaseURL: url, EmbedModel: model})
	if err != nil {
		return nil, err
	}
	return b, nil
}
