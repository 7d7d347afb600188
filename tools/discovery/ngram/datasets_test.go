package ngram

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

type dsTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type dsQuery struct {
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
}

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	return out
}

// cardText is the text the dense side sees for a tool in this test: its
// name, description and parameter names and descriptions.
func cardText(tl dsTool) string {
	var b strings.Builder
	b.WriteString(tl.Name + " " + tl.Description)
	var schema struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(tl.Parameters, &schema) == nil {
		names := make([]string, 0, len(schema.Properties))
		for n := range schema.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			b.WriteString(" " + n + " " + schema.Properties[n].Description)
		}
	}
	return b.String()
}

// embedCards returns the embeddings of the tools' card texts, in order.
func embedCards(t *testing.T, e *Embedder, tls []dsTool) [][]float32 {
	t.Helper()
	texts := make([]string, len(tls))
	for i, tl := range tls {
		texts[i] = cardText(tl)
	}
	vecs, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	return vecs
}

// denseRecall returns recall@5 and MRR of the embedder alone (no lexical
// side) over every stride-th query of a dataset.
func denseRecall(t *testing.T, e *Embedder, dir string, stride int) (recall5, mrr float64, n int) {
	tls := readJSONL[dsTool](t, filepath.Join(dir, "tools.jsonl"))
	qs := readJSONL[dsQuery](t, filepath.Join(dir, "queries.jsonl"))
	vecs := embedCards(t, e, tls)
	q := make([]float32, e.Dim())
	type scored struct {
		i int
		s float64
	}
	sc := make([]scored, len(tls))
	for qi := 0; qi < len(qs); qi += stride {
		qq := qs[qi]
		if len(qq.Relevant) == 0 {
			continue
		}
		e.EmbedTo(q, qq.Query)
		for i, v := range vecs {
			sc[i] = scored{i, cosine(q, v)}
		}
		sort.Slice(sc, func(a, b int) bool { return sc[a].s > sc[b].s || (sc[a].s == sc[b].s && sc[a].i < sc[b].i) })
		rel := map[string]bool{}
		for _, r := range qq.Relevant {
			rel[r] = true
		}
		hits, first := 0, 0
		for rank, s := range sc {
			if rel[tls[s.i].Name] {
				if rank < 5 {
					hits++
				}
				if first == 0 {
					first = rank + 1
				}
			}
		}
		recall5 += float64(hits) / float64(len(rel))
		if first > 0 {
			mrr += 1 / float64(first)
		}
		n++
	}
	return recall5 / float64(n), mrr / float64(n), n
}

// TestDenseRecallOnDatasets measures the embedder alone on the public
// datasets. The floors sit just under the measured values (docs/analysis.md)
// so that a regression in analysis, lexicon or hashing fails here.
func TestDenseRecallOnDatasets(t *testing.T) {
	e := New(nil)
	type dataset struct {
		name   string
		stride int
		floor  float64
	}
	sets := []dataset{
		{"metatool", 10, 0.52},
		{"bfcl", 4, 0.58},
		{"apibank", 1, 0.69},
	}
	if testenv.Race || testing.Short() {
		// Under the race detector (CI) embedding is ~10× slower: a coarser
		// sample, with floors measured on that sample.
		sets = []dataset{
			{"metatool", 40, 0.52},
			{"bfcl", 32, 0.61},
			{"apibank", 2, 0.71},
		}
	}
	for i, d := range sets {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			dir := testenv.Shared(t, filepath.Join("datasets", d.name))
			r5, mrr, n := denseRecall(t, e, dir, d.stride)
			t.Logf("%s: dense-only recall@5 %.3f, MRR %.3f over %d queries", d.name, r5, mrr, n)
			if r5 < d.floor {
				t.Errorf("%s: dense-only recall@5 = %.3f, want at least %.3f", d.name, r5, d.floor)
			}
		})
	}
}
