package discovery_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/metricstest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/embedcache"
)

// conceptModel is an embedding model at its Go edge: each dimension is a
// concept, and a text's vector counts the words of each concept it holds
// (so it knows that "cash" and "funds" are one thing, as a real model
// would, and the lexical side does not). It records what it embeds.
type conceptModel struct {
	concepts [][]string
	mu       sync.Mutex
	calls    [][]string
	inFlight atomic.Int32
	maxIn    atomic.Int32
	// block makes a one-text (request) call wait for its context.
	block bool
	// failCards fails every call of cards.
	failCards bool
	// cardGate, when set, holds every call of cards until it is closed.
	cardGate chan struct{}
	dim      int // 0: len(concepts)+1
}

var concepts = [][]string{
	{"cash", "funds", "money", "payment", "pay"},
	{"wire", "send", "move", "transfer"},
	{"weather", "forecast", "rain"},
	{"ticket", "issue", "bug"},
	{"secret", "password", "credential"},
	{"frobnicate", "zizzle"}, // words no lexicon knows as one
}

func (m *conceptModel) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for {
		old := m.maxIn.Load()
		if n <= old || m.maxIn.CompareAndSwap(old, n) {
			break
		}
	}
	m.mu.Lock()
	m.calls = append(m.calls, slices.Clone(texts))
	m.mu.Unlock()
	cards := !strings.HasPrefix(texts[0], "Q:")
	if m.block && !cards {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if m.cardGate != nil && cards {
		<-m.cardGate
	}
	if m.failCards && cards {
		return nil, errors.New("model not found")
	}
	dim := m.dim
	if dim == 0 {
		dim = len(m.concepts) + 1
	}
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, dim)
		v[dim-1] = 0.1 // never a zero vector
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
			for c, words := range m.concepts {
				if c < dim-1 && slices.Contains(words, w) {
					v[c]++
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

// cardCalls returns the texts of the card (not request) calls so far.
func (m *conceptModel) cardCalls() (calls int, texts []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.calls {
		if !strings.HasPrefix(c[0], "Q:") {
			calls++
			texts = append(texts, c...)
		}
	}
	return calls, texts
}

func modelCatalog() []tools.Tool {
	return []tools.Tool{
		tool("bank/wire_funds", "Wire funds between two accounts of the bank"),
		tool("bank/get_statement", "Get the monthly statement of an account"),
		tool("weather/forecast", "Weather forecast for a city"),
		tool("tracker/open_ticket", "Open a ticket in the tracker"),
		tool("vault/read_secret", "Read a secret from the vault", "admin"),
		tool("files/read_file", "Read a file from the disk"),
		tool("lab/frobnicate_widget", "Frobnicate the widget"),
	}
}

func modelOpts(m *conceptModel, o *discovery.ModelOptions) *discovery.Options {
	if o == nil {
		o = &discovery.ModelOptions{}
	}
	o.Embedder = m
	o.QueryPrefix = "Q: "
	return &discovery.Options{Model: o}
}

func TestModelTierFuses(t *testing.T) {
	snap := catalogtest.Registry(t, modelCatalog()...).Snapshot()
	view := snap.Authorize(everyone)
	query := "zizzle the gadget"
	builtin, err := newDiscoverer(t, nil).Shortlist(context.Background(), view, discovery.Request{Query: query, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	m := &conceptModel{concepts: concepts}
	d := newDiscoverer(t, modelOpts(m, &discovery.ModelOptions{Weight: 0.3}))
	sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: query, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if sl.Model != discovery.ModelFused || len(sl.Candidates) == 0 || sl.Candidates[0].Tool.ID != "lab/frobnicate_widget" || sl.Candidates[0].Model != 1 {
		t.Fatalf("Shortlist(%q) = %v (model %q), want lab/frobnicate_widget first with the model's score 1, fused", query, ids(sl), sl.Model)
	}
	if slices.Contains(ids(builtin), "lab/frobnicate_widget") {
		t.Errorf("the built-in ranking found it too (%v): the test shows nothing", ids(builtin))
	}
	if builtin.Model != "" {
		t.Errorf("without a model tier Shortlist.Model = %q, want empty", builtin.Model)
	}
	// The whole catalog was embedded once, in one batch.
	if calls, texts := m.cardCalls(); calls != 1 || len(texts) != snap.Len() {
		t.Errorf("card embedding: %d calls of %d texts, want 1 call of %d", calls, len(texts), snap.Len())
	}
	if _, err := d.Shortlist(context.Background(), view, discovery.Request{Query: "weather"}); err != nil {
		t.Fatal(err)
	}
	if calls, _ := m.cardCalls(); calls != 1 {
		t.Errorf("a second query embedded the cards again: %d calls", calls)
	}
}

// TestModelTierNeverReturnsUnauthorized: the model prefers the tool the
// principal may not use (its card is the request's concept alone), and it
// never appears; over random catalogs and principals, every candidate is
// authorized.
func TestModelTierNeverReturnsUnauthorized(t *testing.T) {
	snap := catalogtest.Registry(t, modelCatalog()...).Snapshot()
	view := snap.Authorize(everyone) // no admin scope: not vault/read_secret
	d := newDiscoverer(t, modelOpts(&conceptModel{concepts: concepts}, &discovery.ModelOptions{Weight: 0.01}))
	sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: "my password credential secret", K: 6})
	if err != nil {
		t.Fatal(err)
	}
	if sl.Model != discovery.ModelFused || slices.Contains(ids(sl), "vault/read_secret") {
		t.Fatalf("Shortlist = %v (model %q): want fused, without vault/read_secret", ids(sl), sl.Model)
	}
	r := rand.New(rand.NewPCG(3, 4))
	words := slices.Concat(concepts...)
	for round := range 20 {
		var ts []tools.Tool
		for i := range 5 + r.IntN(60) {
			tl := tool(fmt.Sprintf("ns/t%d", i), words[r.IntN(len(words))]+" "+words[r.IntN(len(words))], []string{"a", "b", "c"}[r.IntN(3)])
			ts = append(ts, tl)
		}
		snap := catalogtest.Registry(t, ts...).Snapshot()
		d := newDiscoverer(t, modelOpts(&conceptModel{concepts: concepts}, &discovery.ModelOptions{Weight: []float64{0.01, 0.5, 1}[round%3]}))
		p := tools.Principal{ID: "p", Tenant: "t1", Scopes: []string{"a", "b", "c"}[:r.IntN(3)]}
		view := snap.Authorize(p)
		sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: words[r.IntN(len(words))] + " " + words[r.IntN(len(words))], K: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range sl.Candidates {
			if !viewHas(view, c.Tool.ID) {
				t.Fatalf("round %d: %s returned to a principal with scopes %v", round, c.Tool.ID, p.Scopes)
			}
		}
	}
}

// TestModelTierCache: a restart reuses the vectors on disk (no card is
// embedded again), and a changed card, only it, is embedded again.
func TestModelTierCache(t *testing.T) {
	dir := t.TempDir()
	const model = "test http://model concept-v1"
	run := func(ts []tools.Tool) (cardTexts []string) {
		t.Helper()
		c, err := embedcache.Open(dir, model, func(s string) { t.Errorf("cache warning: %s", s) })
		if err != nil {
			t.Fatal(err)
		}
		m := &conceptModel{concepts: concepts}
		d := newDiscoverer(t, modelOpts(m, &discovery.ModelOptions{Cache: c}))
		snap := catalogtest.Registry(t, ts...).Snapshot()
		sl, err := d.Shortlist(context.Background(), snap.Authorize(everyone), discovery.Request{Query: "send cash"})
		if err != nil || sl.Model != discovery.ModelFused {
			t.Fatalf("Shortlist = %v, model %q, want fused", err, sl.Model)
		}
		_, texts := m.cardCalls()
		return texts
	}
	cat := modelCatalog()
	if got := run(cat); len(got) != len(cat) {
		t.Fatalf("first run embedded %d cards, want all %d", len(got), len(cat))
	}
	if got := run(cat); len(got) != 0 {
		t.Errorf("after a restart %d cards were embedded again (%q), want none: the cache is on disk", len(got), got)
	}
	cat[2].Description = "Rain and weather forecast for any city, by the hour"
	cat[2].Card.Summary = cat[2].Description
	if got := run(cat); len(got) != 1 || !strings.Contains(got[0], "by the hour") {
		t.Errorf("after a card changed, embedded %q, want that card alone", got)
	}
}

// TestModelTierFallsBack: a model that times out, fails, or returns
// malformed vectors leaves the built-in ranking to answer, says so in
// Shortlist.Model and counts it.
func TestModelTierFallsBack(t *testing.T) {
	snap := catalogtest.Registry(t, modelCatalog()...).Snapshot()
	view := snap.Authorize(everyone)
	req := discovery.Request{Query: "read a file", K: 3}
	want, err := newDiscoverer(t, nil).Shortlist(context.Background(), view, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		model *conceptModel
		want  discovery.ModelOutcome
	}{
		{"request times out", &conceptModel{concepts: concepts, block: true}, discovery.ModelTimeout},
		{"cards fail", &conceptModel{concepts: concepts, failCards: true}, discovery.ModelUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			opts := modelOpts(tc.model, &discovery.ModelOptions{Timeout: 20 * time.Millisecond})
			opts.Registerer = reg
			d := newDiscoverer(t, opts)
			for range 2 {
				sl, err := d.Shortlist(context.Background(), view, req)
				if err != nil {
					t.Fatal(err)
				}
				if sl.Model != tc.want || !slices.Equal(ids(sl), ids(want)) {
					t.Errorf("Shortlist = %v, model %q, want %v, %q", ids(sl), sl.Model, ids(want), tc.want)
				}
			}
			if got := metricstest.Count(t, reg, "toolgate_discovery_model_queries_total", "outcome", string(tc.want)); got != 2 {
				t.Errorf("toolgate_discovery_model_queries_total{outcome=%q} = %v, want 2", tc.want, got)
			}
		})
	}
	t.Run("failed catalog is not retried at once", func(t *testing.T) {
		m := &conceptModel{concepts: concepts, failCards: true}
		d := newDiscoverer(t, modelOpts(m, nil))
		for range 3 {
			if _, err := d.Shortlist(context.Background(), view, req); err != nil {
				t.Fatal(err)
			}
		}
		if calls, _ := m.cardCalls(); calls != 1 {
			t.Errorf("a failing model was asked for the cards %d times in a row, want 1", calls)
		}
	})
}

func TestModelTierBatches(t *testing.T) {
	var ts []tools.Tool
	for i := range 23 {
		ts = append(ts, tool(fmt.Sprintf("ns/tool_%d", i), fmt.Sprintf("Tool number %d moves money", i)))
	}
	snap := catalogtest.Registry(t, ts...).Snapshot()
	m := &conceptModel{concepts: concepts}
	d := newDiscoverer(t, modelOpts(m, &discovery.ModelOptions{Batch: 5, Concurrency: 2}))
	if _, err := d.Shortlist(context.Background(), snap.Authorize(everyone), discovery.Request{Query: "money"}); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var sizes []int
	for _, c := range m.calls {
		if !strings.HasPrefix(c[0], "Q:") {
			sizes = append(sizes, len(c))
		}
	}
	slices.Sort(sizes)
	if !slices.Equal(sizes, []int{3, 5, 5, 5, 5}) || m.maxIn.Load() > 2 {
		t.Errorf("batches of %v, at most %d at once; want 5 of at most 5 texts, at most 2 at once", sizes, m.maxIn.Load())
	}
}

func TestModelOptionsValidated(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    discovery.ModelOptions
		want string
	}{
		{"no embedder", discovery.ModelOptions{}, "Embedder"},
		{"weight", discovery.ModelOptions{Embedder: &conceptModel{}, Weight: 2}, "Weight"},
		{"timeout", discovery.ModelOptions{Embedder: &conceptModel{}, Timeout: -1}, "Timeout"},
		{"batch", discovery.ModelOptions{Embedder: &conceptModel{}, Batch: -1}, "Batch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := discovery.New(&discovery.Options{Model: &tc.o})
			if !errors.Is(err, discovery.ErrOptions) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want ErrOptions naming %s", err, tc.want)
			}
		})
	}
}

