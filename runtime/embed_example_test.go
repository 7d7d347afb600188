package runtime_test

import (
	"context"
	"log"

	"github.com/toolgate/toolgate/llm/ollama"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/embedcache"
)

// Discovery's model tier through the user's Ollama (ollama pull
// nomic-embed-text): the llm backend is the discovery.Embedder, the
// vectors cached on disk. Compiled, not run: it needs the server.
func Example_embeddingModel() {
	reg := tools.NewRegistry()
	emb, err := ollama.New("nomic-embed-text", &ollama.Options{EmbedModel: "nomic-embed-text"})
	if err != nil {
		log.Fatal(err)
	}
	cache, err := embedcache.Open("/var/cache/toolgate/embeddings", "ollama http://localhost:11434 nomic-embed-text", nil)
	if err != nil {
		log.Fatal(err)
	}
	d, err := discovery.New(&discovery.Options{Model: &discovery.ModelOptions{Embedder: emb, Cache: cache,
		QueryPrefix: "search_query: ", CardPrefix: "search_document: "}})
	if err != nil {
		log.Fatal(err)
	}
	// At start; until it is done, queries are answered by the built-in ranking.
	if err := d.EmbedCatalog(context.Background(), reg.Snapshot()); err != nil {
		log.Print(err)
	}
}
