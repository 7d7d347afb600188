package grammar

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

// suiteStats counts a suite's outcomes (docs/benchmarks.md, "Grammar: compilation and matching"):
// every valid instance of a compiled schema must be accepted; invalid
// instances rejected by the grammar alone are counted.
type suiteStats struct {
	schemas, compiled        int
	valid, validRejected     int
	invalid, invalidRejected int
	exact                    int // compiled, all valid accepted, all invalid rejected
	withInstances            int // compiled schemas that have instances
	relaxedSchemas           int
	failures                 []string
	compileErrors            map[string]int
}

func (s *suiteStats) add(cg *checkedGroup) {
	s.schemas++
	if cg.err != nil {
		if s.compileErrors == nil {
			s.compileErrors = map[string]int{}
		}
		s.compileErrors[errorClass(cg.err)]++
		return
	}
	s.compiled++
	if len(cg.res.Relaxations) > 0 {
		s.relaxedSchemas++
	}
	if len(cg.group.tests) > 0 {
		s.withInstances++
	}
	exact := true
	for i, x := range cg.group.tests {
		ok := cg.accepted[i]
		if x.valid {
			s.valid++
			if !ok {
				s.validRejected++
				exact = false
				s.failures = append(s.failures, fmt.Sprintf("%s / %s: valid instance rejected: %s", cg.group.name, x.desc, cg.inputs[i]))
			}
		} else {
			s.invalid++
			if !ok {
				s.invalidRejected++
			} else {
				exact = false
			}
		}
	}
	if exact && len(cg.group.tests) > 0 {
		s.exact++
	}
}

func errorClass(err error) string {
	switch {
	case errors.Is(err, ErrUnsatisfiable):
		return "unsatisfiable"
	case errors.Is(err, ErrUnsupported):
		return "unsupported"
	case errors.Is(err, ErrInvalidSchema):
		return "invalid"
	case errors.Is(err, ErrRelaxed):
		return "relaxed"
	}
	return err.Error()
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

func (s *suiteStats) String() string {
	return fmt.Sprintf("schemas %d, compiled %d (%.2f%%), valid %d rejected %d, invalid %d rejected %d (%.2f%%), exact %d of %d (%.2f%%), relaxed schemas %d, compile errors %v",
		s.schemas, s.compiled, pct(s.compiled, s.schemas), s.valid, s.validRejected, s.invalid, s.invalidRejected,
		pct(s.invalidRejected, s.invalid), s.exact, s.withInstances, pct(s.exact, s.withInstances), s.relaxedSchemas, s.compileErrors)
}

// runGroups compiles and matches groups; it fails the test on a grammar our
// parser rejects.
func runGroups(t *testing.T, groups []suiteGroup, opts *Options) []*checkedGroup {
	t.Helper()
	out := make([]*checkedGroup, len(groups))
	parallel(len(groups), 2, func(i int) {
		cg := compileGroup(groups[i], opts)
		if cg.err == nil {
			if err := cg.matchAll(t); err != nil {
				cg.err = fmt.Errorf("emitted grammar does not parse: %w", err)
			}
		}
		out[i] = cg
	})
	for _, cg := range out {
		if cg.err != nil && strings.Contains(cg.err.Error(), "emitted grammar does not parse") {
			t.Errorf("%s: %v", cg.group.name, cg.err)
		}
	}
	return out
}

// TestJSONSchemaTestSuite runs the official draft 2020-12 suite: every
// valid instance of every compiled schema must be accepted.
func TestJSONSchemaTestSuite(t *testing.T) {
	dir := testenv.Shared(t, "datasets/json-schema-test-suite/tests/draft2020-12")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	opt, _ := filepath.Glob(filepath.Join(dir, "optional", "*.json"))
	fmts, _ := filepath.Glob(filepath.Join(dir, "optional", "format", "*.json"))
	for _, set := range []struct {
		name  string
		files []string
	}{{"required", files}, {"optional", opt}, {"optional/format", fmts}} {
		t.Run(set.name, func(t *testing.T) {
			var groups []suiteGroup
			for _, f := range set.files {
				groups = append(groups, loadSuiteFile(t, f)...)
			}
			results := runGroups(t, groups, &Options{OpenObjects: true})
			var st suiteStats
			for _, cg := range results {
				st.add(cg)
			}
			known := 0
			for _, f := range st.failures {
				if why := knownDeviation(f); why != "" {
					known++
					t.Logf("%s: known deviation (%s): %s", set.name, why, f)
					continue
				}
				t.Errorf("%s: %s", set.name, f)
			}
			t.Logf("%d valid instances rejected by documented design choices", known)
			t.Logf("JSON-Schema-Test-Suite draft2020-12 %s: %v", set.name, &st)
		})
	}
}

// knownDeviation names the documented design choice behind a rejected
// valid instance of the official suite, or "".
func knownDeviation(failure string) string {
	switch {
	case strings.Contains(failure, "format.json:") && strings.Contains(failure, "only an annotation by default"):
		return "format is asserted, as the format-assertion vocabulary specifies"
	case strings.Contains(failure, "leap second") && (strings.Contains(failure, "offset") || strings.Contains(failure, "minus")):
		return "a leap second is admitted only as 23:59:60 UTC"
	case strings.Contains(failure, "vocabulary.json:") && strings.Contains(failure, "custom metaschema"):
		return "custom metaschemas (vocabularies) are not fetched"
	}
	return ""
}

// maskBenchGroups loads JSONSchemaBench files by subset.
func maskBenchGroups(t *testing.T) map[string][]suiteGroup {
	dir := testenv.Shared(t, "datasets/jsonschemabench/maskbench")
	subsets, _ := filepath.Glob(filepath.Join(dir, "*"))
	out := map[string][]suiteGroup{}
	for _, sub := range subsets {
		fi, err := os.Stat(sub)
		if err != nil || !fi.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(sub, "*.json"))
		for _, f := range files {
			g := loadMaskBench(t, f)
			g.name = filepath.Base(sub) + "/" + filepath.Base(f)
			out[filepath.Base(sub)] = append(out[filepath.Base(sub)], g)
		}
	}
	return out
}

