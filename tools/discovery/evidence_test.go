package discovery_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
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
