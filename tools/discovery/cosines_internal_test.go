package discovery

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestCosinesSameSums checks that the dense re-scoring gives every card
// exactly the float32 sum of a plain loop over the query's dimensions, in
// order: for the default dimension row by row (cosinesFast, eight cards
// a pass, then four, then one by one) and column by column over the whole
// catalog (cosinesAll, with and without AVX2), and for another dimension.
func TestCosinesSameSums(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	avx2 := hasAVX2
	defer func() { hasAVX2 = avx2 }()
	for _, tt := range []struct {
		name       string
		dim        int
		cols, avx2 bool
	}{
		{"512 rows", fastDim, false, false},
		{"512 columns", fastDim, true, false},
		{"512 columns avx2", fastDim, true, true},
		{"256", 256, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.avx2 && !avx2 {
				t.Skip("no AVX2")
			}
			hasAVX2 = tt.avx2
			dim := tt.dim
			for row, cards := range []int{1, 3, 4, 7, 8, 13, 150} {
				t.Run(fmt.Sprint(row), func(t *testing.T) {
					x := &Index{dim: dim, rows: make([]int8, cards*dim), scales: make([]float32, cards)}
					for i := range x.rows {
						x.rows[i] = int8(r.IntN(256) - 128)
					}
					for i := range x.scales {
						x.scales[i] = r.Float32()
					}
					if tt.cols {
						x.setCols()
						if x.cols == nil {
							t.Fatal("no columns")
						}
					}
					var dims []int32
					var vals []float32
					for d := 0; d < dim; d++ {
						if r.IntN(3) == 0 {
							dims = append(dims, int32(d))
							vals = append(vals, r.Float32()*2-1)
						}
					}
					c := make([]scored, cards)
					for i := range c {
						c[i].doc = uint32(cards - 1 - i) // not in row order
					}
					x.cosines(dims, vals, c)
					for _, s := range c {
						row := x.rows[int(s.doc)*dim : int(s.doc+1)*dim]
						var sum float32
						for k, d := range dims {
							sum += float32(vals[k] * float32(row[d])) // rounded, never fused (as cosines)
						}
						if want := float64(sum * x.scales[s.doc]); s.score != want {
							t.Fatalf("dim %d, %d cards: card %d scored %v, want %v", dim, cards, s.doc, s.score, want)
						}
					}
				})
			}
		})
	}
}

// TestColDotsSameBits checks colDots (AVX2 where the processor has it)
// against colDotsGo bit for bit, over catalog widths that exercise the
// 32-card passes and the 8-card tail, and query values from subnormal to
// large, negative and positive.
func TestColDotsSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	vals := []float32{1e-40, -1e-40, 1.5e-38, 3e38, -3e38, 1, -1, 0.333333}
	for _, stride := range []int{8, 24, 32, 40, 64, 200, 1000} {
		t.Run(fmt.Sprint(stride), func(t *testing.T) {
			cols := make([]int8, fastDim*stride)
			for i := range cols {
				cols[i] = int8(r.IntN(256) - 128)
			}
			var dims []int32
			var vs []float32
			for d := 0; d < fastDim; d += 1 + r.IntN(4) {
				dims = append(dims, int32(d))
				if r.IntN(4) == 0 {
					vs = append(vs, vals[r.IntN(len(vals))])
				} else {
					vs = append(vs, r.Float32()*2-1)
				}
			}
			got, want := make([]float32, stride), make([]float32, stride)
			colDots(got, cols, stride, dims, vs)
			colDotsGo(want, cols, stride, dims, vs)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("card %d: %v (%#x), want %v (%#x)", i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		})
	}
}