// toolSubset reports whether a JSONSchemaBench subset holds tool-call schemas.
func toolSubset(name string) bool {
	return strings.HasPrefix(name, "BFCL_") || name == "Glaiveai2K" || name == "MCPspec"
}

// TestJSONSchemaBench runs JSONSchemaBench (MaskBench instances): no valid
// instance may be rejected; compile rate, invalid rejection and the exact
// share are reported per subset.
func TestJSONSchemaBench(t *testing.T) {
	bySubset := maskBenchGroups(t)
	names := make([]string, 0, len(bySubset))
	for n := range bySubset {
		names = append(names, n)
	}
	sort.Strings(names)
	// The protocol uses JSON Schema's open objects; TOOLGATE_CLOSED_OBJECTS=1
	// measures the default (closed) instead, where valid instances with
	// undeclared properties are rejected by design and not failures.
	opts := &Options{OpenObjects: true}
	closed := os.Getenv("TOOLGATE_CLOSED_OBJECTS") == "1"
	if closed {
		opts = nil
	}
	var all, tools suiteStats
	for _, n := range names {
		results := runGroups(t, bySubset[n], opts)
		var st suiteStats
		for _, cg := range results {
			st.add(cg)
			all.add(cg)
			if toolSubset(n) {
				tools.add(cg)
			}
		}
		t.Logf("%-22s %v", n, &st)
	}
	for _, f := range all.failures {
		if closed {
			continue
		}
		t.Errorf("%s", f)
	}
	t.Logf("ALL tool-call subsets: %v", &tools)
	t.Logf("ALL JSONSchemaBench: %v", &all)
}
