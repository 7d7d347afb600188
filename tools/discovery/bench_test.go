package discovery_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// syntheticCatalog grows the real MCP catalogs to n tools: copies of the
// 105 real tools in numbered namespaces, each name and description extended
// with words drawn from the real catalogs' vocabulary, so that postings and
// vectors have realistic lengths and overlaps. Deterministic.
func syntheticCatalog(tb testing.TB, n int) *tools.Snapshot {
	tb.Helper()
	real := realMCP(tb).snap.Tools()
	var vocab []string
	for _, t := range real {
		for _, w := range strings.Fields(t.Description) {
			if w = strings.Trim(strings.ToLower(w), ".,:;()'\"`"); len(w) > 3 {
				vocab = append(vocab, w)
			}
		}
	}
	r := rand.New(rand.NewPCG(7, 11))
	ts := make([]tools.Tool, 0, n)
	for i := 0; len(ts) < n; i++ {
		src := real[i%len(real)]
		t := *src
		name := fmt.Sprintf("%s_%s", src.Name(), vocab[r.IntN(len(vocab))])
		t.ID = fmt.Sprintf("s%d-%s/%s", i/len(real), src.Namespace(), name)
		t.Card.Name = name
		extra := make([]string, 4)
		for j := range extra {
			extra[j] = vocab[r.IntN(len(vocab))]
		}
		t.Description = src.Description + " " + strings.Join(extra, " ")
		t.Card.Summary = src.Card.Summary + " " + extra[0]
		if r.IntN(3) == 0 {
			t.Card.Scopes = []string{fmt.Sprintf("scope%d", r.IntN(8))}
		}
		ts = append(ts, t)
	}
	return catalogtest.Registry(tb, ts...).Snapshot()
}

var (
	benchMu    sync.Mutex
	benchSnaps = map[int]*tools.Snapshot{}
	benchDisc  = map[string]*discovery.Discoverer{}
)

func benchSetup(b *testing.B, n int, method discovery.Method) (*discovery.Discoverer, *tools.View) {
	benchMu.Lock()
	defer benchMu.Unlock()
	snap := benchSnaps[n]
	if snap == nil {
		snap = syntheticCatalog(b, n)
		benchSnaps[n] = snap
	}
	key := fmt.Sprint(n, method)
	d := benchDisc[key]
	if d == nil {
		d = newDiscoverer(b, &discovery.Options{Method: method})
		start := time.Now()
		x, err := d.Index(context.Background(), snap)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("index of %d tools (%v): built in %v, %d terms, %d postings, %d bytes (%d per card)",
			n, method, time.Since(start).Round(time.Millisecond), x.Stats().Terms, x.Stats().Postings, x.Stats().Bytes, x.Stats().Bytes/n)
		benchDisc[key] = d
	}
	// A principal holding half the scopes: some tools are filtered out.
	return d, snap.Authorize(tools.Principal{ID: "b", Tenant: "t", Scopes: []string{"scope0", "scope1", "scope2", "scope3"}})
}

