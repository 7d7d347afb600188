// Command rankdump prints every ranking discovery gives over the labeled
// query sets, for checking that a change which should not move rankings
// (a faster index build, an index file) does not: each query's top 10
// with every score written in full, for the hybrid, lexical and BM25
// methods, over the real MCP catalogs (two query sets), MetaTool, BFCL,
// API-Bank and a 3,000-tool synthetic catalog. Run it before and after
// and compare the outputs byte for byte:
//
//	go run ./internal/bigcatalog/rankdump -shared ../shared > /tmp/before.txt
//	go run ./internal/bigcatalog/rankdump -shared ../shared > /tmp/after.txt
//	cmp /tmp/before.txt /tmp/after.txt
//
// With -index DIR each index is built through an index file in DIR and
// then read back from it by a second Discoverer, whose rankings are the
// ones printed: so a second run with the same DIR prints the rankings of
// indexes restored from files.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/internal/bigcatalog"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
	"github.com/toolgate/toolgate/tools/discovery"
)

type set struct {
	name    string
	specs   []string
	queries string
	grow    int // synthetic size grown from the specs' tools, 0: none
}

func main() {
	shared := flag.String("shared", "../shared", "the shared data `dir`")
	index := flag.String("index", "", "build each index through an index file in `dir`")
	flag.Parse()
	if err := run(*shared, *index); err != nil {
		fmt.Fprintln(os.Stderr, "rankdump:", err)
		os.Exit(1)
	}
}

func run(shared, index string) error {
	realMCP, _ := filepath.Glob(filepath.Join(shared, "catalogs/real-mcp/*.json"))
	ds := func(name string) set {
		dir := filepath.Join(shared, "datasets", name)
		return set{name: name, specs: []string{name + "=" + filepath.Join(dir, "tools.jsonl")}, queries: filepath.Join(dir, "queries.jsonl")}
	}
	sets := []set{
		{name: "real-mcp", specs: realMCP, queries: "testdata/queries/real-mcp.jsonl"},
		{name: "real-mcp-natural", specs: realMCP, queries: "testdata/queries/real-mcp-natural.jsonl"},
		ds("metatool"), ds("bfcl"), ds("apibank"),
		{name: "synthetic-3000", specs: realMCP, queries: "testdata/queries/real-mcp.jsonl", grow: 3000},
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for _, s := range sets {
		if err := dump(w, s, index); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

func dump(w *bufio.Writer, s set, index string) error {
	ts, err := catalog.LoadAll(s.specs...)
	if err != nil {
		return err
	}
	reg := tools.NewRegistry()
	if err := reg.Add(ts...); err != nil {
		return err
	}
	if s.grow > 0 {
		big, err := bigcatalog.Tools(reg.Snapshot().Tools(), s.grow)
		if err != nil {
			return err
		}
		if err := reg.Add(big...); err != nil {
			return err
		}
	}
	snap := reg.Snapshot()
	queries, err := readQueries(s.queries)
	if err != nil {
		return err
	}
	view := snap.Authorize(tools.Principal{ID: "p", Tenant: "t", Scopes: snap.Scopes()})
	ctx := context.Background()
	for m, method := range []discovery.Method{discovery.MethodHybrid, discovery.MethodLexical, discovery.MethodBM25} {
		d, err := discovery.New(&discovery.Options{Method: method})
		if err != nil {
			return err
		}
		var x *discovery.Index
		if index == "" {
			x, err = d.Index(ctx, snap)
		} else {
			// Built and written by one Discoverer, read back by a new one.
			path := filepath.Join(index, fmt.Sprintf("%s-%d.idx", s.name, m))
			if _, _, err := d.IndexFile(ctx, snap, path, nil); err != nil {
				return err
			}
			if d, err = discovery.New(&discovery.Options{Method: method}); err != nil {
				return err
			}
			x, _, err = d.IndexFile(ctx, snap, path, nil)
		}
		if err != nil {
			return err
		}
		st := x.Stats()
		fmt.Fprintf(w, "set %s method %d tools %d terms %d postings %d\n", s.name, m, st.Tools, st.Terms, st.Postings)
		for _, q := range queries {
			sl, err := d.Shortlist(ctx, view, discovery.Request{Query: q, K: 10})
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%q conf=%.17g ref=%v %q cat=%d sl=%d\n", q, sl.Confidence, sl.Reformulated, sl.ReformulatedQuery, sl.CatalogTokens, sl.ShortlistTokens)
			for _, c := range sl.Candidates {
				fmt.Fprintf(w, "  %s %.17g %.17g %.17g %v\n", c.Tool.ID, c.Score, c.Lexical, c.Dense, c.Identifier)
			}
		}
	}
	return nil
}

func readQueries(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, err
		}
		qs = append(qs, q.Query)
	}
	return qs, sc.Err()
}
