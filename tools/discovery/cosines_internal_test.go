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
// a pass, the last two to seven padded to a pass, a last single card in
// Go) and column by column over the whole
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

// TestCosinesFastTail checks that cosinesFast scores the last cards of a
// pass of fewer than eight itself, padded, unless one card is left (which
// the loop after it scores for less), and that each tail card gets the
// very sum of a plain loop, whatever the rows padding its pass.
func TestCosinesFastTail(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 19))
	for _, tt := range []struct {
		cards, want int
	}{{1, 0}, {2, 2}, {3, 3}, {7, 7}, {8, 8}, {9, 8}, {13, 13}, {150, 150}} {
		t.Run(fmt.Sprint(tt.cards), func(t *testing.T) {
			x := &Index{dim: fastDim, rows: make([]int8, tt.cards*fastDim), scales: make([]float32, tt.cards)}
			for i := range x.rows {
				x.rows[i] = int8(r.IntN(256) - 128)
			}
			for i := range x.scales {
				x.scales[i] = r.Float32()
			}
			var dims []int32
			var vals []float32
			for d := 0; d < fastDim; d += 1 + r.IntN(5) {
				dims = append(dims, int32(d))
				vals = append(vals, r.Float32()*2-1)
			}
			c := make([]scored, tt.cards)
			for i := range c {
				c[i].doc = uint32(tt.cards - 1 - i)
			}
			if got := x.cosinesFast(dims, vals, c); got != tt.want {
				t.Fatalf("%d cards: cosinesFast scored %d, want %d", tt.cards, got, tt.want)
			}
			for _, s := range c[:tt.want] {
				row := x.row(s.doc)
				var sum float32
				for k, d := range dims {
					sum += float32(vals[k] * float32(row[d]))
				}
				if want := float64(sum * x.scales[s.doc]); s.score != want {
					t.Fatalf("%d cards: card %d scored %v, want %v", tt.cards, s.doc, s.score, want)
				}
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

// TestRowDotsSameBits checks rowDots (assembly on amd64) against rowDotsGo
// bit for bit, for queries of no dimension to every one, with values from
// subnormal to large, negative and positive.
func TestRowDotsSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	vals := []float32{1e-40, -1e-40, 1.5e-38, 3e38, -3e38, 1, -1, 0.333333}
	var rows [8]*[fastDim]int8
	for i := range rows {
		rows[i] = new([fastDim]int8)
		for d := range rows[i] {
			rows[i][d] = int8(r.IntN(256) - 128)
		}
	}
	for _, step := range []int{0, 1, 2, 5, 64} {
		t.Run(fmt.Sprint(step), func(t *testing.T) {
			var dims []int32
			var vs []float32
			for d := 0; step > 0 && d < fastDim; d += step + r.IntN(step) {
				dims = append(dims, int32(d))
				if r.IntN(4) == 0 {
					vs = append(vs, vals[r.IntN(len(vals))])
				} else {
					vs = append(vs, r.Float32()*2-1)
				}
			}
			got, want := [8]float32{1, 1, 1, 1, 1, 1, 1, 1}, [8]float32{}
			rowDots(&rows, dims, vs, &got)
			rowDotsGo(&rows, dims, vs, &want)
			var gotBits, wantBits [8]uint32
			for i := range got {
				gotBits[i], wantBits[i] = math.Float32bits(got[i]), math.Float32bits(want[i])
			}
			if gotBits != wantBits {
				t.Fatalf("rowDots = %v (%#x), want %v (%#x)", got, gotBits, want, wantBits)
			}
		})
	}
}

// BenchmarkCosinesRows measures the dense re-scoring of a wide catalog's
// candidates (150 of 2,600 cards, a query of about 200 dimensions) row by
// row, through rowDots and through rowDotsGo.
func BenchmarkCosinesRows(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 7))
	rows := make([]int8, 2600*fastDim)
	for i := range rows {
		rows[i] = int8(r.IntN(256) - 128)
	}
	var dims []int32
	var vals []float32
	for d := range fastDim {
		if r.IntN(5) < 2 {
			dims = append(dims, int32(d))
			vals = append(vals, r.Float32()*2-1)
		}
	}
	docs := make([]*[fastDim]int8, 152)
	for i := range docs {
		docs[i] = (*[fastDim]int8)(rows[r.IntN(2600)*fastDim:])
	}
	for _, bb := range []struct {
		name string
		dots func(*[8]*[fastDim]int8, []int32, []float32, *[8]float32)
	}{{"rowDots", rowDots}, {"rowDotsGo", rowDotsGo}} {
		b.Run(bb.name, func(b *testing.B) {
			var sums [8]float32
			for b.Loop() {
				for j := 0; j+8 <= len(docs); j += 8 {
					bb.dots((*[8]*[fastDim]int8)(docs[j:]), dims, vals, &sums)
				}
			}
		})
	}
}
