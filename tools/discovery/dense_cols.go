package discovery

import "sync"

// colsLimit bounds the catalogs whose card vectors the index also keeps
// column by column (Index.cols): up to 8,192 cards, 4 MiB.
const colsLimit = 8192

// setCols sets x.cols and x.colStride from x.rows when the vectors have
// the default embedder's dimension and the catalog is at most colsLimit
// cards: column d holds every card's quantised value at dimension d, the
// cards padded with zeros to a multiple of 8.
func (x *Index) setCols() {
	x.cols, x.colStride = nil, 0
	n := len(x.scales)
	if x.dim != fastDim || n == 0 || n > colsLimit {
		return
	}
	stride := (n + 7) &^ 7
	cols := make([]int8, fastDim*stride)
	for i := range n {
		row := (*[fastDim]int8)(x.rows[i*fastDim:])
		for d, q := range row {
			cols[d*stride+i] = q
		}
	}
	x.cols, x.colStride = cols, stride
}

// accPool holds the per-card sums of cosinesAll.
var accPool = sync.Pool{New: func() any { return new([]float32) }}

// cosinesAll is cosines computed for every card of the catalog at once,
// column by column: for each of the query's dimensions in order, every
// card's sum adds that dimension's product. Each card's float32 sum adds
// the same products in the same order as the row-by-row loops, so the
// scores are the same; the columns let a vector unit take eight cards per
// instruction (colDots).
func (x *Index) cosinesAll(dims []int32, vals []float32, c []scored) {
	p := accPool.Get().(*[]float32)
	acc := *p
	if cap(acc) < x.colStride {
		acc = make([]float32, x.colStride)
	}
	acc = acc[:x.colStride]
	clear(acc)
	colDots(acc, x.cols, x.colStride, dims, vals[:len(dims)])
	for j := range c {
		doc := c[j].doc
		c[j].score = float64(acc[doc] * x.scales[doc])
	}
	*p = acc
	accPool.Put(p)
}

// colDotsGo is colDots in Go: for each k in order, acc[i] +=
// vals[k]·cols[dims[k]·stride+i] for every i below len(acc).
func colDotsGo(acc []float32, cols []int8, stride int, dims []int32, vals []float32) {
	for k, d := range dims {
		v := vals[k]
		col := cols[int(d)*stride:][:len(acc)]
		for i, q := range col {
			acc[i] += float32(v * float32(q))
		}
	}
}
