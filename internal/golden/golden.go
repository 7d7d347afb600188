// Package golden compares what a test produced with a golden file under
// the package's testdata, and rewrites the file instead when the test
// binary runs with -update:
//
//	golden.Check(t, "testdata/messy.golden", out)
//
// and, after a deliberate change, go test ./PKG -update, then read the diff.
// Tests whose golden data is not one file (txtar transcripts) branch on
// [Update] themselves.
package golden

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files with the tests' output")

// Update reports whether the test binary runs with -update.
func Update() bool { return *update }

// Check compares got with the file at path, failing tb at the first line
// that differs; with -update it writes got to path instead. A missing file
// fails tb.
func Check(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range max(len(gl), len(wl)) {
		var g, w []byte
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if !bytes.Equal(g, w) {
			tb.Errorf("%s:%d = %q, want %q (run go test -update if the change is intended)", path, i+1, g, w)
			return
		}
	}
}
