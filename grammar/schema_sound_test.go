package grammar

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/jsonschema"
	"github.com/toolgate/toolgate/internal/testenv"
)

// TestGrammarIsSound runs every instance of the official suite and of
// JSONSchemaBench, written as a model writes it, through both the grammar
// and the gateway's validator (internal/jsonschema with formats asserted):
// where the schema compiled without a relaxation, an instance the grammar
// accepts must be valid. The suites' invalid instances are the probes:
// {"not":{"type":"integer"}} let 1 through, and prefixItems merged from an
// allOf dropped the sibling items at those positions.
func TestGrammarIsSound(t *testing.T) {
	dir := testenv.Shared(t, "datasets/json-schema-test-suite/tests/draft2020-12")
	var files []string
	for _, glob := range []string{"*.json", "optional/*.json", "optional/format/*.json"} {
		f, _ := filepath.Glob(filepath.Join(dir, glob))
		files = append(files, f...)
	}
	var groups []suiteGroup
	for _, f := range files {
		groups = append(groups, loadSuiteFile(t, f)...)
	}
	for _, gs := range maskBenchGroups(t) {
		groups = append(groups, gs...)
	}
	checked := 0
	for _, cg := range runGroups(t, groups, &Options{OpenObjects: true}) {
		if cg.err != nil || len(cg.res.Relaxations) > 0 {
			continue
		}
		doc, err := jsonschema.ParseDocument(cg.group.schema)
		if err != nil {
			continue
		}
		s, err := jsonschema.Compile(doc, &jsonschema.Options{AssertFormat: true})
		if err != nil {
			continue
		}
		for i, in := range cg.inputs {
			if !cg.accepted[i] {
				continue
			}
			checked++
			v, err := jsonschema.ParseDocument([]byte(in))
			if err != nil {
				t.Errorf("%s / %s: grammar accepts %s, which is not JSON: %v", cg.group.name, cg.group.tests[i].desc, in, err)
				continue
			}
			if vs, err := s.Validate(v, time.Time{}); err != nil || len(vs) > 0 {
				t.Errorf("%s / %s: grammar accepts %s, validator refuses it: %v %v (no relaxation reported)", cg.group.name, cg.group.tests[i].desc, in, vs, err)
			}
		}
	}
	t.Logf("%d accepted instances of schemas without relaxations checked", checked)
}
