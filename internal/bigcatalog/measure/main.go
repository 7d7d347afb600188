// Command measure times what a big catalog costs discovery: loading the
// catalog file, then building the index (or reading it from an index
// file) and answering a first query, with the CPU time of each and the
// heap they used:
//
//	go run ./internal/bigcatalog/gen -n 100000 -o /tmp/big.jsonl examples/transfer/catalog/*.json
//	go run ./internal/bigcatalog/measure -catalog /tmp/big.jsonl -index /tmp/big.idx   # builds, writes
//	go run ./internal/bigcatalog/measure -catalog /tmp/big.jsonl -index /tmp/big.idx   # restart: reads
//
// With -index, the catalog is loaded as the CLI's --index loads it,
// through the catalog cache beside the index file (FILE.catalog).
//
// CPU time is reported beside wall time: on a shared machine it is the
// steadier measure of the work done. The heap peak is sampled every 10 ms
// from the start, so it is the whole run's: the catalog and the index.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/internal/cpuprofile"
	"github.com/toolgate/toolgate/internal/cputime"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
	"github.com/toolgate/toolgate/tools/discovery"
)

type options struct {
	catalog, index, query          string
	loadProfile, cpuProfile, alloc string
	loadOnly                       bool
}

func main() {
	var o options
	flag.StringVar(&o.catalog, "catalog", "", "catalog `file` (required)")
	flag.StringVar(&o.index, "index", "", "index `file` (none: build only)")
	flag.StringVar(&o.query, "query", "create an issue on github", "the first query")
	flag.StringVar(&o.loadProfile, "loadprofile", "", "write a CPU profile of the catalog load to `file`")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the index and first query to `file`")
	flag.StringVar(&o.alloc, "memprofile", "", "write a heap profile of the whole run (see -sample_index=alloc_space) to `file`")
	flag.BoolVar(&o.loadOnly, "load", false, "only load the catalog")
	flag.Parse()
	err := run(o)
	if err == nil && o.alloc != "" {
		err = writeAllocs(o.alloc)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

// heapPeak samples the heap in use until stop is called, and returns its
// largest value then.
func heapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak.Store(max(peak.Load(), m.HeapInuse))
			select {
			case <-quit:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(quit); <-done; return peak.Load() }
}

func heapNow() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func run(o options) error {
	if o.catalog == "" {
		return fmt.Errorf("-catalog is required")
	}
	peak := heapPeak()
	stopLoad, err := cpuprofile.Start(o.loadProfile)
	if err != nil {
		return err
	}
	t0, c0 := time.Now(), cputime.Process()
	// As the CLI loads it: with an index file, through the catalog cache
	// beside it.
	var files []catalog.File
	var from string
	reg := tools.NewRegistry()
	add := reg.Add
	if o.index != "" {
		var rep catalog.CacheReport
		files, rep, err = catalog.LoadFilesCached(o.index+".catalog", o.catalog)
		from = map[bool]string{true: " from the cache", false: " (cache missed)"}[rep.Hit]
		if rep.Hit {
			add = reg.Adopt // as the CLI does
		}
		if rep.Warning != nil {
			fmt.Println("warning:", rep.Warning)
		}
	} else {
		files, err = catalog.LoadFiles(o.catalog)
	}
	if err != nil {
		return err
	}
	if err := add(files[0].Tools...); err != nil {
		return err
	}
	files = nil
	snap := reg.Snapshot()
	loadWall, loadCPU := time.Since(t0), cputime.Process()-c0
	if err := stopLoad(); err != nil {
		return err
	}
	base := heapNow()
	fmt.Printf("catalog: %d tools loaded%s in %v (CPU %v); heap %d MiB\n", snap.Len(), from, loadWall.Round(time.Millisecond), loadCPU.Round(time.Millisecond), base>>20)
	if o.loadOnly {
		fmt.Printf("heap peak %d MiB\n", peak()>>20)
		return nil
	}
	stopIndex, err := cpuprofile.Start(o.cpuProfile)
	if err != nil {
		return err
	}
	t1, c1 := time.Now(), cputime.Process()
	d, err := discovery.New(nil)
	if err != nil {
		return err
	}
	_, rep, err := d.IndexFile(context.Background(), snap, o.index, nil)
	if err != nil {
		return err
	}
	sl, err := d.Shortlist(context.Background(), snap.Authorize(tools.Principal{ID: "p", Tenant: "t"}), discovery.Request{Query: o.query})
	if err != nil {
		return err
	}
	wall, c := time.Since(t1), cputime.Process()-c1
	if err := stopIndex(); err != nil {
		return err
	}
	top := peak()
	after := heapNow()
	first := "nothing"
	if len(sl.Candidates) > 0 {
		first = sl.Candidates[0].Tool.ID
	}
	fmt.Printf("index and first query: %v (CPU %v); %d cards reused, %d analysed; first %s\n",
		wall.Round(time.Millisecond), c.Round(time.Millisecond), rep.Reused, rep.Analysed, first)
	fmt.Printf("total: CPU %v; heap peak %d MiB, after %d MiB (index %d MiB)\n",
		(loadCPU + c).Round(time.Millisecond), top>>20, after>>20, (after-base)>>20)
	if rep.Warning != nil {
		fmt.Printf("warning: %v\n", rep.Warning)
	}
	runtime.KeepAlive(d)
	return nil
}

func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}
