// Command bench compares toolgate's default Discoverer with two lexical
// baselines — SQLite FTS5 (BM25, porter stemming) and Bleve (English
// analyzer, a disjunction of match queries) — over the same tool text (name
// split on separators, description) and the same queries: recall@1/5, MRR
// and single-query latency per engine, then the ratios toolgate/Bleve and
// toolgate/FTS5. It is a nested module so that comparison-only dependencies
// stay out of the library's go.mod.
//
//	cd bench && go run . -shared ../../shared
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
	"github.com/toolgate/toolgate/tools/discovery"
)

func main() {
	shared := flag.String("shared", "../../shared", "the shared data folder")
	sample := flag.Int("sample", 0, "answerable queries per dataset (evenly spread); 0 = all")
	flag.Parse()
	if err := run(*shared, *sample); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type set struct {
	name    string
	catalog []string
	queries string
}

func run(shared string, sample int) error {
	realFiles, _ := filepath.Glob("../examples/transfer/catalog/*.json")
	sets := []set{
		{"metatool", []string{"metatool=" + filepath.Join(shared, "datasets/metatool/tools.jsonl")}, filepath.Join(shared, "datasets/metatool/queries.jsonl")},
		{"bfcl", []string{"bfcl=" + filepath.Join(shared, "datasets/bfcl/tools.jsonl")}, filepath.Join(shared, "datasets/bfcl/queries.jsonl")},
		{"apibank", []string{"apibank=" + filepath.Join(shared, "datasets/apibank/tools.jsonl")}, filepath.Join(shared, "datasets/apibank/queries.jsonl")},
		{"real-mcp", realFiles, "../testdata/queries/real-mcp.jsonl"},
	}
	fmt.Println("| set | engine | queries | R@1 | R@5 | MRR | p50 µs | p99 µs |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- |")
	var ratios []string
	for _, s := range sets {
		ts, err := catalog.LoadAll(s.catalog...)
		if err != nil {
			return err
		}
		reg := tools.NewRegistry()
		if err := reg.Add(ts...); err != nil {
			return err
		}
		snap := reg.Snapshot()
		f, err := os.Open(s.queries)
		if err != nil {
			return err
		}
		qs, err := discovery.ReadQueries(f, s.queries)
		f.Close()
		if err != nil {
			return err
		}
		var answerable []discovery.Query
		for _, q := range qs {
			if len(q.Relevant) > 0 {
				answerable = append(answerable, q)
			}
		}
		answerable = discovery.SampleQueries(answerable, sample)
		byEngine := map[string]result{}
		for _, e := range engines {
			fn, closeFn, err := e.open(snap)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", s.name, e.name, err)
			}
			r, err := score(answerable, fn)
			closeFn()
			if err != nil {
				return fmt.Errorf("%s: %s: %w", s.name, e.name, err)
			}
			byEngine[e.name] = r
			fmt.Printf("| %s | %s | %d | %.3f | %.3f | %.3f | %.0f | %.0f |\n", s.name, e.name, len(answerable), r.r1, r.r5, r.mrr, r.p50, r.p99)
		}
		tg := byEngine["toolgate"]
		for _, other := range []string{"bleve", "bleve bm25", "sqlite fts5"} {
			o := byEngine[other]
			ratios = append(ratios, fmt.Sprintf("| %s | toolgate / %s | ×%.2f | ×%.2f | ×%.2f | ÷%.1f | ÷%.1f |",
				s.name, other, tg.r1/o.r1, tg.r5/o.r5, tg.mrr/o.mrr, o.p50/tg.p50, o.p99/tg.p99))
		}
	}
	fmt.Println()
	fmt.Println("| set | ratio | R@1 | R@5 | MRR | p50 latency | p99 latency |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range ratios {
		fmt.Println(r)
	}
	return nil
}

type result struct{ r1, r5, mrr, p50, p99 float64 }

func score(qs []discovery.Query, fn search) (result, error) {
	var r result
	var lat []float64
	for _, q := range qs {
		start := time.Now()
		got, err := fn(q.Query)
		if err != nil {
			return r, err
		}
		lat = append(lat, float64(time.Since(start).Nanoseconds())/1e3)
		match := func(entry, id string) bool {
			if entry == id {
				return true
			}
			_, name, _ := strings.Cut(id, "/")
			return name == entry
		}
		hits := func(k int) float64 {
			n := 0
			for _, e := range q.Relevant {
				for _, id := range got[:min(k, len(got))] {
					if match(e, id) {
						n++
						break
					}
				}
			}
			return float64(n) / float64(len(q.Relevant))
		}
		r.r1 += hits(1)
		r.r5 += hits(5)
	rank:
		for i, id := range got {
			for _, e := range q.Relevant {
				if match(e, id) {
					r.mrr += 1 / float64(i+1)
					break rank
				}
			}
		}
	}
	n := float64(len(qs))
	r.r1, r.r5, r.mrr = r.r1/n, r.r5/n, r.mrr/n
	sort.Float64s(lat)
	r.p50, r.p99 = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	return r, nil
}
