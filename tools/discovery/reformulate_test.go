package discovery_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// TestReformulateThreshold prints, with -discovery.report, the rates that
// calibrate ReformulateBelow for a model-backed Reformulator (recorded in
// docs/benchmarks.md): for each threshold, the share of answerable queries
// that would pay a model call, the share of those whose top 5 missed (the
// calls that can help), the share of all top-5 misses caught, and the
// share of BFCL's irrelevance queries (no right tool) that would pay one.
func TestReformulateThreshold(t *testing.T) {
	if !*report {
		t.Skip("run with -discovery.report")
	}
	never := &discovery.Options{ReformulateBelow: -1}
	sets := []dataset{publicDataset(t, "metatool", 3000), publicDataset(t, "bfcl", 0), publicDataset(t, "apibank", 0), realMCP(t)}
	thresholds := []float64{0.1, 0.2, 0.3, 0.4, 0.5}
	var irrelevant []float64
	for _, ds := range sets {
		t.Run(ds.name, func(t *testing.T) {
			rep := evaluate(t, ds, never)
			if ds.name == "bfcl" {
				d := newDiscoverer(t, never)
				view := ds.snap.Authorize(tools.Principal{ID: "eval", Tenant: "eval", Scopes: ds.snap.Scopes()})
				for _, q := range ds.queries {
					if len(q.Relevant) > 0 {
						continue
					}
					sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: q.Query})
					if err != nil {
						t.Fatal(err)
					}
					irrelevant = append(irrelevant, sl.Confidence)
				}
			}
			misses := 0
			for _, qr := range rep.Details {
				if qr.Recall[2] < 1 {
					misses++
				}
			}
			for _, th := range thresholds {
				called, helped := 0, 0
				for _, qr := range rep.Details {
					if qr.Confidence < th {
						called++
						if qr.Recall[2] < 1 {
							helped++
						}
					}
				}
				fmt.Printf("%-9s below %.1f: model called for %.3f of %d queries; %.3f of those missed top-5; catches %.3f of %d misses\n",
					ds.name, th, float64(called)/float64(len(rep.Details)), len(rep.Details), ratio(helped, called), ratio(helped, misses), misses)
			}
		})
	}
	for _, th := range thresholds {
		n := 0
		for _, c := range irrelevant {
			if c < th {
				n++
			}
		}
		fmt.Printf("bfcl irrelevance below %.1f: model called for %.3f of %d queries\n", th, ratio(n, len(irrelevant)), len(irrelevant))
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
