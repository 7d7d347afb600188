package discovery

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/bigcatalog"
	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/ngram"
)

// The build's shortcuts must give what the plain computations they
// replace give, byte for byte: an index file written before them is
// read after them, and rankings must not move.

// plainSchemaText is schemaText as [json.Marshal] writes it.
func plainSchemaText(t *tools.Tool) string {
	params := t.InputSchema
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	b, err := json.Marshal(struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}{t.Name(), t.Description, compactJSON(params)})
	if err != nil {
		return t.Name() + " " + t.Description + " " + string(params)
	}
	return string(b)
}

func TestSchemaTextMatchesMarshal(t *testing.T) {
	tests := []struct{ name, desc, schema string }{
		{"plain", "Create an issue.", `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}}}`},
		{"no_description", "", `{"type":"object"}`},
		{"no_schema", "Lists <things> & \"stuff\".", ``},
		{"html_in_schema", "x", `{"type":"object","properties":{"q":{"description":"a <b> & c\u2028"}}}`},
		{"unicode", "Envía el correo — zamknij zgłoszenie \u2029", `{"type":"object","properties":{"ñ":{"enum":["é",1.50,1e3]}}}`},
		{"invalid_schema", "x", `{"type":`},
		{"spaced_schema", "x", "{ \"type\" : \"object\" ,\n \"required\" : [ ] }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := &tools.Tool{ID: "ns/" + tt.name, Description: tt.desc, InputSchema: json.RawMessage(tt.schema)}
			var c schemaCache
			got := schemaTextWith(tool, c.get(tool.InputSchema).json)
			if want := plainSchemaText(tool); got != want {
				t.Errorf("schemaTextWith = %s, want %s", got, want)
			}
			if again := schemaTextWith(tool, c.get(tool.InputSchema).json); again != got {
				t.Errorf("from the cache: %s, want %s", again, got)
			}
		})
	}
}

// plainQuantise is quantiseVec through normalize.
func plainQuantise(v []float32) ([]int8, float32) {
	v = normalize(v)
	row := make([]int8, len(v))
	var mx float32
	for _, f := range v {
		mx = max(mx, f, -f)
	}
	if mx == 0 {
		return row, 0
	}
	scale := mx / 127
	for dim, f := range v {
		row[dim] = int8(math.Round(float64(f / scale)))
	}
	return row, scale
}

func TestQuantiseVecMatchesNormalize(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vecs := [][]float32{{}, {0, 0, 0}, {1}, {-3, 4}, {1e-30, -1e-30, 0}, {math.MaxFloat32 / 4, 1}}
	for range 200 {
		v := make([]float32, 1+r.IntN(600))
		for i := range v {
			if r.IntN(4) > 0 {
				v[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(8)-4)))
			}
		}
		vecs = append(vecs, v)
	}
	//testlint:rows the rows are random vectors, named by their index
	for i, v := range vecs {
		row, scale := quantiseVec(slices.Clone(v))
		wantRow, wantScale := plainQuantise(slices.Clone(v))
		if !slices.Equal(row, wantRow) || math.Float32bits(scale) != math.Float32bits(wantScale) {
			t.Fatalf("vector %d: quantiseVec = %v, %v; through normalize %v, %v", i, row, scale, wantRow, wantScale)
		}
	}
}

// plainKey is keyOf written to the hash piece by piece.
func plainKey(t *tools.Tool) toolKey {
	h := sha256.New()
	put := func(s string) {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(s))))
		h.Write([]byte(s))
	}
	putAll := func(ss []string) {
		put(fmt.Sprint(len(ss)))
		for _, s := range ss {
			put(s)
		}
	}
	c := &t.Card
	put(t.ID)
	put(t.Description)
	put(string(t.InputSchema))
	put(c.Name)
	put(c.Summary)
	put(c.NotFor)
	put(c.Group)
	putAll(c.Aliases)
	putAll(c.Tags)
	putAll(c.Examples)
	var k toolKey
	h.Sum(k[:0])
	return k
}

