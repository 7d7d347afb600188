package discovery_test

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

var tailReport = flag.Bool("discovery.tail", false, "print the per-query CPU time of each public set and its slowest queries")

// TestQueryTail prints, with -discovery.tail, the CPU time (of the
// query's thread) of every answerable query of the public sets through
// the default Discoverer, top 5, a principal that sees every tool: a run
// right after 16 MiB of other memory was written (the processor's caches
// emptied, as another engine's queries or a garbage collection leave them
// in the bench module) and the least of four more runs (what the query
// itself costs, a shared machine's interruptions left out); each set's
// p50 and p99, and its slowest queries by the least:
//
//	go test ./tools/discovery -run TestQueryTail -discovery.tail -v
func TestQueryTail(t *testing.T) {
	if !*tailReport {
		t.Skip("run with -discovery.tail")
	}
	sets := []dataset{publicDataset(t, "metatool", 2000), publicDataset(t, "bfcl", 0), publicDataset(t, "apibank", 0), realMCP(t)}
	ctx := context.Background()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	flush := make([]byte, 16<<20)
	//testlint:rows a report printed set after set, on the one locked thread whose CPU clock it reads
	for _, ds := range sets {
		d := newDiscoverer(t, nil)
		view := ds.snap.Authorize(tools.Principal{ID: "b", Tenant: "b"})
		if _, err := d.Index(ctx, ds.snap); err != nil {
			t.Fatal(err)
		}
		type run struct {
			query       string
			cold, least time.Duration
		}
		var runs []run
		var sl discovery.Shortlist
		for _, q := range ds.queries {
			if len(q.Relevant) == 0 {
				continue
			}
			r := run{query: q.Query, least: time.Hour}
			for i := range 5 {
				if i == 0 {
					for j := range flush {
						flush[j]++
					}
				}
				cpu0 := threadCPU()
				if err := d.ShortlistTo(ctx, view, discovery.Request{Query: q.Query, K: 5}, &sl); err != nil {
					t.Fatal(err)
				}
				c := threadCPU() - cpu0
				if i == 0 {
					r.cold = c
				} else {
					r.least = min(r.least, c)
				}
			}
			runs = append(runs, r)
		}
		if len(runs) == 0 {
			t.Fatalf("%s: no answerable query", ds.name)
		}
		pct := func(by func(run) time.Duration) (float64, float64) {
			v := make([]time.Duration, len(runs))
			for i, r := range runs {
				v[i] = by(r)
			}
			slices.Sort(v)
			return us(v[len(v)/2]), us(v[min(len(v)-1, len(v)*99/100)])
		}
		c50, c99 := pct(func(r run) time.Duration { return r.cold })
		l50, l99 := pct(func(r run) time.Duration { return r.least })
		fmt.Printf("%s (%d queries), p50 / p99 µs: caches emptied %.1f / %.1f; least of 4 %.1f / %.1f\n", ds.name, len(runs), c50, c99, l50, l99)
		slices.SortFunc(runs, func(a, b run) int { return int(b.least - a.least) })
		for _, r := range runs[:min(3, len(runs))] {
			q := r.query
			if len(q) > 90 {
				q = q[:90] + "…"
			}
			fmt.Printf("  %.1f µs %q\n", us(r.least), q)
		}
	}
}
