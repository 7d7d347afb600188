//go:build unix

package embedcache_test

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/toolgate/toolgate/tools/discovery/embedcache"
)

// TestNamedPipeIgnored: a named pipe where the cache's file should be is
// not read (an open of one with no writer blocked Open forever): Open
// warns, naming it, and starts empty.
func TestNamedPipeIgnored(t *testing.T) {
	dir := t.TempDir()
	path := embedcache.Path(dir, "m")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	var warnings []string
	c, err := embedcache.Open(dir, "m", func(s string) { warnings = append(warnings, s) })
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], path) || !strings.Contains(warnings[0], "not a regular file") {
		t.Fatalf("%d vectors, warnings %q; want none and one warning naming %s", c.Len(), warnings, path)
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe after: %v, %v", st, err)
	}
}
