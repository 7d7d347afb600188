package discovery_test

import (
	"context"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// ranked returns the shortlist's tool ids that the request ranked, without
// the companions completeCompanions placed (CompanionOf): those take a
// place that k decides by design.
func ranked(sl *discovery.Shortlist) []string {
	var out []string
	for _, c := range sl.Candidates {
		if c.CompanionOf == "" {
			out = append(out, c.Tool.ID)
		}
	}
	return out
}

// TestShortlistKCutsOneRanking checks that k only cuts the ranking: the
// tools a shorter shortlist ranks are the head of a longer one's, for
// every k from 1 to 10. A request that matches few cards by their words is
// where the two could part: the dense side then scores every tool, and
// whether it did must not depend on how many tools were asked for.
func TestShortlistKCutsOneRanking(t *testing.T) {
	sets := []dataset{
		// Two cards share a word with the requests; two hundred share none.
		{name: "two lexical matches", snap: sakeAndTicker(t), queries: []discovery.Query{
			{Query: "detailed information about dividends and earnings"}, {Query: "sake prices"}}},
		heldoutSet(t, "heldout2", "dev"),
	}
	d := newDiscoverer(t, nil)
	ctx := context.Background()
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			view := set.snap.Authorize(tools.Principal{ID: "u", Tenant: "t"})
			for _, dq := range set.queries {
				q := dq.Query
				long, err := d.Shortlist(ctx, view, discovery.Request{Query: q, K: 10})
				if err != nil {
					t.Fatal(err)
				}
				want := ranked(long)
				for k := 1; k < 10; k++ {
					sl, err := d.Shortlist(ctx, view, discovery.Request{Query: q, K: k})
					if err != nil {
						t.Fatal(err)
					}
					if got := ranked(sl); len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
						t.Errorf("Shortlist(%q, k=%d) ranks %v; k=10 ranks %v", q, k, got, want)
					}
				}
			}
		})
	}
}
