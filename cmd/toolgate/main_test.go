package main

import (
	"runtime/debug"
	"testing"
)

// TestSetGCPercent: the program lowers the GC's target when GOGC is not
// set, and leaves the one GOGC gives.
func TestSetGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	setGCPercent(func(string) string { return "" })
	if got := debug.SetGCPercent(77); got != gcPercent {
		t.Errorf("without GOGC the GC percent is %d, want %d", got, gcPercent)
	}
	setGCPercent(func(k string) string {
		if k == "GOGC" {
			return "77"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 77 {
		t.Errorf("with GOGC=77 the GC percent is %d, want 77", got)
	}
}
