package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// realSnapshot loads the real MCP catalogs checked in under examples/.
func realSnapshot(t testing.TB) *tools.Snapshot {
	t.Helper()
	return catalogtest.Snapshot(t, testenv.Catalogs(t)...)
}

// TestEngines checks that every engine indexes the real MCP catalogs and
// returns at most k known tool IDs for plain requests, with the tool the
// request names among them.
func TestEngines(t *testing.T) {
	snap := realSnapshot(t)
	var ids []string
	for _, tl := range snap.Tools() {
		ids = append(ids, tl.ID)
	}
	tests := []struct{ query, want string }{
		{"echo back the text I give you", "everything/echo"},
		{"add two numbers together", "everything/get-sum"},
	}
	for _, e := range engines {
		fn, closeFn, err := e.open(snap)
		if err != nil {
			t.Fatalf("%s: open: %v", e.name, err)
		}
		for _, tt := range tests {
			got, err := fn(tt.query)
			if err != nil {
				t.Fatalf("%s(%q): %v", e.name, tt.query, err)
			}
			if len(got) == 0 || len(got) > k {
				t.Errorf("%s(%q) = %d results, want 1..%d", e.name, tt.query, len(got), k)
			}
			for _, id := range got {
				if !slices.Contains(ids, id) {
					t.Errorf("%s(%q) returned unknown ID %q", e.name, tt.query, id)
				}
			}
			if !slices.Contains(got, tt.want) {
				t.Errorf("%s(%q) = %v, want %s among them", e.name, tt.query, got, tt.want)
			}
		}
		closeFn()
	}
}

// TestEnginesEmptyQuery checks that a request with no words is not an error.
func TestEnginesEmptyQuery(t *testing.T) {
	snap := realSnapshot(t)
	for _, e := range engines {
		fn, closeFn, err := e.open(snap)
		if err != nil {
			t.Fatalf("%s: open: %v", e.name, err)
		}
		if _, err := fn("?!"); err != nil {
			t.Errorf("%s(%q): %v", e.name, "?!", err)
		}
		closeFn()
	}
}

// TestScore checks recall and MRR on a hand-computed case, for two
// engines scored interleaved (each query to each engine in turn, and in
// blocks), each on its own answers.
func TestScore(t *testing.T) {
	qs := []discovery.Query{
		{Query: "a", Relevant: []string{"s/x"}},
		{Query: "b", Relevant: []string{"y"}},
		{Query: "c", Relevant: []string{"s/z"}},
	}
	for _, block := range []int{1, 2, 64} {
		t.Run(fmt.Sprint("block=", block), func(t *testing.T) {
			first := func(q string) ([]string, error) { return []string{"s/x", "s/y"}, nil }
			var seen []string
			second := func(q string) ([]string, error) {
				seen = append(seen, q)
				return []string{"s/y", "s/z"}, nil
			}
			rs, err := score("s", qs, []opened{{"first", first, nil}, {"second", second, nil}}, block)
			if err != nil {
				t.Fatal(err)
			}
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
			if r := rs[0]; !near(r.r1, 1.0/3) || !near(r.r5, 2.0/3) || !near(r.mrr, 0.5) {
				t.Errorf("first: R@1 %v R@5 %v MRR %v, want 1/3 2/3 1/2", r.r1, r.r5, r.mrr)
			}
			if r := rs[1]; !near(r.r1, 1.0/3) || !near(r.r5, 2.0/3) || !near(r.mrr, 0.5) {
				t.Errorf("second: R@1 %v R@5 %v MRR %v, want 1/3 2/3 1/2", r.r1, r.r5, r.mrr)
			}
			if !slices.Equal(seen, []string{"a", "b", "c"}) {
				t.Errorf("second engine saw %v, want every query once, in order", seen)
			}
			for i, r := range rs {
				if len(r.cpu) != len(qs) || r.p50 < 0 || r.p99 < r.p50 || r.cpu50 < 0 || r.cpu99 < r.cpu50 {
					t.Errorf("engine %d: %d CPU times, latencies p50 %v p99 %v CPU %v %v", i, len(r.cpu), r.p50, r.p99, r.cpu50, r.cpu99)
				}
			}
		})
	}
}

// BenchmarkEngines measures one search per iteration on the real MCP
// catalogs, cycling through the labeled real-MCP requests.
func BenchmarkEngines(b *testing.B) {
	snap := realSnapshot(b)
	f, err := os.Open("../testdata/queries/real-mcp.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	qs, err := discovery.ReadQueries(f, "real-mcp.jsonl")
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range engines {
		b.Run(strings.ReplaceAll(e.name, " ", "-"), func(b *testing.B) {
			fn, closeFn, err := e.open(snap)
			if err != nil {
				b.Fatal(err)
			}
			defer closeFn()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := fn(qs[i%len(qs)].Query); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
