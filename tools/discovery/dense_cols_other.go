//go:build !amd64

package discovery

// colDots adds, for each of the query's dimensions dims[k] in order,
// vals[k] times that column of cols to acc (see colDotsGo).
func colDots(acc []float32, cols []int8, stride int, dims []int32, vals []float32) {
	colDotsGo(acc, cols, stride, dims, vals)
}

// hasAVX2 is false off amd64 (the tests switch the amd64 one).
var hasAVX2 = false

// rowDots sets sums[i] to the dot product of the query (dims, vals) with
// card row rows[i] (see rowDotsGo).
func rowDots(rows *[8]*[fastDim]int8, dims []int32, vals []float32, sums *[8]float32) {
	rowDotsGo(rows, dims, vals, sums)
}
