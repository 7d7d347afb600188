package grammar

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPrintGBNFAgreesWithLowering checks that the printer that writes a
// compiled grammar straight into a buffer writes exactly what gbnf's
// Grammar.String writes for the lowered grammar, on the golden schemas and
// every JSONSchemaBench schema, spaced and compact, bounded and not.
func TestPrintGBNFAgreesWithLowering(t *testing.T) {
	golden, _ := filepath.Glob("testdata/schema/*.json")
	var schemas [][]byte
	for _, f := range golden {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		schemas = append(schemas, data)
	}
	check := func(t *testing.T, schemas [][]byte) {
		compiled := 0
		for i, s := range schemas {
			doc, err := decodeJSON(s)
			if err != nil {
				continue
			}
			for _, o := range []Options{{}, {Compact: true}, {MaxStringLength: 7, MaxItems: 3}} {
				res, err := compileTree(doc, o)
				if err != nil {
					continue
				}
				compiled++
				if got, want := printGBNF(res.root), toGBNF(res.root).String(); got != want {
					t.Fatalf("schema %d %s, options %+v: printGBNF =\n%s\nwant (toGBNF(root).String())\n%s", i, s, o, got, want)
				}
			}
		}
		if compiled == 0 {
			t.Fatal("no schema compiled")
		}
	}
	t.Run("golden", func(t *testing.T) { check(t, schemas) })
	t.Run("JSONSchemaBench", func(t *testing.T) { check(t, benchSchemas(t, false)) })
}
