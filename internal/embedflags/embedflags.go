// Package embedflags is the --embed-* flags of toolgate's commands
// (discover, eval, serve, mcp serve) and of the transfer example's chat:
// discovery's model tier ([discovery.ModelOptions]) through the user's
// own embedding server, Ollama's /api/embed or an OpenAI-compatible
// /v1/embeddings (llama-server --embeddings), with the cards' vectors
// cached on disk ([embedcache]).
//
// The package links no model SDK: a program hands [Flags.Options] the
// embedding clients it links, by --embed-api value
// (internal/embedflags/ollamaembed, internal/embedflags/openaiembed), so
// that a program that uses one backend links only that backend's SDK.
package embedflags

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/embedcache"
)

// An API builds the embedding client of one --embed-api value for model
// at url: the server's root, "" for Ollama's default (OLLAMA_HOST, else
// http://localhost:11434).
type API func(model, url string) (discovery.Embedder, error)

// Flags are the --embed-* flags of one command: --embed-model,
// --embed-url, --embed-api, --embed-cache, --embed-timeout,
// --embed-catalog-timeout, --embed-weight,
// --embed-batch, --embed-concurrency, --embed-query-prefix and
// --embed-card-prefix.
type Flags struct {
	url, model, api, cache  string
	queryPrefix, cardPrefix string
	timeout, catalogTimeout time.Duration
	weight                  float64
	batch, concurrency      int
}

// Register adds the --embed-* flags to fs.
func (e *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&e.model, "embed-model", "", "rank with this embedding `MODEL` too (e.g. nomic-embed-text), fused with the built-in ranking; the cards are embedded once and cached")
	fs.StringVar(&e.url, "embed-url", "", "the embedding server's `URL`: Ollama's root (default OLLAMA_HOST, else http://localhost:11434) or an OpenAI-compatible API root ending in /v1 (llama-server --embeddings)")
	fs.StringVar(&e.api, "embed-api", "", "the embedding server's API: ollama (/api/embed) or openai (/v1/embeddings); default openai when --embed-url ends in /v1, else ollama")
	fs.StringVar(&e.cache, "embed-cache", "", "`DIR` of the card vectors cache (default: toolgate/embeddings in the user's cache directory); off keeps them in memory")
	fs.DurationVar(&e.timeout, "embed-timeout", discovery.DefaultModelTimeout, "the bound on embedding one request; past it the built-in ranking answers alone")
	fs.DurationVar(&e.catalogTimeout, "embed-catalog-timeout", discovery.DefaultModelCatalogTimeout, "the bound on embedding a catalog's uncached cards (a CPU-only server embeds a card in a second or more)")
	fs.Float64Var(&e.weight, "embed-weight", discovery.DefaultModelWeight, "the built-in ranking's `weight` in (0,1] in the fusion with the model's (calibrate with eval --embed-weights)")
	fs.IntVar(&e.batch, "embed-batch", discovery.DefaultModelBatch, "cards per embedding request")
	fs.IntVar(&e.concurrency, "embed-concurrency", discovery.DefaultModelConcurrency, "embedding requests in flight at once")
	fs.StringVar(&e.queryPrefix, "embed-query-prefix", "", "`TEXT` put before each request, for models trained with one (nomic-embed-text: \"search_query: \")")
	fs.StringVar(&e.cardPrefix, "embed-card-prefix", "", "`TEXT` put before each card, for models trained with one (nomic-embed-text: \"search_document: \")")
}

// Options returns the model tier the flags ask for, nil without
// --embed-model, with its client from apis (by --embed-api value; an API
// the program does not link is an error that says so). Warnings (a cache
// file not trusted, a query answered without the model) go to stderr.
func (e *Flags) Options(stderr io.Writer, apis map[string]API) (*discovery.ModelOptions, error) {
	if e.model == "" {
		if e.url != "" || e.api != "" {
			return nil, errors.New("--embed-url and --embed-api need --embed-model")
		}
		return nil, nil
	}
	switch {
	case e.timeout <= 0 || e.catalogTimeout <= 0:
		return nil, fmt.Errorf("--embed-timeout %v and --embed-catalog-timeout %v must be positive", e.timeout, e.catalogTimeout)
	case !(e.weight > 0 && e.weight <= 1):
		return nil, fmt.Errorf("--embed-weight %v must be in (0,1]", e.weight)
	case e.batch < 1 || e.concurrency < 1:
		return nil, fmt.Errorf("--embed-batch %d and --embed-concurrency %d must be at least 1", e.batch, e.concurrency)
	}
	api := e.api
	if api == "" {
		api = "ollama"
		if strings.HasSuffix(strings.TrimRight(e.url, "/"), "/v1") {
			api = "openai"
		}
	}
	var url string
	switch api {
	case "ollama":
		url = cmp.Or(e.url, os.Getenv("OLLAMA_HOST"), "http://localhost:11434")
	case "openai":
		url = cmp.Or(e.url, os.Getenv("OPENAI_BASE_URL"))
		if url == "" {
			return nil, errors.New("--embed-api openai needs --embed-url (or OPENAI_BASE_URL), e.g. http://localhost:8080/v1")
		}
	default:
		return nil, fmt.Errorf("unknown --embed-api %q (want ollama or openai)", e.api)
	}
	newEmbedder := apis[api]
	if newEmbedder == nil {
		return nil, fmt.Errorf("--embed-api %s: this program links no %s embedding client (toolgate's commands link both; transfer chat links its backend's)", api, api)
	}
	client := url
	if api == "ollama" {
		client = e.url // "": the client reads OLLAMA_HOST itself
	}
	emb, err := newEmbedder(e.model, client)
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	o := &discovery.ModelOptions{Embedder: emb, Weight: e.weight, Timeout: e.timeout, CatalogTimeout: e.catalogTimeout, Batch: e.batch, Concurrency: e.concurrency,
		QueryPrefix: e.queryPrefix, CardPrefix: e.cardPrefix, Logger: logger}
	if e.cache == "off" {
		return o, nil
	}
	dir := e.cache
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("--embed-cache: no user cache directory (%v): name one, or off", err)
		}
		dir = filepath.Join(base, "toolgate", "embeddings")
	}
	warn := func(s string) { logger.Warn(s) }
	if o.Cache, err = embedcache.Open(dir, api+" "+url+" "+e.model, warn); err != nil {
		return nil, fmt.Errorf("--embed-cache: %w", err)
	}
	return o, nil
}
