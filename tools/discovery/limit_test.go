package discovery_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

func limitSetup(tb testing.TB, limit int) (*discovery.Discoverer, *tools.View) {
	tb.Helper()
	snap := catalogtest.Registry(tb, tool("fs/read_file", "Read a file"), tool("fs/write_file", "Write a file"), tool("web/open", "Open a web page")).Snapshot()
	return newDiscoverer(tb, &discovery.Options{MaxQueryBytes: limit}), snap.Authorize(tools.Principal{ID: "u", Tenant: "t"})
}

// TestQueryLimit: a query longer than MaxQueryBytes is refused with an
// error naming both lengths; one at the limit is answered; long context
// turns are cut at a UTF-8 boundary and the cut is reported.
func TestQueryLimit(t *testing.T) {
	const limit = 100
	d, view := limitSetup(t, limit)
	words := strings.Repeat("read file ", 20)
	for _, tc := range []struct {
		name      string
		req       discovery.Request
		err       string // substring of the error; "" means success
		truncated bool
	}{
		{"at the limit", discovery.Request{Query: words[:limit]}, "", false},
		{"one byte over", discovery.Request{Query: words[:limit+1]}, "the query has 101 bytes, the limit is 100", false},
		{"10 MB", discovery.Request{Query: strings.Repeat("x", 10<<20)}, "the query has 10485760 bytes", false},
		{"multi-byte over", discovery.Request{Query: strings.Repeat("é", 51)}, "the query has 102 bytes", false},
		{"short context", discovery.Request{Query: "read", Context: []string{"write a file"}}, "", false},
		{"long context cut", discovery.Request{Query: "read", Context: []string{strings.Repeat("é", 80)}}, "", true},
		{"long unused turn", discovery.Request{Query: "read", Context: []string{strings.Repeat("é", 80), "a", "b"}}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sl, err := d.Shortlist(context.Background(), view, tc.req)
			if tc.err != "" {
				if !errors.Is(err, discovery.ErrQueryTooLong) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want ErrQueryTooLong saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sl.ContextTruncated != tc.truncated {
				t.Errorf("ContextTruncated = %v, want %v", sl.ContextTruncated, tc.truncated)
			}
		})
	}
	if _, err := discovery.New(&discovery.Options{MaxQueryBytes: -1}); !errors.Is(err, discovery.ErrOptions) || !strings.Contains(err.Error(), "MaxQueryBytes") {
		t.Errorf("New(MaxQueryBytes -1) err = %v, want ErrOptions naming MaxQueryBytes", err)
	}
}

// TestQueryMemoryBounded: the memory a query allocates is bounded by the
// limit: a query at the default limit, made of distinct words, with two
// context turns at the limit, allocates less than a fixed budget, and a
// 10 MB query is refused without reading it.
func TestQueryMemoryBounded(t *testing.T) {
	d, view := limitSetup(t, 0)
	var sb strings.Builder
	for i := 0; sb.Len() < discovery.DefaultMaxQueryBytes-16; i++ {
		fmt.Fprintf(&sb, "w%dq ", i)
	}
	q := sb.String()
	req := discovery.Request{Query: q, Context: []string{q + q, q}}
	ctx := context.Background()
	if _, err := d.Shortlist(ctx, view, req); err != nil { // warm the pools
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		req    discovery.Request
		budget uint64
	}{
		{"16 KiB query and context", req, 16 << 20},
		{"10 MB query", discovery.Request{Query: strings.Repeat("a ", 5<<20)}, 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			sl, err := d.Shortlist(ctx, view, tc.req)
			runtime.ReadMemStats(&after)
			if len(tc.req.Query) > discovery.DefaultMaxQueryBytes != errors.Is(err, discovery.ErrQueryTooLong) {
				t.Fatalf("%s: err = %v", tc.name, err)
			}
			if err == nil && !sl.ContextTruncated {
				t.Errorf("%s: a context turn of %d bytes was not reported cut", tc.name, len(q+q))
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > tc.budget {
				t.Errorf("%s: allocated %d bytes, budget %d", tc.name, got, tc.budget)
			} else {
				t.Logf("%s: allocated %d bytes", tc.name, got)
			}
		})
	}
}

// FuzzShortlistLimit: with a small limit, any query is either refused with
// ErrQueryTooLong (exactly when it is longer than the limit) or answered
// within K, and a context turn longer than the limit is reported cut.
func FuzzShortlistLimit(f *testing.F) {
	for _, s := range []string{"", "read a file", strings.Repeat("é", 40), strings.Repeat("a", 65), "\xff\xfe"} {
		f.Add(s, s)
	}
	const limit = 64
	d, view := limitSetup(f, limit)
	f.Fuzz(func(t *testing.T, q, turn string) {
		sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: q, Context: []string{turn}, K: 2})
		if len(q) > limit {
			if !errors.Is(err, discovery.ErrQueryTooLong) {
				t.Fatalf("Shortlist(%d bytes) err = %v, want ErrQueryTooLong", len(q), err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Shortlist(%q): %v", q, err)
		}
		if len(sl.Candidates) > 2 {
			t.Fatalf("%d candidates, want at most 2", len(sl.Candidates))
		}
		if sl.ContextTruncated != (len(turn) > limit) {
			t.Fatalf("ContextTruncated = %v for a %d-byte turn", sl.ContextTruncated, len(turn))
		}
	})
}

// TestShortlistToAllocatesNothing: with a reused Shortlist, a request in
// English without identifiers allocates nothing once the pools and caches
// are warm (the race detector's pools drop items on purpose, so it is
// skipped there).
func TestShortlistToAllocatesNothing(t *testing.T) {
	if testenv.Race {
		t.Skip("sync.Pool drops items under the race detector")
	}
	ds := realMCP(t)
	d := newDiscoverer(t, nil)
	view := ds.snap.Authorize(tools.Principal{ID: "u", Tenant: "t"})
	ctx := context.Background()
	var sl discovery.Shortlist
	for _, q := range []string{"Take a screenshot of the page", "list the open pull requests", "read the file and show me its contents"} {
		t.Run(q, func(t *testing.T) {
			req := discovery.Request{Query: q, Context: []string{"open the browser"}}
			if err := d.ShortlistTo(ctx, view, req, &sl); err != nil || len(sl.Candidates) == 0 {
				t.Fatalf("ShortlistTo(%q) = %d candidates, %v", q, len(sl.Candidates), err)
			}
			if n := testing.AllocsPerRun(50, func() { _ = d.ShortlistTo(ctx, view, req, &sl) }); n != 0 {
				t.Errorf("ShortlistTo(%q) allocates %v times per query, want 0", q, n)
			}
		})
	}
}
