package discovery_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// TestExactAliasRanksFirst: a tool one of whose aliases is the request
// (a card overlay's, say) is first even where the fused score ranks another
// tool above it; a request that only contains the alias is ranked by score.
func TestExactAliasRanksFirst(t *testing.T) {
	prs := tool("gh/list_pull_requests", "List open pull requests, open pull requests by state, open pull requests of a repository")
	merge := tool("gh/merge_branch", "Merge a branch into another branch")
	merge.Card.Aliases = []string{"open pull requests"}
	snap := catalogtest.Registry(t, prs, merge, tool("gh/create_issue", "Create a new issue")).Snapshot()
	d := newDiscoverer(t, nil)
	first := func(q string) discovery.Candidate {
		sl, err := d.Shortlist(context.Background(), snap.Authorize(everyone), discovery.Request{Query: q, K: 3})
		if err != nil || len(sl.Candidates) == 0 {
			t.Fatalf("Shortlist(%q) = %v, %v", q, sl, err)
		}
		return sl.Candidates[0]
	}
	// The rule matters only if the score alone ranks the other tool first.
	if c := first("open pull requests please"); c.Tool.ID != "gh/list_pull_requests" {
		t.Fatalf("%q ranks %s first by score: the fixture does not test the rule", "open pull requests please", c.Tool.ID)
	}
	for _, q := range []string{"open pull requests", "Open pull-requests?"} {
		if c := first(q); c.Tool.ID != "gh/merge_branch" {
			t.Errorf("%q ranks %s first, want the tool whose alias it is", q, c.Tool.ID)
		}
	}
	// Authorization first: a tool the caller may not use is never added.
	hidden := tool("gh/merge_branch", "Merge a branch into another branch", "repo:admin")
	hidden.Card.Aliases = merge.Card.Aliases
	snap2 := catalogtest.Registry(t, prs, hidden).Snapshot()
	sl, err := d.Shortlist(context.Background(), snap2.Authorize(tools.Principal{ID: "u", Tenant: "t"}), discovery.Request{Query: "open pull requests", K: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sl.Candidates {
		if c.Tool.ID == "gh/merge_branch" {
			t.Error("the alias brought in a tool the caller may not use")
		}
	}
}
