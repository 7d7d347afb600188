package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errors []string
	fatal  bool
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errors = append(r.errors, strings.TrimSpace(f)) }
func (r *recorder) Fatalf(f string, a ...any) { r.fatal = true }
func (r *recorder) Fatal(a ...any)            { r.fatal = true }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		got         string
		fails, dies bool
	}{
		{"equal", "a\nb\n", false, false},
		{"a line differs", "a\nc\n", true, false},
		{"a line more", "a\nb\nc\n", true, false},
		{"a line less", "a\n", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			Check(r, path, []byte(tc.got))
			if fails := len(r.errors) > 0; fails != tc.fails || r.fatal != tc.dies {
				t.Errorf("Check(%q) failed = %v (%q), fatal = %v; want %v, %v", tc.got, fails, r.errors, r.fatal, tc.fails, tc.dies)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		r := &recorder{TB: t}
		Check(r, filepath.Join(t.TempDir(), "none.golden"), []byte("a"))
		if !r.fatal {
			t.Errorf("Check of a missing file did not fail the test")
		}
	})
}
