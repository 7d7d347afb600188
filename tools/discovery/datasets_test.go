package discovery_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

var report = flag.Bool("discovery.report", false, "print the ablation and calibration tables over the full datasets")

// dataset is a labeled retrieval set: a snapshot and its queries.
type dataset struct {
	name    string
	snap    *tools.Snapshot
	queries []discovery.Query
}

func readQueries(tb testing.TB, path string) []discovery.Query {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	qs, err := discovery.ReadQueries(f, path)
	if err != nil {
		tb.Fatal(err)
	}
	return qs
}

// publicDataset loads ../shared/datasets/<name>. sample > 0 keeps a fixed,
// evenly spread sample of that many queries (every n-th), so that a test
// sees every subset of a big set.
func publicDataset(tb testing.TB, name string, sample int) dataset {
	tb.Helper()
	dir := testenv.Shared(tb, filepath.Join("datasets", name))
	ds := dataset{name: name, snap: catalogtest.Snapshot(tb, name+"="+filepath.Join(dir, "tools.jsonl"))}
	ds.queries = discovery.SampleQueries(readQueries(tb, filepath.Join(dir, "queries.jsonl")), sample)
	return ds
}

// realMCP loads the real MCP catalogs committed in examples/transfer and
// our labeled queries for them.
func realMCP(tb testing.TB) dataset { return realMCPSet(tb, "real-mcp", "real-mcp.jsonl") }

// realMCPNatural is realMCP with our second labeled set: requests as
// people talk to an assistant (verbs that mean an action only in context,
// objects named by their purpose), written before any was run.
func realMCPNatural(tb testing.TB) dataset {
	return realMCPSet(tb, "real-mcp-natural", "real-mcp-natural.jsonl")
}

func realMCPSet(tb testing.TB, name, queries string) dataset {
	tb.Helper()
	root := testenv.RepoRoot(tb)
	files, _ := filepath.Glob(filepath.Join(root, "examples/transfer/catalog/*.json"))
	if len(files) == 0 {
		tb.Fatal("no catalogs in examples/transfer/catalog")
	}
	return dataset{name: name, snap: catalogtest.Snapshot(tb, files...), queries: readQueries(tb, filepath.Join(root, "testdata/queries", queries))}
}

