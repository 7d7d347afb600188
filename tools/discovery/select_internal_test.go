package discovery

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSelectKeys checks that selectKeys moves exactly the n largest keys
// to the front, for orders that stress a quickselect (sorted either way,
// all scores equal, few distinct scores, random) and every n from none to
// more than there are.
func TestSelectKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	for _, tc := range []struct {
		name  string
		score func(i, size int) float32
	}{
		{"ascending", func(i, size int) float32 { return float32(i) }},
		{"descending", func(i, size int) float32 { return float32(size - i) }},
		{"equal", func(int, int) float32 { return 1 }},
		{"few values", func(int, int) float32 { return float32(r.IntN(4)) }},
		{"random", func(int, int) float32 { return r.Float32() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []int{0, 1, 2, 3, 17, 160, 1000} {
				keys := make([]lexKey, size)
				for i := range keys {
					keys[i] = newLexKey(uint32(i), tc.score(i, size))
				}
				want := slices.Clone(keys)
				slices.SortFunc(want, func(a, b lexKey) int { return cmpKeys(b, a) })
				for _, n := range []int{0, 1, 2, size / 2, size - 1, size, size + 1} {
					t.Run(fmt.Sprint(size, "/", n), func(t *testing.T) {
						got := slices.Clone(keys)
						k := selectKeys(got, n)
						if wantK := min(max(n, 0), size); k != wantK {
							t.Fatalf("selectKeys(%d keys, %d) = %d, want %d", size, n, k, wantK)
						}
						front := slices.Clone(got[:k])
						slices.SortFunc(front, func(a, b lexKey) int { return cmpKeys(b, a) })
						if !slices.Equal(front, want[:k]) {
							t.Fatalf("selectKeys(%d keys, %d) kept %v, want the largest %v", size, n, front, want[:k])
						}
						rest := slices.Clone(got)
						slices.SortFunc(rest, func(a, b lexKey) int { return cmpKeys(b, a) })
						if !slices.Equal(rest, want) {
							t.Fatalf("selectKeys(%d keys, %d) lost or duplicated keys", size, n)
						}
					})
				}
			}
		})
	}
}

func cmpKeys(a, b lexKey) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
