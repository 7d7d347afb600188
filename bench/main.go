// Command bench compares toolgate's default Discoverer with two lexical
// baselines — SQLite FTS5 (BM25, porter stemming) and Bleve (English
// analyzer, a disjunction of match queries) — over the same tool text (name
// split on separators, description) and the same queries: recall@1/5, MRR
// and single-query latency per engine, then the ratios toolgate/Bleve and
// toolgate/FTS5. The engines take each query in turn (interleaved), and
// both the wall time and the thread CPU time of every query are kept, so
// that a shared machine's load falls on all engines alike. It is a nested
// module so that comparison-only dependencies stay out of the library's
// go.mod. With -cpuprofile FILE, each engine's queries are profiled under
// the label engine (and set): go tool pprof -tagfocus engine=toolgate
// shows where toolgate's CPU goes, index builds and the other engines left
// out.
//
//	cd bench && go run . -shared ../../shared
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toolgate/toolgate/internal/cpuprofile"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
	"github.com/toolgate/toolgate/tools/discovery"
)

func main() {
	shared := flag.String("shared", "../../shared", "the shared data folder")
	sample := flag.Int("sample", 0, "answerable queries per dataset (evenly spread); 0 = all")
	only := flag.String("engines", "", "comma-separated engines to run (toolgate is always run); empty = all")
	slowest := flag.Int("slowest", 0, "print this many of toolgate's slowest queries (CPU time) per set")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the queries to this file, each sample labelled with its engine and set (go tool pprof -tagfocus engine=toolgate)")
	block := flag.Int("block", 64, "queries an engine runs in a row before the next engine takes the same ones (1 = every query goes to each engine in turn)")
	flag.Parse()
	if *block < 1 {
		fmt.Fprintln(os.Stderr, "bench: -block must be at least 1")
		os.Exit(2)
	}
	stop, err := cpuprofile.Start(*profile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: -cpuprofile:", err)
		os.Exit(2)
	}
	err = run(*shared, *sample, *only, *block, *slowest)
	if serr := stop(); err == nil {
		err = serr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type set struct {
	name    string
	catalog []string
	queries string
}

// opened is one engine's search over the current set and its release.
type opened struct {
	name  string
	fn    search
	close func()
}

func run(shared string, sample int, only string, block, slowest int) error {
	realFiles, _ := filepath.Glob("../examples/transfer/catalog/*.json")
	sets := []set{
		{"metatool", []string{"metatool=" + filepath.Join(shared, "datasets/metatool/tools.jsonl")}, filepath.Join(shared, "datasets/metatool/queries.jsonl")},
		{"bfcl", []string{"bfcl=" + filepath.Join(shared, "datasets/bfcl/tools.jsonl")}, filepath.Join(shared, "datasets/bfcl/queries.jsonl")},
		{"apibank", []string{"apibank=" + filepath.Join(shared, "datasets/apibank/tools.jsonl")}, filepath.Join(shared, "datasets/apibank/queries.jsonl")},
		{"real-mcp", realFiles, "../testdata/queries/real-mcp.jsonl"},
	}
	chosen := engines
	if only != "" {
		chosen = nil
		for _, e := range engines {
			if e.name == "toolgate" || slices.Contains(strings.Split(only, ","), e.name) {
				chosen = append(chosen, e)
			}
		}
	}
	fmt.Println("| set | engine | queries | R@1 | R@5 | MRR | p50 µs | p99 µs | CPU p50 µs | CPU p99 µs |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
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
		var open []opened
		for _, e := range chosen {
			fn, closeFn, err := e.open(snap)
			if err != nil {
				for _, o := range open {
					o.close()
				}
				return fmt.Errorf("%s: %s: %w", s.name, e.name, err)
			}
			open = append(open, opened{e.name, fn, closeFn})
		}
		rs, err := score(s.name, answerable, open, block)
		for _, o := range open {
			o.close()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		byEngine := map[string]result{}
		for i, o := range open {
			r := rs[i]
			byEngine[o.name] = r
			fmt.Printf("| %s | %s | %d | %.3f | %.3f | %.3f | %.0f | %.0f | %.1f | %.1f |\n", s.name, o.name, len(answerable), r.r1, r.r5, r.mrr, r.p50, r.p99, r.cpu50, r.cpu99)
		}
		tg := byEngine["toolgate"]
		if slowest > 0 {
			order := make([]int, len(tg.cpu))
			for i := range order {
				order[i] = i
			}
			slices.SortFunc(order, func(a, b int) int { return cmp.Compare(tg.cpu[b], tg.cpu[a]) })
			for _, i := range order[:min(slowest, len(order))] {
				fmt.Fprintf(os.Stderr, "slow %s #%d %.1f µs CPU: %q\n", s.name, i, tg.cpu[i], answerable[i].Query)
			}
		}
		for _, o := range open[1:] {
			b := byEngine[o.name]
			ratios = append(ratios, fmt.Sprintf("| %s | toolgate / %s | ×%.2f | ×%.2f | ×%.2f | ÷%.1f | ÷%.1f | ÷%.1f | ÷%.1f |",
				s.name, o.name, tg.r1/b.r1, tg.r5/b.r5, tg.mrr/b.mrr, b.p50/tg.p50, b.p99/tg.p99, b.cpu50/tg.cpu50, b.cpu99/tg.cpu99))
		}
	}
	fmt.Println()
	fmt.Println("| set | ratio | R@1 | R@5 | MRR | p50 latency | p99 latency | p50 CPU | p99 CPU |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range ratios {
		fmt.Println(r)
	}
	return nil
}

// result is one engine's quality and latency over a set: wall-clock and
// CPU time (of the thread that ran the query) per single query, in µs.
type result struct {
	r1, r5, mrr, p50, p99, cpu50, cpu99 float64
	cpu                                 []float64 // per query, in the set's order
}

// score runs every query through every engine, interleaved in blocks: one
// engine runs a block of queries, then the next engine the same block, the
// first engine rotating from block to block, so that the load of a shared
// machine falls on all engines alike while each runs warm, as it would
// alone. A block of 1 sends each query to every engine in turn, so that
// each engine's caches are cold for every query. Each query's wall time
// and its thread's CPU time are kept; the goroutine stays on one OS thread
// so that the CPU clock is the query's. Each block runs under the profiler
// labels engine and set, so that -cpuprofile tells the engines' queries
// apart from each other and from the index builds.
func score(set string, qs []discovery.Query, es []opened, block int) ([]result, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rs := make([]result, len(es))
	lat := make([][]float64, len(es))
	cpu := make([][]float64, len(es))
	for b := 0; b < len(qs); b += block {
		for j := range es {
			e := (b/block + j) % len(es)
			var err error
			pprof.Do(context.Background(), pprof.Labels("engine", es[e].name, "set", set), func(context.Context) {
				for _, q := range qs[b:min(b+block, len(qs))] {
					if err = one(q, es[e], &rs[e], &lat[e], &cpu[e]); err != nil {
						return
					}
				}
			})
			if err != nil {
				return nil, err
			}
		}
	}
	n := float64(len(qs))
	for e := range es {
		r := &rs[e]
		r.r1, r.r5, r.mrr = r.r1/n, r.r5/n, r.mrr/n
		r.cpu = slices.Clone(cpu[e])
		r.p50, r.p99 = percentiles(lat[e])
		r.cpu50, r.cpu99 = percentiles(cpu[e])
	}
	return rs, nil
}

// one runs query q through engine e, adds its recall and reciprocal rank
// to r and its wall and CPU time (µs) to lat and cpu.
func one(q discovery.Query, e opened, r *result, lat, cpu *[]float64) error {
	c0 := threadCPU()
	start := time.Now()
	got, err := e.fn(q.Query)
	wall := time.Since(start)
	c1 := threadCPU()
	if err != nil {
		return fmt.Errorf("%s: %w", e.name, err)
	}
	*lat = append(*lat, float64(wall.Nanoseconds())/1e3)
	*cpu = append(*cpu, float64((c1-c0).Nanoseconds())/1e3)
	match := func(entry, id string) bool {
		if entry == id {
			return true
		}
		_, name, _ := strings.Cut(id, "/")
		return name == entry
	}
	hits := func(k int) float64 {
		n := 0
		for _, want := range q.Relevant {
			for _, id := range got[:min(k, len(got))] {
				if match(want, id) {
					n++
					break
				}
			}
		}
		return float64(n) / float64(len(q.Relevant))
	}
	r.r1 += hits(1)
	r.r5 += hits(5)
	for i, id := range got {
		for _, want := range q.Relevant {
			if match(want, id) {
				r.mrr += 1 / float64(i+1)
				return nil
			}
		}
	}
	return nil
}

// percentiles returns the median and the 99th percentile of v (sorted in place).
func percentiles(v []float64) (p50, p99 float64) {
	sort.Float64s(v)
	return v[len(v)/2], v[min(len(v)-1, len(v)*99/100)]
}

// threadCPU returns the CPU time the calling OS thread has used
// (CLOCK_THREAD_CPUTIME_ID, nanosecond resolution).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
