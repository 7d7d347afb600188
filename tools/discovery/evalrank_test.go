package discovery_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools/discovery"
)

// TestEvaluateRanksMisses: with RankDepth, a query whose top K lacks its
// relevant tool gets the rank that tool has in a deeper shortlist; a hit
// gets its rank in the top K (1/RR); without RankDepth a miss gets 0.
func TestEvaluateRanksMisses(t *testing.T) {
	snap := catalogtest.Registry(t,
		tool("gh/create_issue", "Create a new issue in a repository"),
		tool("gl/create_issue", "Create a new issue in a project"),
		tool("gh/create_pull_request", "Create a new pull request in a repository"),
		tool("bank/balance", "Show an account balance"),
	).Snapshot()
	d := newDiscoverer(t, nil)
	qs := []discovery.Query{
		{ID: "miss", Query: "create a new issue in a repository", Relevant: []string{"gh/create_pull_request"}},
		{ID: "hit", Query: "show the account balance", Relevant: []string{"bank/balance"}},
	}
	deep, err := d.Shortlist(context.Background(), snap.Authorize(everyone), discovery.Request{Query: qs[0].Query, K: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i, c := range deep.Candidates {
		if c.Tool.ID == "gh/create_pull_request" {
			want = i + 1
			break
		}
	}
	if want <= 1 {
		t.Fatalf("the relevant tool ranks %d in the deep shortlist: the miss row checks nothing", want)
	}
	for _, row := range []struct {
		name            string
		depth, wantMiss int
	}{{"ranked deeper", 10, want}, {"top k only", 0, 0}} {
		t.Run(row.name, func(t *testing.T) {
			rep, err := discovery.Evaluate(context.Background(), d, snap, qs, &discovery.EvalOptions{K: 1, RankDepth: row.depth})
			if err != nil {
				t.Fatal(err)
			}
			miss, hit := rep.Details[0], rep.Details[1]
			if miss.Rank != row.wantMiss || miss.RR != 0 {
				t.Errorf("miss: Rank %d RR %v, want %d and 0 (RR stays within the top k)", miss.Rank, miss.RR, row.wantMiss)
			}
			if hit.Rank != 1 || hit.RR != 1 {
				t.Errorf("hit: Rank %d RR %v, want 1 and 1", hit.Rank, hit.RR)
			}
		})
	}
}
