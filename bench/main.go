// Command bench compares toolgate's Discoverer with SQLite FTS5 (BM25 over
// name and description, porter stemming) on the same corpora and queries:
// recall@1/5, MRR and single-query latency. It is a nested module so that
// comparison-only dependencies stay out of the library's go.mod.
//
//	cd bench && go run . -shared ../../shared
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

func main() {
	shared := flag.String("shared", "../../shared", "the shared data folder")
	sample := flag.Int("sample", 3000, "queries per dataset (evenly spread); 0 = all")
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
	for _, s := range sets {
		ts, err := tools.LoadCatalogs(s.catalog...)
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
		if sample > 0 && len(answerable) > sample {
			step := float64(len(answerable)) / float64(sample)
			var keep []discovery.Query
			for i := range sample {
				keep = append(keep, answerable[int(float64(i)*step)])
			}
			answerable = keep
		}
		d, err := discovery.New(nil)
		if err != nil {
			return err
		}
		view := snap.Authorize(tools.Principal{ID: "b", Tenant: "b"})
		if _, err := d.Index(context.Background(), snap); err != nil {
			return err
		}
		tg := func(q string) ([]string, error) {
			sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: q, K: 5})
			if err != nil {
				return nil, err
			}
			out := make([]string, len(sl.Candidates))
			for i, c := range sl.Candidates {
				out[i] = c.Tool.ID
			}
			return out, nil
		}
		fts, closeFTS, err := newFTS(snap)
		if err != nil {
			return err
		}
		for _, e := range []struct {
			name string
			fn   func(string) ([]string, error)
		}{{"toolgate", tg}, {"sqlite fts5", fts}} {
			r, err := score(snap, answerable, e.fn)
			if err != nil {
				return err
			}
			fmt.Printf("| %s | %s | %d | %.3f | %.3f | %.3f | %.0f | %.0f |\n", s.name, e.name, len(answerable), r.r1, r.r5, r.mrr, r.p50, r.p99)
		}
		closeFTS()
	}
	return nil
}

type result struct{ r1, r5, mrr, p50, p99 float64 }

func score(snap *tools.Snapshot, qs []discovery.Query, fn func(string) ([]string, error)) (result, error) {
	var r result
	var lat []float64
	for _, q := range qs {
		start := time.Now()
		got, err := fn(q.Query)
		if err != nil {
			return r, err
		}
		lat = append(lat, float64(time.Since(start).Microseconds()))
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

var words = regexp.MustCompile(`[\pL\pN]+`)

// newFTS indexes the snapshot's tools in an in-memory FTS5 table (name split
// on separators, description; porter stemming) and returns a search
// function ranking by FTS5's bm25() over the request's words, ORed.
func newFTS(snap *tools.Snapshot) (func(string) ([]string, error), func(), error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, name, description, tokenize = 'porter unicode61')`); err != nil {
		return nil, nil, err
	}
	tx, _ := db.Begin()
	for _, t := range snap.Tools() {
		name := strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(t.Name())
		desc := t.Description
		if desc == "" {
			desc = t.Card.Summary
		}
		if _, err := tx.Exec(`INSERT INTO t(id, name, description) VALUES (?, ?, ?)`, t.ID, name, desc); err != nil {
			return nil, nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, err
	}
	stmt, err := db.Prepare(`SELECT id FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 5`)
	if err != nil {
		return nil, nil, err
	}
	search := func(q string) ([]string, error) {
		ws := words.FindAllString(strings.ToLower(q), -1)
		if len(ws) == 0 {
			return nil, nil
		}
		for i, w := range ws {
			ws[i] = `"` + w + `"`
		}
		rows, err := stmt.Query(strings.Join(ws, " OR "))
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return nil, err
			}
			out = append(out, id)
		}
		return out, rows.Err()
	}
	return search, func() { stmt.Close(); db.Close() }, nil
}
