//go:build unix

package cputime

import "testing"

// TestProcessCountsWork: the CPU time grows while the process computes,
// and never goes back.
func TestProcessCountsWork(t *testing.T) {
	t0 := Process()
	if t0 <= 0 {
		t.Fatalf("Process() = %v at the start of a test, want > 0", t0)
	}
	sum := 0
	for i := 1; ; i++ {
		sum += i * i
		if i%1000 != 0 {
			continue
		}
		t1 := Process()
		if t1 < t0 {
			t.Fatalf("Process() went back from %v to %v", t0, t1)
		}
		if t1 > t0 {
			return
		}
		if i == 1e9 {
			t.Fatalf("Process() stayed at %v through %d iterations (sum %d)", t0, i, sum)
		}
	}
}
