package discovery_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
	"github.com/toolgate/toolgate/tools/discovery"
)

// TestShortlistWithoutEvidence: a request that shares no word, no
// identifier and no character n-gram with any card matches nothing, and
// gets no candidates and confidence 0, not k arbitrary tools.
func TestShortlistWithoutEvidence(t *testing.T) {
	ts, err := catalog.LoadAll("../../examples/transfer/catalog/github.json")
	if err != nil {
		t.Fatal(err)
	}
	view := catalogtest.Registry(t, ts...).Snapshot().Authorize(everyone)
	for _, tc := range []struct {
		name string
		opts *discovery.Options
	}{
		{"default", nil},
		{"rrf", &discovery.Options{Fusion: discovery.FusionRRF}},
		{"dense", &discovery.Options{Method: discovery.MethodDense}},
		{"reformulating", &discovery.Options{ReformulateBelow: 0.99}},
	} {
		d := newDiscoverer(t, tc.opts)
		for _, q := range []string{"😀😀", "\x01\x02", "the of and", "   "} {
			t.Run(tc.name+"/"+q, func(t *testing.T) {
				sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: q, K: 5})
				if err != nil {
					t.Fatal(err)
				}
				if len(sl.Candidates) != 0 || sl.Confidence != 0 {
					t.Errorf("Shortlist(%q) = %v, confidence %.3f; want no candidates, confidence 0", q, ids(sl), sl.Confidence)
				}
			})
		}
	}
}

// wordEmbedder embeds a text as its counts of a few words, one dimension
// each: a card that names none of the request's words has cosine 0 with
// it exactly (the default n-gram embedder's hashing leaves a little
// noise there). Each card of the tests names one of the words.
type wordEmbedder []string

func (e wordEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, len(e))
		for d, w := range e {
			v[d] = float32(strings.Count(strings.ToLower(text), w))
		}
		out[i] = v
	}
	return out, nil
}

// TestShortlistOnlyWhatMatches: a request that matches two tools gets
// those two, however large k is; no tool without evidence pads it.
func TestShortlistOnlyWhatMatches(t *testing.T) {
	view := catalogtest.Registry(t,
		tool("mail/send_invoice", "Send an invoice"),
		tool("mail/void_invoice", "Void an invoice"),
		tool("sky/get_weather", "Weather forecast"),
		tool("fs/list_folders", "Folders on a disk"),
	).Snapshot().Authorize(everyone)
	for _, tc := range []struct {
		name string
		opts *discovery.Options
	}{
		{"score", &discovery.Options{Embedder: wordEmbedder{"invoice", "weather", "folder"}}},
		{"rrf", &discovery.Options{Embedder: wordEmbedder{"invoice", "weather", "folder"}, Fusion: discovery.FusionRRF}},
		{"lexical", &discovery.Options{NoDense: true}},
	} {
		d := newDiscoverer(t, tc.opts)
		for _, k := range []int{2, 3, 5, 10} {
			t.Run(fmt.Sprintf("%s/k=%d", tc.name, k), func(t *testing.T) {
				sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: "invoice", K: k})
				if err != nil {
					t.Fatal(err)
				}
				got := ids(sl)
				slices.Sort(got)
				if want := []string{"mail/send_invoice", "mail/void_invoice"}; !slices.Equal(got, want) {
					t.Errorf("Shortlist(%q, k=%d) = %v, want %v", "invoice", k, ids(sl), want)
				}
			})
		}
	}
}

// TestShortlistOfUnknownWords: the embedded default's vectors hash
// letters, so any string, random letters too, has a positive cosine with
// about half the cards of a catalog. Such a cosine is no evidence alone:
// requests of made-up words get no tool from any labeled catalog, while
// the same vectors still rank the tools of a request whose words matched.
func TestShortlistOfUnknownWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var requests []string
	for range 60 {
		words := make([]string, 1+rng.IntN(3))
		for i := range words {
			b := make([]byte, 4+rng.IntN(6))
			for j := range b {
				b[j] = byte('a' + rng.IntN(26))
			}
			words[i] = string(b)
		}
		requests = append(requests, strings.Join(words, " "))
	}
	requests = append(requests, "qwertyuiop asdf", "xyzzy plugh frobnicate")
	d := newDiscoverer(t, nil)
	for _, ds := range []dataset{realMCPNatural(t), heldoutSet(t, "heldout", "dev"), heldoutSet(t, "heldout2", "dev"),
		heldoutSet(t, "heldout3", "dev"), heldoutSet(t, "heldout4", "dev"), publicDataset(t, "bfcl", 0)} {
		t.Run(ds.name, func(t *testing.T) {
			view := ds.snap.Authorize(tools.Principal{ID: "b", Tenant: "b"})
			matched := 0
			for _, q := range requests {
				sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: q, K: 5})
				if err != nil {
					t.Fatal(err)
				}
				if len(sl.Candidates) > 0 {
					matched++
					t.Errorf("Shortlist(%q) = %v; want none: no word of it is in a card", q, ids(sl))
				}
			}
			t.Logf("%d of %d made-up requests shortlisted a tool", matched, len(requests))
		})
	}
}

// TestToolTokensAsTheIndex: ToolTokens counts a tool alone as an index
// counts it among its catalog, for every tool of the real MCP catalogs.
func TestToolTokensAsTheIndex(t *testing.T) {
	ds := realMCPNatural(t)
	x, err := newDiscoverer(t, nil).Index(context.Background(), ds.snap)
	if err != nil {
		t.Fatal(err)
	}
	for i, tl := range ds.snap.Tools() {
		t.Run(tl.ID, func(t *testing.T) {
			n, err := discovery.ToolTokens(tl)
			if err != nil || n != x.ToolTokens(i) || n == 0 {
				t.Errorf("ToolTokens(%s) = %d, %v; the index counts %d", tl.ID, n, err, x.ToolTokens(i))
			}
		})
	}
}
