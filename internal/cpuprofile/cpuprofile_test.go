package cpuprofile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStart checks a profile's start and stop: no path profiles nothing,
// a path gets a gzipped profile once stopped, and a path that cannot be
// created is an error before anything runs.
func TestStart(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, path string
		wantErr    bool
		wantFile   bool
	}{
		{"none", "", false, false},
		{"file", filepath.Join(dir, "cpu.prof"), false, true},
		{"no folder", filepath.Join(dir, "missing", "cpu.prof"), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stop, err := Start(tc.path)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Start(%q) = %v, want error %v", tc.path, err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if err := stop(); err != nil {
				t.Fatalf("stop() = %v, want nil", err)
			}
			if !tc.wantFile {
				return
			}
			b, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
				t.Errorf("profile starts %x, want a gzip stream (1f8b)", b[:min(2, len(b))])
			}
		})
	}
}
