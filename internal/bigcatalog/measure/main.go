// Command measure times what a big catalog costs discovery: loading the
// catalog file, then building the index (or reading it from an index
// file) and answering a first query, with the CPU time of that and the
// heap it used:
//
//	go run ./internal/bigcatalog/gen -n 100000 -o /tmp/big.jsonl examples/transfer/catalog/*.json
//	go run ./internal/bigcatalog/measure -catalog /tmp/big.jsonl -index /tmp/big.idx   # builds, writes
//	go run ./internal/bigcatalog/measure -catalog /tmp/big.jsonl -index /tmp/big.idx   # restart: reads
//
// CPU time is reported beside wall time: on a shared machine it is the
// steadier measure of the work done.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
	"github.com/toolgate/toolgate/tools/discovery"
)

var cpuProfile string

func main() {
	cat := flag.String("catalog", "", "catalog `file` (required)")
	idx := flag.String("index", "", "index `file` (none: build only)")
	query := flag.String("query", "create an issue on github", "the first query")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the index and first query to `file`")
	flag.Parse()
	cpuProfile = *profile
	if err := run(*cat, *idx, *query); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

// cpu is the process's CPU time, user and system.
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func run(path, idx, query string) error {
	if path == "" {
		return fmt.Errorf("-catalog is required")
	}
	t0, c0 := time.Now(), cpu()
	ts, err := catalog.LoadAll(path)
	if err != nil {
		return err
	}
	reg := tools.NewRegistry()
	if err := reg.Add(ts...); err != nil {
		return err
	}
	ts = nil
	snap := reg.Snapshot()
	fmt.Printf("catalog: %d tools loaded in %v (CPU %v)\n", snap.Len(), time.Since(t0).Round(time.Millisecond), (cpu() - c0).Round(time.Millisecond))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
		}
	}()
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	t1, c1 := time.Now(), cpu()
	d, err := discovery.New(nil)
	if err != nil {
		return err
	}
	_, rep, err := d.IndexFile(context.Background(), snap, idx, nil)
	if err != nil {
		return err
	}
	sl, err := d.Shortlist(context.Background(), snap.Authorize(tools.Principal{ID: "p", Tenant: "t"}), discovery.Request{Query: query})
	if err != nil {
		return err
	}
	wall, c := time.Since(t1), cpu()-c1
	pprof.StopCPUProfile()
	close(stop)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	first := "nothing"
	if len(sl.Candidates) > 0 {
		first = sl.Candidates[0].Tool.ID
	}
	fmt.Printf("index and first query: %v (CPU %v); %d cards reused, %d analysed; heap above the catalog: peak %d MiB, after %d MiB; first %s\n",
		wall.Round(time.Millisecond), c.Round(time.Millisecond), rep.Reused, rep.Analysed, (peak.Load()-base)>>20, (ms.HeapInuse-base)>>20, first)
	if rep.Warning != nil {
		fmt.Printf("warning: %v\n", rep.Warning)
	}
	runtime.KeepAlive(d)
	return nil
}
