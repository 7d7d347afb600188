package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes text to the file name in dir (a test's temporary
// directory), readable by its owner only, and returns its path; an error
// fails the test.
func WriteFile(tb testing.TB, dir, name, text string) string {
	tb.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}