func viewHas(v *tools.View, id string) bool {
	_, ok := v.Get(id)
	return ok
}

// failAfter fails every card batch after the first n.
type failAfter struct {
	conceptModel
	n     int32
	calls atomic.Int32
}

func (f *failAfter) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.calls.Add(1) > f.n {
		return nil, errors.New("server went away")
	}
	return f.conceptModel.Embed(ctx, texts)
}

// TestModelTierKeepsPartialWork: the batches embedded before a failure
// are saved, so that the next try embeds only the rest.
func TestModelTierKeepsPartialWork(t *testing.T) {
	var ts []tools.Tool
	for i := range 10 {
		ts = append(ts, tool(fmt.Sprintf("ns/tool_%d", i), fmt.Sprintf("Tool number %d moves money", i)))
	}
	snap := catalogtest.Registry(t, ts...).Snapshot()
	dir := t.TempDir()
	open := func() *embedcache.Cache {
		c, err := embedcache.Open(dir, "m", nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	m := &failAfter{conceptModel: conceptModel{concepts: concepts}, n: 1}
	opts := &discovery.Options{Model: &discovery.ModelOptions{Embedder: m, Cache: open(), Batch: 4, Concurrency: 1}}
	d := newDiscoverer(t, opts)
	if err := d.EmbedCatalog(context.Background(), snap); err == nil {
		t.Fatal("EmbedCatalog succeeded with a model that fails after one batch")
	}
	if c := open(); c.Len() != 4 {
		t.Fatalf("after the failure the cache holds %d vectors, want the first batch's 4", c.Len())
	}
	fresh := &conceptModel{concepts: concepts}
	d = newDiscoverer(t, modelOpts(fresh, &discovery.ModelOptions{Cache: open(), Batch: 4}))
	if err := d.EmbedCatalog(context.Background(), snap); err != nil {
		t.Fatal(err)
	}
	if _, texts := fresh.cardCalls(); len(texts) != 6 {
		t.Errorf("the retry embedded %d cards, want the 6 not saved", len(texts))
	}
}

// TestModelTierSlowCatalog: while the catalog is being embedded, queries
// are answered by the built-in ranking after waiting at most Timeout;
// once it is done, they are fused.
func TestModelTierSlowCatalog(t *testing.T) {
	snap := catalogtest.Registry(t, modelCatalog()...).Snapshot()
	view := snap.Authorize(everyone)
	m := &conceptModel{concepts: concepts, cardGate: make(chan struct{})}
	d := newDiscoverer(t, modelOpts(m, &discovery.ModelOptions{Timeout: 10 * time.Millisecond}))
	req := discovery.Request{Query: "zizzle the gadget"}
	sl, err := d.Shortlist(context.Background(), view, req)
	if err != nil || sl.Model != discovery.ModelUnavailable {
		t.Fatalf("Shortlist during the embedding = %v, model %q, want unavailable", err, sl.Model)
	}
	close(m.cardGate)
	if err := d.EmbedCatalog(context.Background(), snap); err != nil {
		t.Fatal(err)
	}
	if sl, err = d.Shortlist(context.Background(), view, req); err != nil || sl.Model != discovery.ModelFused {
		t.Fatalf("Shortlist after the embedding = %v, model %q, want fused", err, sl.Model)
	}
	if calls, _ := m.cardCalls(); calls != 1 {
		t.Errorf("the cards were embedded in %d calls, want 1: the waiting query and EmbedCatalog share one", calls)
	}
}

// TestModelTierModelChangedBehindName: a cache of another model's vectors
// under the same identity (another dimension) fails one query, and the
// cards are then embedded again instead of read from it.
func TestModelTierModelChangedBehindName(t *testing.T) {
	snap := catalogtest.Registry(t, modelCatalog()...).Snapshot()
	view := snap.Authorize(everyone)
	dir := t.TempDir()
	var warnings []string
	open := func() *embedcache.Cache {
		c, err := embedcache.Open(dir, "same name", func(s string) { warnings = append(warnings, s) })
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	d := newDiscoverer(t, modelOpts(&conceptModel{concepts: concepts}, &discovery.ModelOptions{Cache: open()}))
	if err := d.EmbedCatalog(context.Background(), snap); err != nil {
		t.Fatal(err)
	}
	other := &conceptModel{concepts: concepts, dim: 4}
	d = newDiscoverer(t, modelOpts(other, &discovery.ModelOptions{Cache: open()}))
	var got []discovery.ModelOutcome
	for range 3 {
		sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: "weather"})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, sl.Model)
	}
	if !slices.Equal(got, []discovery.ModelOutcome{discovery.ModelError, discovery.ModelFused, discovery.ModelFused}) {
		t.Errorf("outcomes %q, want error once, then fused", got)
	}
	if _, texts := other.cardCalls(); len(texts) != snap.Len() || len(warnings) != 1 {
		t.Errorf("the new model embedded %d cards with warnings %q, want all %d and one warning", len(texts), warnings, snap.Len())
	}
}