// BenchmarkShortlist measures one query at a time over synthetic catalogs
// of 1,000 and 100,000 tools, cycling through the labeled real-MCP
// requests. Besides ns/op it reports the p50 and p99 of single queries.
func BenchmarkShortlist(b *testing.B) {
	qs := realMCP(b).queries
	for _, n := range []int{1000, 100000} {
		for _, m := range []struct {
			name   string
			method discovery.Method
		}{{"hybrid", discovery.MethodHybrid}, {"lexical", discovery.MethodLexical}} {
			b.Run(fmt.Sprintf("tools=%d/%s", n, m.name), func(b *testing.B) {
				d, view := benchSetup(b, n, m.method)
				ctx := context.Background()
				lat := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				// The machine is shared: CPU time of this thread is reported
				// beside wall time, as a steadier measure of the work done.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := threadCPU()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					q := qs[i%len(qs)]
					start := time.Now()
					if _, err := d.Shortlist(ctx, view, discovery.Request{Query: q.Query}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				b.ReportMetric(float64((threadCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()), "p99-µs")
			})
		}
	}
}

// threadCPU returns the CPU time (user+system) of the calling OS thread,
// to the nanosecond (CLOCK_THREAD_CPUTIME_ID; getrusage's RUSAGE_THREAD
// counts in scheduler ticks).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// BenchmarkShortlistRealMCP measures the default Discoverer over the 105
// real MCP tools (a principal that sees every tool), cycling through the
// 160 labeled requests: the workload of the bench module's "real MCP" row,
// through ShortlistTo with one reused Shortlist.
func BenchmarkShortlistRealMCP(b *testing.B) {
	ds := realMCP(b)
	d := newDiscoverer(b, nil)
	view := ds.snap.Authorize(tools.Principal{ID: "b", Tenant: "b"})
	ctx := context.Background()
	if _, err := d.Index(ctx, ds.snap); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var sl discovery.Shortlist
	i := 0
	cpu0 := threadCPU()
	for b.Loop() {
		q := ds.queries[i%len(ds.queries)]
		i++
		if err := d.ShortlistTo(ctx, view, discovery.Request{Query: q.Query}, &sl); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((threadCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}

// BenchmarkShortlistFirstPass measures what the bench module measures: each
// request seen once, by a Discoverer that has just indexed the catalog (its
// caches hold the cards' words, not the requests'). One op is one pass over
// the set's requests; cpu-µs/query is the CPU time per request.
func BenchmarkShortlistFirstPass(b *testing.B) {
	for _, ds := range []dataset{realMCP(b), publicDataset(b, "metatool", 400), publicDataset(b, "bfcl", 400)} {
		b.Run(ds.name, func(b *testing.B) {
			view := ds.snap.Authorize(tools.Principal{ID: "b", Tenant: "b"})
			ctx := context.Background()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var cpu time.Duration
			var sl discovery.Shortlist
			for b.Loop() {
				b.StopTimer()
				d := newDiscoverer(b, nil)
				if _, err := d.Index(ctx, ds.snap); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				cpu0 := threadCPU()
				for _, q := range ds.queries {
					if err := d.ShortlistTo(ctx, view, discovery.Request{Query: q.Query, K: 5}, &sl); err != nil {
						b.Fatal(err)
					}
				}
				cpu += threadCPU() - cpu0
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N*len(ds.queries)), "cpu-µs/query")
		})
	}
}

// BenchmarkShortlistSets measures single queries of each labeled set over
// its own catalog, lexical only and the default hybrid, cycling through
// its requests: cpu-µs/op, and the p50 and p99 of single queries (wall
// time, which a shared machine makes noisy; compare CPU first).
func BenchmarkShortlistSets(b *testing.B) {
	sets := []dataset{publicDataset(b, "metatool", 400), publicDataset(b, "bfcl", 400), publicDataset(b, "apibank", 0),
		realMCP(b), realMCPNatural(b), heldout(b, "dev")}
	for _, ds := range sets {
		for _, m := range []struct {
			name   string
			method discovery.Method
		}{{"lexical", discovery.MethodLexical}, {"hybrid", discovery.MethodHybrid}} {
			b.Run(ds.name+"/"+m.name, func(b *testing.B) {
				d := newDiscoverer(b, &discovery.Options{Method: m.method})
				view := ds.snap.Authorize(tools.Principal{ID: "b", Tenant: "b"})
				ctx := context.Background()
				if _, err := d.Index(ctx, ds.snap); err != nil {
					b.Fatal(err)
				}
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var sl discovery.Shortlist
				lat := make([]time.Duration, 0, 1024)
				i := 0
				cpu0 := threadCPU()
				for b.Loop() {
					q := ds.queries[i%len(ds.queries)]
					i++
					start := time.Now()
					if err := d.ShortlistTo(ctx, view, discovery.Request{Query: q.Query, K: 5}, &sl); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				b.ReportMetric(float64((threadCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
				b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Nanoseconds())/1e3, "p99-µs")
			})
		}
	}
}

// BenchmarkBuildCompanions measures what deriving the companions
// (companions.go) adds to an index build: BFCL's 2,573 tools and the
// synthetic catalog of 100,000.
func BenchmarkBuildCompanions(b *testing.B) {
	for _, ds := range []struct {
		name string
		snap func() *tools.Snapshot
	}{
		{"bfcl", func() *tools.Snapshot { return publicDataset(b, "bfcl", 1).snap }},
		{"synthetic-100000", func() *tools.Snapshot { return syntheticCatalog(b, 100000) }},
	} {
		b.Run(ds.name, func(b *testing.B) {
			snap := ds.snap()
			n := 0
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			for b.Loop() {
				n = discovery.BuildCompanions(snap)
			}
			b.ReportMetric(float64(n), "consumers")
			b.ReportMetric(float64((threadCPU()-cpu0).Nanoseconds())/1e3/float64(b.N*snap.Len()), "cpu-µs/tool")
		})
	}
}
