package discovery_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/internal/cputime"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// indexBenchSizes are the catalog sizes of the build and restart
// benchmarks; internal/bigcatalog/measure does 100,000 from a catalog file.
var indexBenchSizes = []int{10000}

// BenchmarkIndexBuild builds the index of a synthetic catalog from
// nothing, with a new Discoverer each time (every card analysed and
// embedded): what a first start costs. cpu-ms/op is the process's CPU
// time, steadier than ns/op on a shared machine.
func BenchmarkIndexBuild(b *testing.B) {
	for _, n := range indexBenchSizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			snap := syntheticCatalog(b, n)
			ctx := context.Background()
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				d := newDiscoverer(b, nil)
				if _, err := d.Index(ctx, snap); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cputime.Process()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkIndexRestart is a restart from an index file: a new
// Discoverer reads the file written for the same catalog, rebuilds the
// postings from it and answers a first query.
func BenchmarkIndexRestart(b *testing.B) {
	for _, n := range indexBenchSizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			snap := syntheticCatalog(b, n)
			view := snap.Authorize(tools.Principal{ID: "b", Tenant: "t"})
			ctx := context.Background()
			path := filepath.Join(b.TempDir(), "index")
			if _, _, err := newDiscoverer(b, nil).IndexFile(ctx, snap, path, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				d := newDiscoverer(b, nil)
				_, rep, err := d.IndexFile(ctx, snap, path, nil)
				if err != nil || rep.Warning != nil || rep.Analysed != 0 {
					b.Fatalf("IndexFile = %+v, %v: the file was not used", rep, err)
				}
				if _, err := d.Shortlist(ctx, view, discovery.Request{Query: "create an issue on github"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cputime.Process()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}
