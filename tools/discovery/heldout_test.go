package discovery_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// heldout2TestSHA256 pins testdata/heldout2/queries/test.jsonl, the second
// held-out set's test split (twelve other npm servers, written blind on
// 2026-12-05), under the same rule.
const heldout2TestSHA256 = "c3ee8648d81ebb82d111d9900b9804f9bf8648550a9da3c4e765950d94985f36"

// heldout3TestSHA256 pins testdata/heldout3/queries/test.jsonl, the third
// held-out set's test split (nine other npm servers, written blind on
// 2026-12-06), under the same rule.
const heldout3TestSHA256 = "267bf0a9068921328fcc024669d9eddaa618c50b64d17757802e1264b40216ac"

// heldout4TestSHA256 pins testdata/heldout4/queries/test.jsonl, the fourth
// held-out set's test split (nine other npm servers, written blind on
// 2026-12-07), under the same rule.
const heldout4TestSHA256 = "0acb925a39740a3262d13b9b2463fddcd6a4d4f2995287e7142c5c94d15fe1b9"

func TestHeldoutTestSplitFrozen(t *testing.T) {
	for _, tc := range []struct{ set, sum string }{{"heldout", heldoutTestSHA256}, {"heldout2", heldout2TestSHA256}, {"heldout3", heldout3TestSHA256},
		{"heldout4", heldout4TestSHA256}} {
		t.Run(tc.set, func(t *testing.T) {
			name := filepath.Join("testdata", tc.set, "queries", "test.jsonl")
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(data)
			if got := hex.EncodeToString(sum[:]); got != tc.sum {
				t.Fatalf("%s has sha256 %s, want the frozen %s: the held-out test split must not change", name, got, tc.sum)
			}
		})
	}
}

// heldout loads the twelve held-out MCP catalogs (testdata/heldout) with
// one of its query splits, "dev" or "test".
func heldout(tb testing.TB, split string) dataset { return heldoutSet(tb, "heldout", split) }

// heldoutSet loads a held-out set, testdata/heldout or testdata/heldoutN,
// with one of its query splits.
func heldoutSet(tb testing.TB, set, split string) dataset {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", set, "catalogs", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no held-out catalogs in testdata/%s/catalogs (%v)", set, err)
	}
	return dataset{
		name:    set + "-" + split,
		snap:    catalogtest.Snapshot(tb, files...),
		queries: readQueries(tb, filepath.Join("testdata", set, "queries", split+".jsonl")),
	}
}

// TestHeldoutDevMisses prints, with -discovery.report, every request of the
// held-out sets' dev splits whose relevant tools are not all in the top 5, with
// its kind and language: the material for finding categories of misses.
// It never reads the test split.
func TestHeldoutDevMisses(t *testing.T) {
	if !*report {
		t.Skip("run with -discovery.report")
	}
	for _, set := range []string{"heldout", "heldout2", "heldout3", "heldout4"} {
		rep := evaluate(t, heldoutSet(t, set, "dev"), nil)
		fmt.Println(set + "-dev")
		printGroups(rep)
		for _, d := range rep.Details {
			if d.Recall[2] < 1 {
				fmt.Printf("MISS %s/%s %q want %v got %v\n", d.Query.Lang, d.Query.Kind, d.Query.Query, d.Query.Relevant, d.Returned)
			}
		}
	}
}

