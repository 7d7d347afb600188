package discovery_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

var updateBackground = flag.Bool("update-background", false, "rewrite data/background_df.tsv from ../shared/datasets/bfcl")

const backgroundHead = `# Document frequencies of index terms over BFCL's 2,573 function descriptions (Apache-2.0,
# ../shared/datasets/bfcl/SOURCE.md), terms in 3 tools or more: the background IDF (Options.NoBackgroundIDF).
# Regenerate: go test ./tools/discovery -run TestBackgroundDF -update-background
`

// TestBackgroundDF checks that data/background_df.tsv is what the default
// analysis makes of BFCL's catalog (with -update-background, rewrites it).
func TestBackgroundDF(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes BFCL")
	}
	ds := publicDataset(t, "bfcl", 1)
	x, err := newDiscoverer(t, nil).Index(context.Background(), ds.snap)
	if err != nil {
		t.Fatal(err)
	}
	want := discovery.BackgroundTSV(x, backgroundHead, 3)
	path := filepath.Join("data", "background_df.tsv")
	if *updateBackground {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s differs from what the analysis makes of BFCL's catalog; run with -update-background", path)
	}
}

// TestBackgroundIDF: in a catalog of 200 tools, a short card sharing only
// words that tool descriptions use everywhere ("detailed information")
// with the request no longer outranks, on the lexical side the option
// acts on, the tool the request's topic names.
func TestBackgroundIDF(t *testing.T) {
	view := sakeAndTicker(t).Authorize(tools.Principal{ID: "u", Tenant: "t"})
	const q = "detailed information about dividends and earnings"
	for _, tc := range []struct {
		name  string
		opts  *discovery.Options
		first string
	}{
		{"off", &discovery.Options{Method: discovery.MethodLexical, NoBackgroundIDF: true}, "a/sake_finder"},
		{"on (the default)", &discovery.Options{Method: discovery.MethodLexical}, "a/ticker_feed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sl, err := newDiscoverer(t, tc.opts).Shortlist(context.Background(), view, discovery.Request{Query: q, K: 2})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(sl); len(got) == 0 || got[0] != tc.first {
				t.Errorf("Shortlist(%q) = %v, want %s first", q, got, tc.first)
			}
		})
	}
}

// sakeAndTicker is a catalog of MetaTool's size, 202 tools: a short card
// whose words tool descriptions use everywhere ("detailed information"), a
// long one about stocks, and 200 spare-parts cards that share no word with
// a request about either. One card in it is half a percent of it, where
// BFCL's descriptions use "detailed" in one of nine.
func sakeAndTicker(tb testing.TB) *tools.Snapshot {
	ts := []tools.Tool{
		tool("a/sake_finder", "Find sake and get detailed information."),
		tool("a/ticker_feed", "Stock prices, market quotes, dividends, earnings calendars, analyst ratings and charts for the companies listed on exchanges worldwide."),
	}
	for i := range 200 {
		ts = append(ts, tool(fmt.Sprintf("a/parts_%d", i), fmt.Sprintf("Spare parts for the machine model m%d.", i)))
	}
	return catalogtest.Registry(tb, ts...).Snapshot()
}
