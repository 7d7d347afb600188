package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/embedflags"
	"github.com/toolgate/toolgate/internal/embedflags/ollamaembed"
	"github.com/toolgate/toolgate/internal/embedflags/openaiembed"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// This file is eval's side of the --embed-* flags (internal/embedflags):
// the guard that scores the built-in ranking beside the fused one.

// embedAPIs are the embedding clients toolgate links: both.
var embedAPIs = map[string]embedflags.API{"ollama": ollamaembed.New, "openai": openaiembed.New}

// evalModel is eval with --embed-model: it scores the built-in ranking
// alone (opts without Model) and then fused with the model at each weight
// (model's, or every one of weights), prints one guard line per weight
// on stderr, with a warning when the model lowers recall@5, and returns
// the report at model's weight.
func evalModel(ctx context.Context, stderr io.Writer, opts discovery.Options, model *discovery.ModelOptions, weights []float64,
	snap *tools.Snapshot, qs []discovery.Query, eopts *discovery.EvalOptions) (*discovery.Report, error) {
	opts.Model = nil
	builtin, err := evaluateWith(ctx, opts, snap, qs, eopts)
	if err != nil {
		return nil, err
	}
	if len(weights) == 0 {
		weights = []float64{model.Weight}
	}
	// Each weight asks for the same requests' vectors: embedded once.
	model.Embedder = &memoEmbedder{Embedder: model.Embedder, vecs: map[string][]float32{}}
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
		rep, err := discovery.Evaluate(ctx, d, snap, qs, eopts)
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
func evaluateWith(ctx context.Context, opts discovery.Options, snap *tools.Snapshot, qs []discovery.Query, eopts *discovery.EvalOptions) (*discovery.Report, error) {
	d, err := discovery.New(&opts)
	if err != nil {
		return nil, err
	}
	return discovery.Evaluate(ctx, d, snap, qs, eopts)
}

// modelOutcomes sums toolgate_discovery_model_queries_total in reg by
// outcome, as "queries: fused 40, timeout 2".
func modelOutcomes(reg *prometheus.Registry) string {
	parts, _ := byOutcome(reg, "toolgate_discovery_model_queries_total")
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

// memoEmbedder remembers the vector of every single text it embedded
// (eval's requests, asked again at each weight); batches of cards pass
// through (the cache keeps those).
type memoEmbedder struct {
	discovery.Embedder
	mu   sync.Mutex
	vecs map[string][]float32
}

func (m *memoEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) != 1 {
		return m.Embedder.Embed(ctx, texts)
	}
	m.mu.Lock()
	v, ok := m.vecs[texts[0]]
	m.mu.Unlock()
	if ok {
		return [][]float32{slices.Clone(v)}, nil
	}
	vs, err := m.Embedder.Embed(ctx, texts)
	if err == nil && len(vs) == 1 {
		m.mu.Lock()
		m.vecs[texts[0]] = slices.Clone(vs[0])
		m.mu.Unlock()
	}
	return vs, err
}
