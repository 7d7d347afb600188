package grammar

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/testenv"
)

// TestLlamaAgreement checks the grammars this package emits against
// llama.cpp itself (gbnf-check): every grammar compiled from the
// JSON-Schema-Test-Suite, JSONSchemaBench and the real MCP catalogs must
// parse with --parse-only, and on a deterministic sample of the suites'
// instances (one in eight; all of them with TOOLGATE_FULL_AGREEMENT=1) our
// matcher's verdict and reject offset must equal llama.cpp's.
func TestLlamaAgreement(t *testing.T) {
	if testing.Short() {
		t.Skip("runs llama.cpp's gbnf-check over thousands of grammars")
	}
	bin := testenv.GBNFCheck(t)
	full := os.Getenv("TOOLGATE_FULL_AGREEMENT") == "1"
	var groups []suiteGroup
	suite := testenv.Shared(t, "datasets/json-schema-test-suite/tests/draft2020-12")
	for _, pat := range []string{"*.json", "optional/*.json", "optional/format/*.json"} {
		files, _ := filepath.Glob(filepath.Join(suite, pat))
		for _, f := range files {
			groups = append(groups, loadSuiteFile(t, f)...)
		}
	}
	for _, gs := range maskBenchGroups(t) {
		groups = append(groups, gs...)
	}
	for id, s := range catalogSchemas(t) {
		groups = append(groups, suiteGroup{name: "catalog/" + id, schema: s})
	}
	dir := t.TempDir()
	files := map[string]string{} // grammar hash → file
	type sample struct {
		grammarFile, gbnf, input, name string
	}
	var samples []sample
	for _, g := range groups {
		for row, opts := range []*Options{{OpenObjects: true}, nil} {
			t.Run(fmt.Sprint(row), func(t *testing.T) {
				cg := compileGroup(g, opts)
				if cg.err != nil {
					return
				}
				sum := sha256.Sum256([]byte(cg.res.GBNF))
				h := hex.EncodeToString(sum[:8])
				f, ok := files[h]
				if !ok {
					f = filepath.Join(dir, h+".gbnf")
					if err := os.WriteFile(f, []byte(cg.res.GBNF), 0o644); err != nil {
						t.Fatal(err)
					}
					files[h] = f
				}
				if opts == nil {
					return // instances are matched under the spec's open objects
				}
				for i, in := range cg.inputs {
					hs := fnv.New32a()
					fmt.Fprintf(hs, "%s#%d", g.name, i)
					if full || hs.Sum32()%8 == 0 {
						samples = append(samples, sample{f, cg.res.GBNF, in, fmt.Sprintf("%s #%d", g.name, i)})
					}
				}
			})
		}
	}
	paths := make([]string, 0, len(files))
	for _, f := range files {
		paths = append(paths, f)
	}
	sort.Strings(paths)
	// The golden grammars (tool schemas and the envelope) too.
	for _, pat := range []string{"testdata/schema/*.gbnf", "testdata/envelope/*.gbnf"} {
		g, _ := filepath.Glob(pat)
		paths = append(paths, g...)
	}
	var mu sync.Mutex
	parallel(len(paths), 2, func(i int) {
		code, out := gbnfCheckRun(bin, paths[i], "", true)
		if code != 0 {
			src, _ := os.ReadFile(paths[i])
			mu.Lock()
			t.Errorf("gbnf-check --parse-only rejects an emitted grammar: exit %d: %s\n%.2000s", code, out, src)
			mu.Unlock()
		}
	})
	t.Logf("%d distinct emitted grammars parse in llama.cpp", len(paths))

	rejectAt := regexp.MustCompile(`REJECT at byte (\d+)`)
	parsed := map[string]*gbnf.Grammar{}
	agree := 0
	parallel(len(samples), 2, func(i int) {
		s := samples[i]
		mu.Lock()
		g := parsed[s.grammarFile]
		mu.Unlock()
		if g == nil {
			var err error
			if g, err = gbnf.Parse(s.gbnf); err != nil {
				mu.Lock()
				t.Errorf("%s: %v", s.name, err)
				mu.Unlock()
				return
			}
			mu.Lock()
			parsed[s.grammarFile] = g
			mu.Unlock()
		}
		ok, off := g.Match([]byte(s.input))
		in := filepath.Join(dir, fmt.Sprintf("in%d.json", i))
		os.WriteFile(in, []byte(s.input), 0o644)
		code, out := gbnfCheckRun(bin, s.grammarFile, in, false)
		os.Remove(in)
		llamaOK := code == 0
		llamaOff := -1
		if m := rejectAt.FindStringSubmatch(out); m != nil {
			llamaOff, _ = strconv.Atoi(m[1])
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case code != 0 && code != 1:
			t.Errorf("%s: gbnf-check exit %d: %s", s.name, code, out)
		case ok != llamaOK:
			t.Errorf("%s: our matcher accepts = %v, llama.cpp %v (%s) on %.300s", s.name, ok, llamaOK, out, s.input)
		case !ok && off != llamaOff:
			t.Errorf("%s: our matcher rejects at %d, llama.cpp at %d on %.300s", s.name, off, llamaOff, s.input)
		default:
			agree++
		}
	})
	t.Logf("matcher and llama.cpp agree on %d of %d sampled instances (full=%v)", agree, len(samples), full)
}
