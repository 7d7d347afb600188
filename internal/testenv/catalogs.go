package testenv

import (
	"path/filepath"
	"testing"
)

// Catalogs returns the paths of the real MCP catalogs committed with the
// transfer example (examples/transfer/catalog/*.json: the tools/list
// results of 8 public MCP servers), sorted, or fails the test when there
// are none.
func Catalogs(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(RepoRoot(tb), "examples", "transfer", "catalog", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no MCP catalogs under examples/transfer/catalog: %v", err)
	}
	return files
}
