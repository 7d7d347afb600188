package discovery_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// TestExactExampleRanksFirst: a tool one of whose examples (an operator's
// overlay) is the request is first even where the fused score ranks another
// tool above it, in a shortlist of any length; a request that only contains the example is ranked by
// score; a catalog alias equal to the request buys nothing; and a tool the
// caller may not use is never added.
func TestExactExampleRanksFirst(t *testing.T) {
	prs := tool("gh/list_pull_requests", "List open pull requests, open pull requests by state, open pull requests of a repository")
	merge := tool("gh/merge_branch", "Merge a branch into another branch")
	merge.Card.Examples = []string{"open pull requests"}
	d := newDiscoverer(t, nil)
	k := 3
	first := func(snap *tools.Snapshot, p tools.Principal, q string) []string {
		sl, err := d.Shortlist(context.Background(), snap.Authorize(p), discovery.Request{Query: q, K: k})
		if err != nil || len(sl.Candidates) == 0 {
			t.Fatalf("Shortlist(%q) = %v, %v", q, sl, err)
		}
		var ids []string
		for _, c := range sl.Candidates {
			ids = append(ids, c.Tool.ID)
		}
		return ids
	}
	snap := catalogtest.Registry(t, prs, merge, tool("gh/create_issue", "Create a new issue")).Snapshot()
	// The rule matters only if the score alone ranks the other tool first.
	for _, q := range []string{"open pull requests please", "Open pull-requests?"} {
		t.Run(q, func(t *testing.T) {
			byScore := q == "open pull requests please"
			got := first(snap, everyone, q)
			if byScore && got[0] != "gh/list_pull_requests" {
				t.Fatalf("%q ranks %v by score: the fixture does not test the rule", q, got)
			}
			if !byScore && got[0] != "gh/merge_branch" {
				t.Errorf("%q ranks %v, want the tool whose example it is first", q, got)
			}
		})
	}
	// A shortlist of one: the example's tool still, not the score's first
	// (k only cuts the ranking the example is looked for in).
	k = 1
	if got := first(snap, everyone, "Open pull-requests?"); got[0] != "gh/merge_branch" {
		t.Errorf("with K=1 %q ranks %v, want the tool whose example it is", "Open pull-requests?", got)
	}
	k = 3
	// The same words as a catalog alias: ranked by score.
	aliased := tool("gh/merge_branch", "Merge a branch into another branch")
	aliased.Card.Aliases = []string{"open pull requests"}
	if got := first(catalogtest.Registry(t, prs, aliased).Snapshot(), everyone, "Open pull-requests?"); got[0] != "gh/list_pull_requests" {
		t.Errorf("a catalog alias equal to the request moved its tool first: %v", got)
	}
	// Authorization first.
	hidden := tool("gh/merge_branch", "Merge a branch into another branch", "repo:admin")
	hidden.Card.Examples = merge.Card.Examples
	for _, id := range first(catalogtest.Registry(t, prs, hidden).Snapshot(), tools.Principal{ID: "u", Tenant: "t"}, "open pull requests") {
		if id == "gh/merge_branch" {
			t.Error("the example brought in a tool the caller may not use")
		}
	}
}
