package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/llm/ollama"
	"github.com/toolgate/toolgate/llm/openai"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/embedcache"
)

// This file is the --embed-* flags of discover, eval, serve and mcp
// serve: discovery's model tier through the user's own embedding server.

// embedFlags are the --embed-* flags of one command.
type embedFlags struct {
	url, model, api, cache  string
	queryPrefix, cardPrefix string
	timeout                 time.Duration
	weight                  float64
	batch, concurrency      int
}

// register adds the --embed-* flags to fs.
func (e *embedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.model, "embed-model", "", "rank with this embedding `MODEL` too (e.g. nomic-embed-text), fused with the built-in ranking; the cards are embedded once and cached")
	fs.StringVar(&e.url, "embed-url", "", "the embedding server's `URL`: Ollama's root (default OLLAMA_HOST, else http://localhost:11434) or an OpenAI-compatible API root ending in /v1 (llama-server --embeddings)")
	fs.StringVar(&e.api, "embed-api", "", "the embedding server's API: ollama (/api/embed) or openai (/v1/embeddings); default openai when --embed-url ends in /v1, else ollama")
	fs.StringVar(&e.cache, "embed-cache", "", "`DIR` of the card vectors cache (default: toolgate/embeddings in the user's cache directory); off keeps them in memory")
	fs.DurationVar(&e.timeout, "embed-timeout", discovery.DefaultModelTimeout, "the bound on embedding one request; past it the built-in ranking answers alone")
	fs.Float64Var(&e.weight, "embed-weight", discovery.DefaultModelWeight, "the built-in ranking's `weight` in (0,1] in the fusion with the model's (calibrate with eval --embed-weights)")
	fs.IntVar(&e.batch, "embed-batch", discovery.DefaultModelBatch, "cards per embedding request")
	fs.IntVar(&e.concurrency, "embed-concurrency", discovery.DefaultModelConcurrency, "embedding requests in flight at once")
	fs.StringVar(&e.queryPrefix, "embed-query-prefix", "", "`TEXT` put before each request, for models trained with one (nomic-embed-text: \"search_query: \")")
	fs.StringVar(&e.cardPrefix, "embed-card-prefix", "", "`TEXT` put before each card, for models trained with one (nomic-embed-text: \"search_document: \")")
}

