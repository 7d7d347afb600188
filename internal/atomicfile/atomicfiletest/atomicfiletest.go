// Package atomicfiletest gives the tests of the readers of toolgate's own
// files (the index file, the catalog cache, the embedding cache) the
// paths that name no regular file, which
// [github.com/toolgate/toolgate/internal/atomicfile.Open] refuses and
// [github.com/toolgate/toolgate/internal/atomicfile.Write] leaves alone.
package atomicfiletest

import (
	"os"
	"path/filepath"
	"testing"
)

// Path is a path that names no regular file, and what it names.
type Path struct {
	Name, Path string
}

// NotFiles returns, under a temporary folder, a named pipe with no
// writer (where the platform has them), the null device and a folder.
func NotFiles(tb testing.TB) []Path {
	tb.Helper()
	dir := tb.TempDir()
	var out []Path
	fifo := filepath.Join(dir, "pipe")
	if mkfifo(fifo) == nil {
		out = append(out, Path{"named pipe", fifo})
	}
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o755); err != nil {
		tb.Fatal(err)
	}
	return append(out, Path{"device", os.DevNull}, Path{"folder", folder})
}
