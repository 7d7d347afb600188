package discovery_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/testenv"
)

// heldoutTestSHA256 pins testdata/heldout/queries/test.jsonl. The test split
// is never tuned on: no lexicon entry, weight or rule is chosen by reading
// its requests or its misses (testdata/heldout/README.md). If this fails the
// frozen split was edited; restore it. A new test split is a new file, a new
// pin and a new commit recorded in docs/discovery.md.
const heldoutTestSHA256 = "0ba60a0e87d3d4c4af1bcb57c2cf9caac79b21ce1d79f5db320f18c01df1a335"

func TestHeldoutTestSplitFrozen(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "heldout", "queries", "test.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != heldoutTestSHA256 {
		t.Fatalf("testdata/heldout/queries/test.jsonl has sha256 %s, want the frozen %s: the held-out test split must not change", got, heldoutTestSHA256)
	}
}

// heldout loads the twelve held-out MCP catalogs (testdata/heldout) with
// one of its query splits, "dev" or "test".
func heldout(tb testing.TB, split string) dataset {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "heldout", "catalogs", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no held-out catalogs in testdata/heldout/catalogs (%v)", err)
	}
	return dataset{
		name:    "heldout-" + split,
		snap:    catalogtest.Snapshot(tb, files...),
		queries: readQueries(tb, filepath.Join("testdata", "heldout", "queries", split+".jsonl")),
	}
}

// TestHeldoutDevMisses prints, with -discovery.report, every request of the
// held-out dev split whose relevant tools are not all in the top 5, with
// its kind and language: the material for finding categories of misses.
// It never reads the test split.
func TestHeldoutDevMisses(t *testing.T) {
	if !*report {
		t.Skip("run with -discovery.report")
	}
	rep := evaluate(t, heldout(t, "dev"), nil)
	printGroups(rep)
	for _, d := range rep.Details {
		if d.Recall[2] < 1 {
			fmt.Printf("MISS %s/%s %q want %v got %v\n", d.Query.Lang, d.Query.Kind, d.Query.Query, d.Query.Relevant, d.Returned)
		}
	}
}

// TestHeldoutReport prints, with -discovery.report, recall on both held-out
// splits by language and kind (totals only: no request of the test split
// is shown), alone and with the real MCP catalogs of examples/transfer as
// distractors.
func TestHeldoutReport(t *testing.T) {
	if !*report {
		t.Skip("run with -discovery.report")
	}
	for _, split := range []string{"dev", "test"} {
		ds := heldout(t, split)
		for _, mix := range []bool{false, true} {
			name := ds.name
			if mix {
				ds = withDistractors(t, ds)
				name += "+known"
			}
			rep := evaluate(t, ds, nil)
			fmt.Printf("%s (%d tools, %d queries): R@1 %.3f R@5 %.3f MRR %.3f p50 %.0fus p99 %.0fus\n", name, ds.snap.Len(), rep.Queries, rep.RecallAt1, rep.RecallAt5, rep.MRR, rep.P50us, rep.P99us)
			printGroups(rep)
		}
	}
}

// withDistractors returns ds with the real MCP catalogs of
// examples/transfer/catalog added to its snapshot.
func withDistractors(tb testing.TB, ds dataset) dataset {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "heldout", "catalogs", "*.json"))
	known, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(tb), "examples", "transfer", "catalog", "*.json"))
	if len(known) == 0 {
		tb.Fatal("no catalogs in examples/transfer/catalog")
	}
	ds.snap = catalogtest.Snapshot(tb, append(files, known...)...)
	return ds
}

// TestHeldoutFloors pins recall on the held-out splits at what the default
// Discoverer measured (truncated to two decimals, not rounded up) when the
// floors were set: overall, by language and by kind. The test split's
// floors are measurements, never targets tuned for.
func TestHeldoutFloors(t *testing.T) {
	if testing.Short() {
		t.Skip("dataset evaluation in -short mode")
	}
	for _, tc := range []struct {
		split  string
		r5     float64
		mrr    float64
		groups map[string]float64 // language or kind → R@5 floor
	}{
		// dev en and paraphrase lost one request when an English
		// phrase stopped adding the words of its multi-word synonyms
		// ("pull request" searched "merge"): 0.915 → 0.895, 0.962 → 0.948.
		{"dev", 0.92, 0.71, map[string]float64{"en": 0.89, "es": 0.92, "pl": 0.95,
			"direct": 0.95, "multi-word": 0.81, "no-overlap": 0.80, "paraphrase": 0.94}},
		{"test", 0.86, 0.70, map[string]float64{"en": 0.88, "es": 0.90, "pl": 0.80,
			"direct": 0.96, "multi-word": 0.69, "no-overlap": 0.68, "paraphrase": 0.91}},
	} {
		t.Run(tc.split, func(t *testing.T) {
			rep := evaluate(t, heldout(t, tc.split), nil)
			t.Logf("heldout-%s: %d queries R@1 %.3f R@5 %.3f MRR %.3f", tc.split, rep.Queries, rep.RecallAt1, rep.RecallAt5, rep.MRR)
			if rep.DeniedLeaks != 0 {
				t.Errorf("DeniedLeaks = %d, want 0", rep.DeniedLeaks)
			}
			if rep.RecallAt5 < tc.r5 || rep.MRR < tc.mrr {
				t.Errorf("R@5 %.3f MRR %.3f, want at least %.2f %.2f", rep.RecallAt5, rep.MRR, tc.r5, tc.mrr)
			}
			for name, floor := range tc.groups {
				g, ok := rep.ByLang[name]
				if !ok {
					g, ok = rep.ByKind[name]
				}
				if !ok {
					t.Errorf("no requests of language or kind %q", name)
					continue
				}
				if g.RecallAt5 < floor {
					t.Errorf("%s: R@5 %.3f, want at least %.2f", name, g.RecallAt5, floor)
				}
			}
		})
	}
}
