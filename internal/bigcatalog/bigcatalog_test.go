package bigcatalog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/bigcatalog"
	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
)

// TestGenerate checks that a generated catalog is the same every time,
// that every tool is valid and unique in a registry, and that the JSON
// Lines file reads back as that many tools.
func TestGenerate(t *testing.T) {
	base := baseTools(t)
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
	writeAndRead(t, base, n, false)
}

// baseTools are the example's real catalogs, the base the tests grow.
func baseTools(t *testing.T) []*tools.Tool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "examples/transfer/catalog/*.json"))
	return catalogtest.Snapshot(t, files...).Tools()
}

// writeAndRead writes the JSON Lines file of n tools grown from base and
// reads it back: every tool valid, n of them.
func writeAndRead(t *testing.T, base []*tools.Tool, n int, distinct bool) []tools.Tool {
	t.Helper()
	var buf bytes.Buffer
	if err := bigcatalog.WriteJSONL(&buf, base, n, distinct); err != nil {
		t.Fatal(err)
	}
	ts, err := catalog.Parse(&buf, "big.jsonl", "big")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != n {
		t.Fatalf("the file holds %d tools, want %d", len(ts), n)
	}
	return ts
}

// TestDistinctSchemas: with distinct set, the file's tools read back valid,
// each with a schema no other tool has, keeping its base tool's
// parameters.
func TestDistinctSchemas(t *testing.T) {
	base := baseTools(t)
	ts := writeAndRead(t, base, 600, true)
	seen := map[string]string{}
	for i, tl := range ts {
		s := string(tl.InputSchema)
		if other, ok := seen[s]; ok {
			t.Fatalf("%s and %s share the schema %s", other, tl.ID, s)
		}
		seen[s] = tl.ID
		if want := fmt.Sprintf(`"request_%d"`, i); !strings.Contains(s, want) {
			t.Errorf("%s: schema %s lacks %s", tl.ID, s, want)
		}
		if got, want := props(t, tl.InputSchema), props(t, base[i%len(base)].InputSchema); len(got) != len(want)+1 {
			t.Errorf("%s: %d properties, want its base's %d and one more", tl.ID, len(got), len(want))
		}
	}
}

func props(t *testing.T, schema json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if len(schema) > 0 {
		if err := json.Unmarshal(schema, &s); err != nil {
			t.Fatal(err)
		}
	}
	return s.Properties
}
