package main

import (
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

// TestScore checks recall and MRR on a hand-computed case.
func TestScore(t *testing.T) {
	qs := []discovery.Query{
		{Query: "a", Relevant: []string{"s/x"}},
		{Query: "b", Relevant: []string{"y"}},
	}
	fn := func(q string) ([]string, error) {
		if q == "a" {
			return []string{"s/x", "s/y"}, nil
		}
		return []string{"s/x", "s/y"}, nil
	}
	r, err := score(qs, fn)
	if err != nil {
		t.Fatal(err)
	}
	if r.r1 != 0.5 || r.r5 != 1 || r.mrr != 0.75 {
		t.Errorf("score = R@1 %v R@5 %v MRR %v, want 0.5 1 0.75", r.r1, r.r5, r.mrr)
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
