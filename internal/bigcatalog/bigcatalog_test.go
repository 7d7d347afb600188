package bigcatalog_test

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/toolgate/toolgate/internal/bigcatalog"
	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools/catalog"
)

// TestGenerate checks that a generated catalog is the same every time,
// that every tool is valid and unique in a registry, and that the JSON
// Lines file reads back as that many tools.
func TestGenerate(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "examples/transfer/catalog/*.json"))
	base := catalogtest.Snapshot(t, files...).Tools()
	const n = 1500
	a, err := bigcatalog.Tools(base, n)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bigcatalog.Tools(base, n)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two generations differ")
	}
	if got := catalogtest.Registry(t, a...).Snapshot().Len(); got != n {
		t.Fatalf("registry holds %d tools, want %d", got, n)
	}
	var buf bytes.Buffer
	if err := bigcatalog.WriteJSONL(&buf, base, n); err != nil {
		t.Fatal(err)
	}
	ts, err := catalog.Parse(&buf, "big.jsonl", "big")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != n {
		t.Fatalf("the file holds %d tools, want %d", len(ts), n)
	}
}
