package ngram

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools/catalog"
)

// TestCrossLanguageOnMCPCatalogs measures the embedder alone on the real MCP
// catalogs (105 tools) with testdata/mcp_queries.jsonl: the same 14 requests
// in English, Spanish and Polish. The queries were written by the author of
// the lexicon, so the numbers are optimistic; the floors catch regressions.
func TestCrossLanguageOnMCPCatalogs(t *testing.T) {
	dir := testenv.Shared(t, filepath.Join("catalogs", "real-mcp"))
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalogs in %s: %v", dir, err)
	}
	ts, err := catalog.LoadAll(files...)
	if err != nil {
		t.Fatal(err)
	}
	tls := make([]dsTool, len(ts))
	for i, tl := range ts {
		tls[i] = dsTool{Name: tl.Card.Name, Description: tl.Description, Parameters: tl.InputSchema}
	}
	e := New(nil)
	vecs := embedCards(t, e, tls)
	type query struct {
		Query    string   `json:"query"`
		Relevant []string `json:"relevant"`
		Lang     string   `json:"lang"`
	}
	qs := readJSONL[query](t, filepath.Join("testdata", "mcp_queries.jsonl"))
	hits, total := map[string]float64{}, map[string]int{}
	for _, q := range qs {
		qv := embed1(t, e, q.Query)
		idx := make([]int, len(tls))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return cosine(qv, vecs[idx[a]]) > cosine(qv, vecs[idx[b]]) })
		found := false
		var top []string
		for _, i := range idx[:5] {
			top = append(top, tls[i].Name)
			for _, r := range q.Relevant {
				found = found || tls[i].Name == r
			}
		}
		total[q.Lang]++
		if found {
			hits[q.Lang]++
		} else {
			t.Logf("miss (%s) %q: top 5 %v, want one of %v", q.Lang, q.Query, top, q.Relevant)
		}
	}
	floors := map[string]float64{"en": 0.85, "es": 0.7, "pl": 0.7}
	for _, lang := range []string{"en", "es", "pl"} {
		t.Run(lang, func(t *testing.T) {
			r := hits[lang] / float64(total[lang])
			t.Logf("%s: hit@5 %.3f (%d queries)", lang, r, total[lang])
			if r < floors[lang] {
				t.Errorf("%s: hit@5 = %.3f, want at least %.3f", lang, r, floors[lang])
			}
		})
	}
}