func TestToolKeysMatchPlainHash(t *testing.T) {
	ts := realTools(t)
	extra := &tools.Tool{ID: "ns/x", Card: tools.Card{Name: "x", Aliases: []string{"a", ""}, Tags: []string{"t"}, Examples: []string{"e"}, NotFor: "n", Group: "g"}}
	snap := tools.NewRegistry()
	all := []tools.Tool{*extra}
	for _, t := range ts {
		all = append(all, *t)
	}
	if err := snap.Add(all...); err != nil {
		t.Fatal(err)
	}
	s := snap.Snapshot()
	keys := toolKeys(s)
	for i, tool := range s.Tools() {
		if want := plainKey(tool); keys[i] != want || keyOf(tool) != want {
			t.Fatalf("key of %s = %x (keyOf %x), want %x", tool.ID, keys[i], keyOf(tool), want)
		}
	}
}

// denseOnly hides every method of an Embedder but Embed.
type denseOnly struct{ Embedder }

func TestSparseEmbeddingMatchesDense(t *testing.T) {
	root := testenv.RepoRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "examples/transfer/catalog/*.json"))
	held, _ := filepath.Glob(filepath.Join(root, "tools/discovery/testdata/heldout/catalogs/*.json"))
	snap := catalogtest.Snapshot(t, append(files, held...)...)
	if snap.Len() < 200 {
		t.Fatalf("%d tools, want the examples' and the held-out catalogs'", snap.Len())
	}
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.embedder.(embedderSparse); !ok {
		t.Fatalf("the default embedder %T does not embed sparse", d.embedder)
	}
	sparse, err := d.build(context.Background(), snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.embedder = denseOnly{d.embedder}
	dense, err := d.build(context.Background(), snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameIndex(t, sparse, dense)
}

// badSparse is an embedder whose sparse vectors name a dimension past
// its Dim.
type badSparse struct{ dims []int32 }

func (badSparse) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return make([][]float32, len(texts)), nil
}
func (badSparse) Dim() int { return 64 }
func (b badSparse) EmbedNonZero(dims []int32, vals []float32, _ string) ([]int32, []float32) {
	for _, d := range b.dims {
		dims, vals = append(dims, d), append(vals, 1)
	}
	return dims, vals
}

func TestSparseEmbedderOutOfRange(t *testing.T) {
	snap := catalogtest.Snapshot(t, filepath.Join(testenv.RepoRoot(t), "examples/transfer/catalog/memory.json"))
	for _, tt := range []struct {
		name string
		dims []int32
	}{{"past_dim", []int32{3, 64}}, {"negative", []int32{-1}}} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := New(&Options{Embedder: badSparse{tt.dims}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.build(context.Background(), snap, nil); !errors.Is(err, ErrEmbedder) {
				t.Fatalf("build = %v, want an error wrapping ErrEmbedder", err)
			}
		})
	}
}

// TestBuildCanceled holds both ways of embedding cards (sparse in the
// analysing workers, dense in batches) to a context canceled before the
// build: it fails with the context's error.
func TestBuildCanceled(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "examples/transfer/catalog/*.json"))
	snap := catalogtest.Snapshot(t, files...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		dense bool
	}{{"sparse", false}, {"dense", true}} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.dense {
				d.embedder = denseOnly{d.embedder}
			}
			x, err := d.build(ctx, snap, nil)
			if x != nil || !errors.Is(err, context.Canceled) {
				t.Fatalf("build with a canceled context: index %t, error %v; want no index and an error wrapping context.Canceled", x != nil, err)
			}
		})
	}
}

