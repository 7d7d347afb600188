package discovery

import (
	"fmt"
	"math"
	"testing"

	"github.com/toolgate/toolgate/tools"
)

// TestFuseModelReadsOnlyTheView: the vectors of tools outside the view are
// never read. They are NaN here, and a NaN read would poison the
// normalisation of every score.
func TestFuseModelReadsOnlyTheView(t *testing.T) {
	reg := tools.NewRegistry()
	const n, dim = 40, 3
	for i := range n {
		scopes := []string{"a"}
		if i%3 == 0 {
			scopes = []string{"secret"}
		}
		if err := reg.Add(tools.Tool{ID: fmt.Sprintf("ns/t%d", i), Card: tools.Card{Name: fmt.Sprintf("t%d", i), Summary: "x", Scopes: scopes}}); err != nil {
			t.Fatal(err)
		}
	}
	snap := reg.Snapshot()
	view := snap.Authorize(tools.Principal{ID: "p", Tenant: "t", Scopes: []string{"a"}})
	c := &modelCatalog{dim: dim, rows: make([]float32, n*dim)}
	for i := range n {
		for d := range dim {
			c.rows[i*dim+d] = float32(i%7) / 7
			if !view.Allowed(i) {
				c.rows[i*dim+d] = float32(math.NaN())
			}
		}
	}
	q := []float32{1, 0, 0}
	for _, all := range []bool{true, false} {
		t.Run(fmt.Sprint("all=", all), func(t *testing.T) {
			var top []fusedScore
			for i := range n {
				if view.Allowed(i) && len(top) < 5 {
					top = append(top, fusedScore{doc: uint32(i), score: 1 / float64(i+1)})
				}
			}
			out, scores := fuseModel(c, view, q, top, 10, 0.5, all)
			if len(out) == 0 {
				t.Fatal("no candidates")
			}
			for i, f := range out {
				if !view.Allowed(int(f.doc)) || math.IsNaN(f.score) || math.IsNaN(scores[i]) {
					t.Errorf("candidate %d: doc %d, score %v, model %v: want an authorized tool with finite scores", i, f.doc, f.score, scores[i])
				}
			}
		})
	}
}