// options returns the model tier the flags ask for, nil without
// --embed-model. Warnings (a cache file not trusted, a query answered
// without the model) go to stderr.
func (e *embedFlags) options(stderr io.Writer) (*discovery.ModelOptions, error) {
	if e.model == "" {
		if e.url != "" || e.api != "" {
			return nil, errors.New("--embed-url and --embed-api need --embed-model")
		}
		return nil, nil
	}
	switch {
	case e.timeout <= 0:
		return nil, fmt.Errorf("--embed-timeout %v must be positive", e.timeout)
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
	var (
		emb discovery.Embedder
		url string
		err error
	)
	switch api {
	case "ollama":
		url = cmp.Or(e.url, os.Getenv("OLLAMA_HOST"), "http://localhost:11434")
		emb, err = ollama.New(e.model, &ollama.Options{BaseURL: e.url, EmbedModel: e.model})
	case "openai":
		url = cmp.Or(e.url, os.Getenv("OPENAI_BASE_URL"))
		if url == "" {
			return nil, errors.New("--embed-api openai needs --embed-url (or OPENAI_BASE_URL), e.g. http://localhost:8080/v1")
		}
		// A local server needs no key; a hosted API reads OPENAI_API_KEY.
		emb, err = openai.New(e.model, &openai.Options{BaseURL: url, APIKey: cmp.Or(os.Getenv("OPENAI_API_KEY"), "none"), EmbeddingModel: e.model})
	default:
		return nil, fmt.Errorf("unknown --embed-api %q (want ollama or openai)", e.api)
	}
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	o := &discovery.ModelOptions{Embedder: emb, Weight: e.weight, Timeout: e.timeout, Batch: e.batch, Concurrency: e.concurrency,
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

// evalModel is eval with --embed-model: it scores the built-in ranking
// alone (opts without Model) and then fused with the model at each weight
// (model's, or every one of weights), prints one guard line per weight
// on stderr, with a warning when the model lowers recall@5, and returns
// the report at model's weight.
func evalModel(ctx context.Context, stderr io.Writer, opts discovery.Options, model *discovery.ModelOptions, weights []float64,
	snap *tools.Snapshot, qs []discovery.Query, k int) (*discovery.Report, error) {
	opts.Model = nil
	builtin, err := evaluateWith(ctx, opts, snap, qs, k)
	if err != nil {
		return nil, err
	}
	if len(weights) == 0 {
		weights = []float64{model.Weight}
	}
	var chosen *discovery.Report
	var best *discovery.Report
	bestW := 0.0
	for _, w := range weights {
		m := *model
		m.Weight = w
		reg := prometheus.NewRegistry()
		o := opts
		o.Model, o.Registerer = &m, reg
		d, err := discovery.New(&o)
		if err != nil {
			return nil, err
		}
		if err := d.EmbedCatalog(ctx, snap); err != nil {
			return nil, fmt.Errorf("embedding the catalog: %w", err)
		}
		rep, err := discovery.Evaluate(ctx, d, snap, qs, &discovery.EvalOptions{K: k})
		if err != nil {
			return nil, err
		}
		delta := rep.RecallAt5 - builtin.RecallAt5
		// Recall@5 decides; MRR breaks a tie.
		cmpR := cmp.Or(cmp.Compare(rep.RecallAt5, builtin.RecallAt5), cmp.Compare(rep.MRR, builtin.MRR))
		verdict := map[int]string{-1: "HURTS", 0: "changes nothing", 1: "helps"}[cmpR]
		fmt.Fprintf(stderr, "toolgate eval: embedding model guard: weight %.2f: recall@5 %.3f fused vs %.3f built-in alone (%+.3f), MRR %.3f vs %.3f: the model %s; %s\n",
			w, rep.RecallAt5, builtin.RecallAt5, delta, rep.MRR, builtin.MRR, verdict, modelOutcomes(reg))
		if cmpR < 0 {
			fmt.Fprintf(stderr, "toolgate eval: warning: at weight %.2f the embedding model lowers the ranking on this set; raise --embed-weight or leave --embed-model out\n", w)
		}
		if best == nil || cmp.Or(cmp.Compare(rep.RecallAt5, best.RecallAt5), cmp.Compare(rep.MRR, best.MRR)) > 0 {
			bestW, best = w, rep
		}
		if w == model.Weight || chosen == nil {
			chosen = rep
		}
	}
	if len(weights) > 1 {
		fmt.Fprintf(stderr, "toolgate eval: embedding model guard: best weight on this set %.2f (recall@5 %.3f; built-in alone %.3f)\n", bestW, best.RecallAt5, builtin.RecallAt5)
	}
	return chosen, nil
}

// evaluateWith scores a Discoverer made with opts.
func evaluateWith(ctx context.Context, opts discovery.Options, snap *tools.Snapshot, qs []discovery.Query, k int) (*discovery.Report, error) {
	d, err := discovery.New(&opts)
	if err != nil {
		return nil, err
	}
	return discovery.Evaluate(ctx, d, snap, qs, &discovery.EvalOptions{K: k})
}

// modelOutcomes sums toolgate_discovery_model_queries_total in reg by
// outcome, as "queries: fused 40, timeout 2".
func modelOutcomes(reg *prometheus.Registry) string {
	mfs, err := reg.Gather()
	if err != nil {
		return ""
	}
	var parts []string
	for _, mf := range mfs {
		if mf.GetName() != "toolgate_discovery_model_queries_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			parts = append(parts, fmt.Sprintf("%s %.0f", m.GetLabel()[0].GetValue(), m.GetCounter().GetValue()))
		}
	}
	sort.Strings(parts)
	return "queries: " + strings.Join(parts, ", ")
}

// weightList parses --embed-weights: comma-separated weights in (0,1].
func weightList(s string) ([]float64, error) {
	var out []float64
	for _, f := range splitList(s) {
		w, err := strconv.ParseFloat(f, 64)
		if err != nil || !(w > 0 && w <= 1) {
			return nil, fmt.Errorf("--embed-weights: %q is not a weight in (0,1]", f)
		}
		out = append(out, w)
	}
	return out, nil
}
