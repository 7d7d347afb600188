// Package openaiembed is the OpenAI-compatible embedding client
// (/v1/embeddings, through [openai.Backend]; llama-server --embeddings
// serves it) as an [embedflags.API], for the programs that link OpenAI's
// SDK.
package openaiembed

import (
	"cmp"
	"os"

	"github.com/toolgate/toolgate/internal/embedflags"
	"github.com/toolgate/toolgate/llm/openai"
	"github.com/toolgate/toolgate/tools/discovery"
)

// APIs is this package's client under its --embed-api name.
var APIs = map[string]embedflags.API{"openai": New}

// New returns an OpenAI-compatible embedding client for model at url (an
// API root ending in /v1). A local server needs no key; a hosted API
// reads OPENAI_API_KEY.
func New(model, url string) (discovery.Embedder, error) {
	b, err := openai.New(model, &openai.Options{BaseURL: url, APIKey: cmp.Or(os.Getenv("OPENAI_API_KEY"), "none"), EmbeddingModel: model})
	if err != nil {
		return nil, err
	}
	return b, nil
}
