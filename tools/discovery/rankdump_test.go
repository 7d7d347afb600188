package discovery_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

var rankDump = flag.String("discovery.rankdump", "", "write every labeled set's full rankings (all methods) to this file")

// TestRankDump writes, with -discovery.rankdump FILE, the shortlists of
// every labeled set (the public sets whole, both real-MCP sets, the
// held-out dev split, and the real-MCP requests over a 3,000-tool synthetic
// catalog seen by a principal with half the scopes), each with and without
// the previous request as context, under five configurations (the default,
// lexical, dense, BM25, RRF fusion), at k = 10: every candidate's ID and
// scores printed exactly, the confidence, the language and the
// reformulation. Two builds whose files are byte-identical rank
// identically; a change meant only to be faster is checked so:
//
//	go test ./tools/discovery -run TestRankDump -discovery.rankdump /tmp/before.txt
func TestRankDump(t *testing.T) {
	if *rankDump == "" {
		t.Skip("run with -discovery.rankdump FILE")
	}
	f, err := os.Create(*rankDump)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	sets := []dataset{publicDataset(t, "metatool", 0), publicDataset(t, "bfcl", 0), publicDataset(t, "apibank", 0),
		realMCP(t), realMCPNatural(t), realMCPSet(t, "real-mcp-espl", "real-mcp-espl.jsonl"), heldout(t, "dev"),
		heldoutSet(t, "heldout2", "dev")}
	syn := dataset{name: "synthetic-3000", snap: syntheticCatalog(t, 3000), queries: realMCP(t).queries}
	sets = append(sets, syn)
	configs := []struct {
		name string
		opts discovery.Options
	}{
		{"default", discovery.Options{}},
		{"lexical", discovery.Options{Method: discovery.MethodLexical}},
		{"dense", discovery.Options{Method: discovery.MethodDense}},
		{"bm25", discovery.Options{Method: discovery.MethodBM25}},
		{"rrf", discovery.Options{Fusion: discovery.FusionRRF}},
	}
	ctx := context.Background()
	lines := 0
	//testlint:rows a writer of one file, not a table of cases: every row goes to the dump in order
	for _, ds := range sets {
		p := tools.Principal{ID: "b", Tenant: "b"}
		if ds.name == syn.name {
			p.Scopes = []string{"scope0", "scope1", "scope2", "scope3"}
		}
		view := ds.snap.Authorize(p)
		//testlint:rows the dump's configurations, written in order
		for _, c := range configs {
			o := c.opts
			d := newDiscoverer(t, &o)
			var sl discovery.Shortlist
			//testlint:rows the dump's queries, written in order
			for i, q := range ds.queries {
				//testlint:rows with and without context, written in order
				for _, withContext := range []bool{false, true} {
					req := discovery.Request{Query: q.Query, K: 10}
					if withContext {
						if i == 0 || i%4 != 0 {
							continue
						}
						req.Context = []string{ds.queries[i-1].Query}
					}
					if err := d.ShortlistTo(ctx, view, req, &sl); err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(w, "%s %s %d ctx=%v lang=%s conf=%v ref=%v %q tokens=%d/%d\n", ds.name, c.name, i, withContext,
						sl.Lang, sl.Confidence, sl.Reformulated, sl.ReformulatedQuery, sl.ShortlistTokens, sl.CatalogTokens)
					for r, cand := range sl.Candidates {
						fmt.Fprintf(w, "  %d %s %v %v %v %v\n", r, cand.Tool.ID, cand.Score, cand.Lexical, cand.Dense, cand.Identifier)
					}
					lines += 1 + len(sl.Candidates)
				}
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if lines == 0 {
		t.Fatal("no rankings written")
	}
	t.Logf("%d lines in %s", lines, *rankDump)
}