// TestHeldoutReport prints, with -discovery.report, recall on the held-out
// sets' splits by language and kind (totals only: no request of the test split
// is shown), alone and with the real MCP catalogs of examples/transfer as
// distractors.
func TestHeldoutReport(t *testing.T) {
	if !*report {
		t.Skip("run with -discovery.report")
	}
	for _, sp := range []struct{ set, split string }{
		{"heldout", "dev"}, {"heldout", "test"}, {"heldout2", "dev"}, {"heldout2", "test"},
		{"heldout3", "dev"}, {"heldout3", "test"}, {"heldout4", "dev"}, {"heldout4", "test"},
	} {
		ds := heldoutSet(t, sp.set, sp.split)
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
	set, _, _ := strings.Cut(ds.name, "-")
	files, _ := filepath.Glob(filepath.Join("testdata", set, "catalogs", "*.json"))
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
		set    string
		split  string
		r5     float64
		mrr    float64
		groups map[string]float64 // language or kind → R@5 floor
	}{
		// dev en and paraphrase lost one request when an English
		// phrase stopped adding the words of its multi-word synonyms
		// ("pull request" searched "merge"): 0.915 → 0.895, 0.962 → 0.948.
		// Irregular forms read as lemmas and a command no tool is named
		// by widened took MRR 0.765 → 0.769.
		// Words used in passing widened (passingWeight) took MRR 0.769 →
		// 0.774.
		{"heldout", "dev", 0.92, 0.77, map[string]float64{"en": 0.89, "es": 0.92, "pl": 0.96,
			"direct": 0.95, "multi-word": 0.81, "no-overlap": 0.80, "paraphrase": 0.94}},
		// test MRR 0.733 → 0.729 when a foreign request's function words
		// stopped being English terms (TermsBorrowed, chosen on dev): a
		// Polish request had ranked its tool first by "na", two others
		// rose a place.
		// A request opened by a Polish or Spanish function word read in
		// that language (foreignLang) took it to 0.885, MRR 0.7396.
		// A particle standing as a preposition dropped (prepositionWords,
		// chosen on dev) took MRR 0.753 → 0.748: "do deep research on
		// the state of …" had ranked its tool first by "on". Irregular
		// forms read as lemmas, nominal derivatives and a command no tool
		// is named by widened (chosen on dev) took MRR 0.748 → 0.759.
		{"heldout", "test", 0.88, 0.75, map[string]float64{"en": 0.88, "es": 0.93, "pl": 0.83,
			"direct": 1.00, "multi-word": 0.69, "no-overlap": 0.75, "paraphrase": 0.91}},
		// The second set. As recorded (5f47b1a) dev read 0.671 and test
		// 0.580; cognates (cognate.go) took them to 0.699 and 0.610, the
		// es/pl business vocabulary written after its dev misses to 0.764
		// and 0.630, and reading cue-less requests by their words
		// (foreignLang) to 0.773 and 0.640; SQL statements took dev to
		// 0.782, telephone numbers and list questions to 0.801, "a" as no
		// English cue to 0.810, a Polish question word opening a
		// request to 0.819, a particle standing as a preposition
		// dropped ("a pull request on github") to 0.838, irregular forms
		// read as lemmas with nominal derivatives ("paid": payment) to
		// 0.843, a command no tool is named by widened ("text": message)
		// to 0.852 (en 0.829, no-overlap 0.500, MRR 0.657).
		{"heldout2", "dev", 0.85, 0.65, map[string]float64{"en": 0.82, "es": 0.88, "pl": 0.84,
			"direct": 0.94, "multi-word": 0.92, "no-overlap": 0.50, "paraphrase": 0.96}},
		// An identifier's kind word in its place (idKind.standIn, chosen
		// on dev) moved one test request from multi-word (0.827 → 0.788)
		// to paraphrase (0.638 → 0.672); overall the same. Lemmas,
		// derivatives and widened commands (chosen on dev) left recall at
		// 0.640 and took MRR 0.513 → 0.516.
		// Words used in passing widened (passingWeight, chosen on dev)
		// took MRR 0.516 → 0.521.
		{"heldout2", "test", 0.63, 0.52, map[string]float64{"en": 0.56, "es": 0.64, "pl": 0.70,
			"direct": 1.00, "multi-word": 0.78, "no-overlap": 0.19, "paraphrase": 0.67}},
		// The third set. Blind, as recorded (5a284e3), the whole set
		// (175 requests) read 0.723 (en 0.750, es 0.723, pl 0.691;
		// direct 0.875, multi-word 0.500, no-overlap 0.278, paraphrase
		// 0.814; MRR 0.598) and dev 0.740 (MRR 0.683). Vocabulary of
		// boards, spreadsheet formatting, CI, bookkeeping and payroll,
		// written after reading its dev misses, took dev to 0.836 (MRR
		// 0.765); "schedule a meeting" read as creating one to 0.863
		// (MRR 0.773); "muéstrame los tableros" as asking for a list
		// (showList) to 0.877 (MRR 0.776); words used in passing widened
		// (passingWeight) to 0.884 (en 0.860, paraphrase 0.964); a
		// spreadsheet range read as the word "range" (idRange) took MRR
		// 0.779 → 0.785.
		{"heldout3", "dev", 0.88, 0.78, map[string]float64{"en": 0.86, "es": 0.86, "pl": 0.94,
			"direct": 0.89, "multi-word": 0.75, "no-overlap": 0.70, "paraphrase": 0.96}},
		// Blind (5a284e3) the test split read 0.711; after the dev
		// changes above, measured once, 0.750 (MRR 0.580). On 12-07,
		// after a spreadsheet range read as "range", the cognate rules
		// and the vocabulary chosen on the fourth set's dev split and
		// written for new product areas, measured once: 0.7696 (MRR
		// 0.583; pl 0.722 → 0.750, no-overlap 0.400 → 0.467).
		{"heldout3", "test", 0.76, 0.58, map[string]float64{"en": 0.79, "es": 0.75, "pl": 0.75,
			"direct": 0.94, "multi-word": 0.40, "no-overlap": 0.46, "paraphrase": 0.85}},
		// The fourth set, blind as recorded (895715e): nothing was
		// tuned on either split when these were measured; the whole set
		// (219 requests) read 0.683 (MRR 0.544).
		// Polish "-cja" in any case read as "-tion", and "z" as "s", in
		// cognates (chosen on dev) took dev to 0.695 (pl 0.600, MRR 0.572);
		// vocabulary of publishing, web analytics, image editing, muting
		// and bookkeeping questions written after its misses to 0.777
		// (MRR 0.629).
		{"heldout4", "dev", 0.77, 0.62, map[string]float64{"en": 0.79, "es": 0.85, "pl": 0.66,
			"direct": 0.98, "multi-word": 0.71, "no-overlap": 0.43, "paraphrase": 0.82}},
		// After the changes chosen on its dev split (above), measured
		// once: recall the same, MRR 0.534.
		{"heldout4", "test", 0.69, 0.53, map[string]float64{"en": 0.72, "es": 0.67, "pl": 0.68,
			"direct": 0.92, "multi-word": 0.77, "no-overlap": 0.23, "paraphrase": 0.74}},
	} {
		t.Run(tc.set+"/"+tc.split, func(t *testing.T) {
			rep := evaluate(t, heldoutSet(t, tc.set, tc.split), nil)
			t.Logf("%s-%s: %d queries R@1 %.3f R@5 %.3f MRR %.3f", tc.set, tc.split, rep.Queries, rep.RecallAt1, rep.RecallAt5, rep.MRR)
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