func evaluate(tb testing.TB, ds dataset, opts *discovery.Options) *discovery.Report {
	tb.Helper()
	d, err := discovery.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	rep, err := discovery.Evaluate(context.Background(), d, ds.snap, ds.queries, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// reportSets loads the five labeled sets, or those DISCOVERY_REPORT_SETS
// names.
func reportSets(t *testing.T) []dataset {
	sets := []dataset{publicDataset(t, "metatool", 0), publicDataset(t, "bfcl", 0), publicDataset(t, "apibank", 0), realMCP(t), realMCPNatural(t)}
	if only := os.Getenv("DISCOVERY_REPORT_SETS"); only != "" {
		var keep []dataset
		for _, ds := range sets {
			if strings.Contains(only, ds.name) {
				keep = append(keep, ds)
			}
		}
		sets = keep
	}
	return sets
}

// TestReport prints, with -discovery.report, the numbers recorded in
// docs/benchmarks.md: every method and fusion on every dataset, and the
// confidence calibration of the default.
func TestReport(t *testing.T) {
	if !*report {
		t.Skip("run with -discovery.report")
	}
	sets := reportSets(t)
	methods := []struct {
		name string
		opts discovery.Options
	}{
		{"bm25 name+description (baseline)", discovery.Options{Method: discovery.MethodBM25}},
		{"bm25f lexical", discovery.Options{Method: discovery.MethodLexical}},
		{"dense", discovery.Options{Method: discovery.MethodDense}},
		{"hybrid rrf", discovery.Options{Fusion: discovery.FusionRRF}},
		{"hybrid score (default)", discovery.Options{}},
	}
	for _, ds := range sets {
		fmt.Printf("\n%s (%d tools, %d queries)\n", ds.name, ds.snap.Len(), len(ds.queries))
		fmt.Printf("| method | R@1 | R@3 | R@5 | MRR |\n|---|---|---|---|---|\n")
		for _, m := range methods {
			o := m.opts
			rep := evaluate(t, ds, &o)
			fmt.Printf("| %s | %.3f | %.3f | %.3f | %.3f |\n", m.name, rep.RecallAt1, rep.RecallAt3, rep.RecallAt5, rep.MRR)
			if m.name == "hybrid score (default)" {
				printCalibration(rep)
				printGroups(rep)
				printMisses(rep, os.Getenv("DISCOVERY_MISSES"))
				printTokens(rep)
				if ds.name == "bfcl" {
					printVariantGrouped(rep)
				}
			}
		}
	}
}

func printCalibration(rep *discovery.Report) {
	var n, right [10]int
	for _, d := range rep.Details {
		b := min(int(d.Confidence*10), 9)
		n[b]++
		if d.Recall[0] > 0 {
			right[b]++
		}
	}
	fmt.Printf("calibration: confidence bucket → queries, top-1 right\n")
	for b := range n {
		if n[b] > 0 {
			fmt.Printf("  [%.1f,%.1f) %6d  %.3f\n", float64(b)/10, float64(b+1)/10, n[b], float64(right[b])/float64(n[b]))
		}
	}
}

func printGroups(rep *discovery.Report) {
	for _, g := range []map[string]discovery.Group{rep.ByKind, rep.ByLang} {
		keys := make([]string, 0, len(g))
		for k := range g {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Printf("  %-24s %5d  R@5 %.3f  MRR %.3f\n", k, g[k].Queries, g[k].RecallAt5, g[k].MRR)
		}
	}
}

func printMisses(rep *discovery.Report, n string) {
	var every int
	fmt.Sscan(n, &every)
	if every <= 0 {
		return
	}
	for i, d := range rep.Details {
		if d.Recall[2] < 1 && i%every == 0 {
			q := d.Query.Query
			if len(q) > 160 {
				q = q[:160]
			}
			fmt.Printf("MISS %q want %v got %v\n", q, d.Query.Relevant, d.Returned)
		}
	}
}

// TestSweep prints recall for a few fusion weights (with -discovery.report).
func TestSweep(t *testing.T) {
	if !*report || os.Getenv("DISCOVERY_SWEEP") == "" {
		t.Skip("run with -discovery.report and DISCOVERY_SWEEP=1")
	}
	sets := []dataset{publicDataset(t, "metatool", 3000), publicDataset(t, "bfcl", 0), publicDataset(t, "apibank", 0), realMCP(t), realMCPNatural(t)}
	for _, w := range []float64{0.5, 0.7, 0.8, 0.9, 1} {
		fmt.Printf("w=%.1f", w)
		for _, ds := range sets {
			rep := evaluate(t, ds, &discovery.Options{LexicalWeight: w, ReformulateBelow: -1})
			fmt.Printf("  %s R@5 %.3f MRR %.3f", ds.name, rep.RecallAt5, rep.MRR)
		}
		fmt.Println()
	}
}

// TestTune sweeps one ranking constant at a time over the datasets (with
// -discovery.report and DISCOVERY_TUNE=name=v1,v2,...;name2=...). The
// objective is the mean recall@5 over the sets, never a single query.
func TestTune(t *testing.T) {
	spec := os.Getenv("DISCOVERY_TUNE")
	if !*report || spec == "" {
		t.Skip("run with -discovery.report and DISCOVERY_TUNE")
	}
	// The held-out sets' dev splits are tuned on; their test splits never are.
	sets := []dataset{publicDataset(t, "metatool", 3000), publicDataset(t, "bfcl", 0), publicDataset(t, "apibank", 0), realMCP(t), realMCPNatural(t), heldout(t, "dev"), heldoutSet(t, "heldout2", "dev"), heldoutSet(t, "heldout3", "dev")}
	run := func(label string) {
		var sum float64
		fmt.Printf("%-22s", label)
		for _, ds := range sets {
			reform := -1.0
			fmt.Sscan(os.Getenv("DISCOVERY_REFORM"), &reform)
			var exact, rerank int
			fmt.Sscan(os.Getenv("DISCOVERY_EXACT"), &exact)
			fmt.Sscan(os.Getenv("DISCOVERY_RERANK"), &rerank)
			rep := evaluate(t, ds, &discovery.Options{ReformulateBelow: reform, DenseExactLimit: exact, DenseRerank: rerank})
			sum += rep.RecallAt5
			fmt.Printf("  %s %.3f/%.3f", ds.name, rep.RecallAt5, rep.MRR)
		}
		fmt.Printf("  mean R@5 %.4f\n", sum/float64(len(sets)))
	}
	run("current")
	for _, part := range strings.Split(spec, ";") {
		name, vals, _ := strings.Cut(part, "=")
		for _, v := range strings.Split(vals, ",") {
			var f float64
			fmt.Sscan(v, &f)
			restore := discovery.SetTuning(name, f)
			run(name + "=" + v)
			restore()
		}
	}
}

// TestCalibrate fits a Platt scaling (y ≈ σ(a·logit(conf)+c)) of the
// confidence to whether the top-1 candidate is right, pooled over the
// datasets (with -discovery.report and DISCOVERY_CALIBRATE=1).
func TestCalibrate(t *testing.T) {
	if !*report || os.Getenv("DISCOVERY_CALIBRATE") == "" {
		t.Skip("run with -discovery.report and DISCOVERY_CALIBRATE=1")
	}
	var zs, ys []float64
	for _, ds := range []dataset{publicDataset(t, "metatool", 3000), publicDataset(t, "bfcl", 0), publicDataset(t, "apibank", 0)} {
		rep := evaluate(t, ds, &discovery.Options{ReformulateBelow: -1})
		for _, d := range rep.Details {
			c := math.Min(math.Max(d.Confidence, 1e-6), 1-1e-6)
			zs = append(zs, math.Log(c/(1-c)))
			y := 0.0
			if d.Recall[0] > 0 {
				y = 1
			}
			ys = append(ys, y)
		}
	}
	a, c := 1.0, 0.0
	for range 2000 {
		var ga, gc float64
		for i, z := range zs {
			p := 1 / (1 + math.Exp(-(a*z + c)))
			ga += (p - ys[i]) * z
			gc += p - ys[i]
		}
		n := float64(len(zs))
		a -= 0.5 * ga / n
		c -= 0.5 * gc / n
	}
	fmt.Printf("platt a=%.4f c=%.4f over %d queries\n", a, c, len(zs))
}

func printTokens(rep *discovery.Report) {
	var ts []int
	for _, d := range rep.Details {
		ts = append(ts, d.Tokens)
	}
	if len(ts) == 0 {
		return
	}
	sort.Ints(ts)
	at := func(p float64) int { return ts[min(len(ts)-1, int(p*float64(len(ts))))] }
	fmt.Printf("shortlist tokens (k=%d): min %d p50 %d p90 %d p99 %d max %d; whole authorized catalog %d\n",
		rep.K, ts[0], at(0.5), at(0.9), at(0.99), ts[len(ts)-1], rep.Details[0].Catalog)
}

// printVariantGrouped recomputes recall for BFCL counting a returned tool
// as right when it is a variant of a relevant one: the pooled corpus
// renames same-name functions with different descriptions to NAME__N, and
// those variants are the same API described in other words.
func printVariantGrouped(rep *discovery.Report) {
	base := func(name string) string {
		if i := strings.Index(name, "/"); i >= 0 {
			name = name[i+1:]
		}
		if i := strings.LastIndex(name, "__"); i > 0 {
			name = name[:i]
		}
		return name
	}
	var r1, r5, mrr float64
	for _, d := range rep.Details {
		want := map[string]bool{}
		for _, r := range d.Query.Relevant {
			want[base(r)] = true
		}
		at := func(k int) float64 {
			hit := map[string]bool{}
			for _, id := range d.Returned[:min(k, len(d.Returned))] {
				if want[base(id)] {
					hit[base(id)] = true
				}
			}
			return float64(len(hit)) / float64(len(want))
		}
		r1 += at(1)
		r5 += at(5)
		for i, id := range d.Returned {
			if want[base(id)] {
				mrr += 1 / float64(i+1)
				break
			}
		}
	}
	n := float64(len(rep.Details))
	fmt.Printf("variants grouped (NAME__N = NAME): R@1 %.3f R@5 %.3f MRR %.3f\n", r1/n, r5/n, mrr/n)
}
