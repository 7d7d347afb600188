package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// CatalogTool is one tool of a real MCP catalog as its tools/list result
// lists it, with the catalog it comes from.
type CatalogTool struct {
	// Catalog is the catalog file's name without ".json", e.g. "github".
	Catalog     string          `json:"-"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// CatalogTools returns the tools of the [Catalogs], file by file in the
// order each lists them, read with plain encoding/json so that no
// toolgate parser stands between a test and the data. It fails the test
// on a catalog that cannot be read.
func CatalogTools(tb testing.TB) []CatalogTool {
	tb.Helper()
	var out []CatalogTool
	for _, f := range Catalogs(tb) {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var list struct {
			Tools []CatalogTool `json:"tools"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		stem := strings.TrimSuffix(filepath.Base(f), ".json")
		for _, t := range list.Tools {
			t.Catalog = stem
			out = append(out, t)
		}
	}
	return out
}
