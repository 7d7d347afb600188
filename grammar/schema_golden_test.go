package grammar

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/golden"
	"github.com/toolgate/toolgate/internal/testenv"
)

// goldenSchema is one of the golden inputs, testdata/schema/X.json.
type goldenSchema struct {
	path string
	data []byte
}

// goldenSchemas reads the golden inputs (there must be some).
func goldenSchemas(t *testing.T) []goldenSchema {
	t.Helper()
	files, _ := filepath.Glob("testdata/schema/*.json")
	if len(files) == 0 {
		t.Fatal("no golden schemas")
	}
	out := make([]goldenSchema, len(files))
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = goldenSchema{f, data}
	}
	return out
}

// TestGoldenGBNF pins the grammars of representative tool schemas (real
// MCP tools and the finance example's tools): testdata/schema/X.json
// compiles to X.gbnf with the relaxations in X.relax.
func TestGoldenGBNF(t *testing.T) {
	for _, g := range goldenSchemas(t) {
		res, err := FromSchema(g.data, nil)
		if err != nil {
			t.Errorf("%s: %v", g.path, err)
			continue
		}
		base := strings.TrimSuffix(g.path, ".json")
		golden.Check(t, base+".gbnf", []byte(res.GBNF))
		var rel strings.Builder
		for _, r := range res.Relaxations {
			rel.WriteString(r.String() + "\n")
		}
		golden.Check(t, base+".relax", []byte(rel.String()))
	}
}

func TestTransferFundsGrammar(t *testing.T) {
	data, _ := os.ReadFile("testdata/schema/finance_transfer_funds.json")
	res, err := FromSchema(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":100.5}`, true},
		{`{"source_account": "ACC-00001", "target_account": "ACC-00002", "amount": 0.01}`, true},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":0}`, false},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1.005}`, false},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":-5}`, false},
		{`{"source_account":"ACC-1","target_account":"ACC-00002","amount":5}`, false},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5,"memo":"x"}`, false},
		{`{"source_account":"ACC-00001","amount":5}`, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := accepts(t, res.GBNF, tc.in); got != tc.want {
				t.Errorf("transfer_funds grammar accepts %s = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
	if len(res.Relaxations) != 0 {
		t.Errorf("transfer_funds relaxations = %v, want none (the account pattern and the amount are exact)", res.Relaxations)
	}
}

// catalogSchemas returns the input schemas of the real MCP catalogs, by
// CATALOG/TOOL.
func catalogSchemas(t *testing.T) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, tl := range testenv.CatalogTools(t) {
		out[tl.Catalog+"/"+tl.Name] = tl.InputSchema
	}
	return out
}

// TestMCPCatalogs compiles every tool of the real MCP catalogs: all must
// compile, and the relaxations are reported.
func TestMCPCatalogs(t *testing.T) {
	schemas := catalogSchemas(t)
	relaxed, nRelax := 0, 0
	for id, s := range schemas {
		res, err := FromSchema(s, nil)
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if _, err := gbnf.Parse(res.GBNF); err != nil {
			t.Errorf("%s: emitted grammar does not parse: %v", id, err)
		}
		if len(res.Relaxations) > 0 {
			relaxed++
			nRelax += len(res.Relaxations)
		}
	}
	t.Logf("real MCP catalogs: %d tools compiled, %d with relaxations (%d relaxations)", len(schemas), relaxed, nRelax)
}