// TestSchemaCacheBounded fills a schemaCache past schemaCacheMax with
// schemas that all differ: it starts over instead of growing, and what it
// answers after starting over is what it answered before.
func TestSchemaCacheBounded(t *testing.T) {
	var c schemaCache
	schema := func(i int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"string","description":"the %d-th"}}}`, i, i))
	}
	first := c.get(schema(0))
	for i := 1; i <= schemaCacheMax; i++ {
		c.get(schema(i))
		if len(c.m) > schemaCacheMax {
			t.Fatalf("after %d schemas the cache holds %d, want at most %d", i+1, len(c.m), schemaCacheMax)
		}
	}
	if _, ok := c.m[string(schema(0))]; ok {
		t.Fatalf("the first schema is still cached after %d others", schemaCacheMax)
	}
	again := c.get(schema(0))
	if again == first {
		t.Fatal("the first schema's info was kept, want it computed again")
	}
	if string(again.json) != string(first.json) || again.tailTokens != first.tailTokens || !slices.Equal(again.params, first.params) {
		t.Errorf("computed again: %+v, first: %+v", again, first)
	}
}

// TestBuildDropsFeatureCache: a build that embeds dropCacheCards cards or
// more drops the default embedder's feature cache before each chunk of
// cards after the first, so that it holds one chunk's words at most and,
// after the build, the last chunk's (the common words a request shares):
// fewer than twice what one chunk alone leaves, and not none.
func TestBuildDropsFeatureCache(t *testing.T) {
	cached := func(t *testing.T, n int) int {
		ts, err := bigcatalog.Tools(handleTools(t), n)
		if err != nil {
			t.Fatal(err)
		}
		d, err := New(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Index(context.Background(), catalogtest.Registry(t, ts...).Snapshot()); err != nil {
			t.Fatal(err)
		}
		return d.embedder.(*ngram.Embedder).CachedFeatures()
	}
	chunk := cached(t, buildChunk)
	got := cached(t, dropCacheCards)
	if got == 0 || got >= 2*chunk {
		t.Errorf("after indexing %d tools the feature cache holds %d features, want some, fewer than twice one chunk's %d", dropCacheCards, got, chunk)
	}
}

// TestBuildLetsGoOfNameIndex: once the cards are analysed, the build
// holds the snapshot's name index no more (the posting lists, built
// after, are where its live heap peaks).
func TestBuildLetsGoOfNameIndex(t *testing.T) {
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "examples/transfer/catalog/*.json"))
	snap := catalogtest.Snapshot(t, files...)
	jobs := d.startJobs(snap, nil)
	if _, err := d.buildWith(context.Background(), snap, nil, nil, nil, nil, nil, jobs); err != nil {
		t.Fatal(err)
	}
	if jobs.names != nil {
		t.Errorf("after the build its jobs still hold the name index")
	}
}

// textsEmbedder embeds every text as the same vector and records the
// texts it is given.
type textsEmbedder struct {
	mu    sync.Mutex
	texts []string
}

func (e *textsEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.texts = append(e.texts, texts...)
	e.mu.Unlock()
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0, 0, 0}
	}
	return out, nil
}

// TestBuildWarmsUnseen: a build runs warmRequest against its new index
// (warm) with the built-in embedder, and the request is neither logged
// nor shown to a caller's embedder, which may be a model behind a network.
func TestBuildWarmsUnseen(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "examples/transfer/catalog/*.json"))
	snap := catalogtest.Snapshot(t, files...)
	for _, tc := range []struct {
		name string
		emb  *textsEmbedder
	}{{"built-in embedder", nil}, {"caller's embedder", &textsEmbedder{}}} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			opts := &Options{Log: NewJSONLog(&log)}
			if tc.emb != nil {
				opts.Embedder = tc.emb
			}
			d, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Index(context.Background(), snap); err != nil {
				t.Fatal(err)
			}
			if log.Len() != 0 {
				t.Errorf("after Index the log holds %q, want nothing", log.String())
			}
			if tc.emb != nil && slices.Contains(tc.emb.texts, warmRequest) {
				t.Errorf("the caller's embedder was given the warm request %q", warmRequest)
			}
		})
	}
}
