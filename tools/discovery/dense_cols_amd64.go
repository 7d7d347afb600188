package discovery

import "golang.org/x/sys/cpu"

// hasAVX2 selects colDotsAVX2.
var hasAVX2 = cpu.X86.HasAVX2

// colDots adds, for each of the query's dimensions dims[k] in order,
// vals[k] times that column of cols to acc (see colDotsGo), eight cards
// per instruction where the processor has AVX2: VCVTDQ2PS, VMULPS and
// VADDPS round each lane as the scalar conversion, product and sum do, and
// no multiply-add is fused, so the sums are the same bits. len(acc) must
// be a multiple of 8 and at most stride, and every dims[k] a column of
// cols.
func colDots(acc []float32, cols []int8, stride int, dims []int32, vals []float32) {
	if !hasAVX2 || len(acc)%8 != 0 || len(acc) > stride || len(vals) < len(dims) {
		colDotsGo(acc, cols, stride, dims, vals)
		return
	}
	for _, d := range dims {
		if d < 0 || (int(d)+1)*stride > len(cols) {
			colDotsGo(acc, cols, stride, dims, vals) // panics as Go would
			return
		}
	}
	if len(acc) == 0 || len(dims) == 0 {
		return
	}
	colDotsAVX2(&acc[0], len(acc), &cols[0], stride, &dims[0], &vals[0], len(dims))
}

//go:noescape
func colDotsAVX2(acc *float32, n int, cols *int8, stride int, dims *int32, vals *float32, nd int)

// rowDots sets sums[i] to the dot product of the query (dims, vals) with
// card row rows[i] (see rowDotsGo), in assembly: with the eight sums, the
// query value and the eight row pointers all in registers, where the Go
// loop spilled two sums and three pointers to the stack and so chained
// the last sums' additions through memory (a fifth less time a pass). The
// products and sums are scalar SSE, rounded as Go's, in the same order.
func rowDots(rows *[8]*[fastDim]int8, dims []int32, vals []float32, sums *[8]float32) {
	if len(vals) < len(dims) {
		rowDotsGo(rows, dims, vals, sums) // panics as Go would
		return
	}
	if len(dims) == 0 {
		*sums = [8]float32{}
		return
	}
	rowDotsSSE(rows, &dims[0], &vals[0], len(dims), &int8Floats, sums)
}

//go:noescape
func rowDotsSSE(rows *[8]*[fastDim]int8, dims *int32, vals *float32, nd int, tab *[256]float32, sums *[8]float32)
