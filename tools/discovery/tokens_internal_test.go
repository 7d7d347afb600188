package discovery

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
)

// wholeTokens is what schemaTokens stands for: the whole text counted.
func wholeTokens(t testing.TB, tool *tools.Tool) int {
	t.Helper()
	n, err := tokens.Count(plainSchemaText(tool))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func splitTokens(t testing.TB, tool *tools.Tool) int {
	t.Helper()
	var c schemaCache
	buf := []byte("a buffer's earlier content") // as the build reuses one
	n, err := schemaTokens(tool, c.get(tool.InputSchema), &buf)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSchemaTokensSplit(t *testing.T) {
	t.Run("edges", func(t *testing.T) {
		tests := []struct{ name, desc, schema string }{
			{"plain", "Create an issue.", `{"type":"object","properties":{"b":{"type":"string"}}}`},
			{"no_description", "", `{"type":"object"}`},
			{"no_schema", "Lists things", ``},
			{"invalid_schema", "x", `{"type":`},
			{"ends_in_space", "trailing ", `{}`},
			{"ends_in_newline", "line\n", `{}`},
			{"ends_in_quote", `say "hi"`, `{}`},
			{"ends_in_digits", "top 1234", `{}`},
			{"ends_in_contraction", "it's", `{}`},
			{"ends_in_symbols", "a <b> &", `{}`},
			{"ends_in_slash", "path/", `{}`},
			{"ends_in_separator", "x\u2028", `{}`},
			{"non_latin", "Zamknij zgłoszenie — 関数", `{"properties":{"ñ":{}}}`},
			{"name_only_symbols", "", `{"properties":{"parameters":{}}}`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tool := &tools.Tool{ID: "ns/" + tt.name, Description: tt.desc, InputSchema: json.RawMessage(tt.schema)}
				if got, want := splitTokens(t, tool), wholeTokens(t, tool); got != want {
					t.Errorf("schemaTokens = %d, the whole text counts %d", got, want)
				}
			})
		}
	})
	t.Run("real_catalogs", func(t *testing.T) {
		files, _ := filepath.Glob("../../examples/transfer/catalog/*.json")
		held, _ := filepath.Glob("testdata/heldout/catalogs/*.json")
		files = append(files, held...)
		if len(files) < 10 {
			t.Fatalf("found %d catalogs, want the examples' and the held-out ones", len(files))
		}
		ts, err := catalog.LoadAll(files...)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ts {
			tool := &ts[i]
			if got, want := splitTokens(t, tool), wholeTokens(t, tool); got != want {
				t.Errorf("%s: schemaTokens = %d, the whole text counts %d", tool.ID, got, want)
			}
		}
	})
}

func FuzzSchemaTokens(f *testing.F) {
	f.Add("create_issue", "Create an issue.", `{"type":"object"}`)
	f.Add("x", "", `{"properties":{"a":{"description":"b \"c\" d"}}}`)
	f.Add("a-b", "ends in space ", ``)
	f.Add("é", "zgłoszenie\n\t", `{"enum":[1,"é"]}`)
	f.Fuzz(func(t *testing.T, name, desc, schema string) {
		tool := &tools.Tool{ID: "ns/" + name, Description: desc, InputSchema: json.RawMessage(schema)}
		if got, want := splitTokens(t, tool), wholeTokens(t, tool); got != want {
			t.Errorf("schemaTokens = %d, the whole text %q counts %d", got, plainSchemaText(tool), want)
		}
	})
}
