package grammar

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/grammar/gbnf"
)

// instanceText writes an instance the way a model writes it under the
// grammar compiled from schema: compact JSON, numbers in canonical form,
// object members in the schema's declaration order (declared properties
// first, in the order the compiler merges $ref, allOf, anyOf and oneOf,
// then required names it does not declare, then the rest in instance
// order), values equal to a const or enum value spelled as that value.
func instanceText(c *compiler, schema, inst *jsonValue) string {
	var b strings.Builder
	w := &instanceWriter{c: c}
	w.write(&b, []*jsonValue{schema}, inst)
	return b.String()
}

type instanceWriter struct{ c *compiler }

// expand lists the schemas that apply to v at one place, in merge order.
// Of an anyOf or oneOf it takes the first branch that admits v (the
// branch whose grammar a model follows to write v), or all of them when
// the small validator admits none.
func (w *instanceWriter) expand(schemas []*jsonValue, v *jsonValue) []*jsonValue {
	var out []*jsonValue
	seen := map[*jsonValue]bool{}
	var visit func(s *jsonValue, depth int)
	visit = func(s *jsonValue, depth int) {
		if s == nil || s.kind != jsonObject || seen[s] || depth > 24 {
			return
		}
		seen[s] = true
		out = append(out, s)
		if r := s.get("$ref"); r != nil && r.kind == jsonString {
			if t, ok := w.c.resolve(s, r.s); ok {
				visit(t, depth+1)
			}
		}
		if br := s.get("allOf"); br != nil && br.kind == jsonArray {
			for _, b := range br.arr {
				visit(b, depth+1)
			}
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			br := s.get(k)
			if br == nil || br.kind != jsonArray {
				continue
			}
			picked := false
			for _, b := range br.arr {
				if w.c.admits(b, v, 0) {
					visit(b, depth+1)
					picked = true
					break
				}
			}
			if !picked {
				for _, b := range br.arr {
					visit(b, depth+1)
				}
			}
		}
	}
	for _, s := range schemas {
		visit(s, 0)
	}
	return out
}

func (w *instanceWriter) write(b *strings.Builder, schemas []*jsonValue, v *jsonValue) {
	all := w.expand(schemas, v)
	for _, s := range all {
		for _, k := range []string{"const", "enum"} {
			cv := s.get(k)
			if cv == nil {
				continue
			}
			cands := []*jsonValue{cv}
			if k == "enum" && cv.kind == jsonArray {
				cands = cv.arr
			}
			for _, x := range cands {
				if jsonEqual(x, v) {
					b.WriteString(canonicalJSON(x))
					return
				}
			}
		}
	}
	switch v.kind {
	case jsonArray:
		b.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			var sub []*jsonValue
			for _, s := range all {
				pi := s.get("prefixItems")
				it := s.get("items")
				if it != nil && it.kind == jsonArray {
					pi, it = it, s.get("additionalItems")
				}
				if pi != nil && pi.kind == jsonArray && i < len(pi.arr) {
					sub = append(sub, pi.arr[i])
				} else if it != nil {
					sub = append(sub, it)
				}
			}
			w.write(b, sub, e)
		}
		b.WriteByte(']')
	case jsonObject:
		var order []string
		placed := map[string]bool{}
		for _, s := range all {
			if p := s.get("properties"); p != nil && p.kind == jsonObject {
				for _, k := range p.keys {
					if !placed[k] && v.get(k) != nil {
						placed[k] = true
						order = append(order, k)
					}
				}
			}
		}
		for _, s := range all {
			if r := s.get("required"); r != nil && r.kind == jsonArray {
				for _, k := range r.arr {
					if k.kind == jsonString && !placed[k.s] && v.get(k.s) != nil {
						placed[k.s] = true
						order = append(order, k.s)
					}
				}
			}
		}
		// dependentRequired compiles to "name absent, or name and its
		// dependents required", in that order.
		for _, s := range all {
			for _, kw := range []string{"dependentRequired", "dependencies"} {
				deps := s.get(kw)
				if deps == nil || deps.kind != jsonObject {
					continue
				}
				for i, name := range deps.keys {
					if deps.vals[i].kind != jsonArray || v.get(name) == nil {
						continue
					}
					for _, n := range append([]*jsonValue{newString(name)}, deps.vals[i].arr...) {
						if n.kind == jsonString && !placed[n.s] && v.get(n.s) != nil {
							placed[n.s] = true
							order = append(order, n.s)
						}
					}
				}
			}
		}
		for _, k := range v.keys {
			if !placed[k] {
				placed[k] = true
				order = append(order, k)
			}
		}
		b.WriteByte('{')
		for i, k := range order {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			var sub []*jsonValue
			for _, s := range all {
				if p := s.get("properties"); p != nil && p.get(k) != nil {
					sub = append(sub, p.get(k))
					continue
				}
				matched := false
				if pp := s.get("patternProperties"); pp != nil && pp.kind == jsonObject {
					for j, pat := range pp.keys {
						if ok, _ := regexMatch(pat, k); ok {
							sub = append(sub, pp.vals[j])
							matched = true
						}
					}
				}
				if !matched {
					if ap := s.get("additionalProperties"); ap != nil {
						sub = append(sub, ap)
					}
				}
			}
			w.write(b, sub, v.get(k))
		}
		b.WriteByte('}')
	default:
		writeCanonical(b, v)
	}
}

// suiteGroup is one schema with its labelled instances.
type suiteGroup struct {
	name   string
	schema json.RawMessage
	tests  []suiteTest
}

type suiteTest struct {
	desc  string
	data  json.RawMessage
	valid bool
}

type rawTest struct {
	Description string          `json:"description"`
	Data        json.RawMessage `json:"data"`
	Valid       bool            `json:"valid"`
}

// loadSuiteFile reads a JSON-Schema-Test-Suite file (an array of groups).
func loadSuiteFile(t testing.TB, path string) []suiteGroup {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Tests       []rawTest       `json:"tests"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []suiteGroup
	for _, g := range raw {
		sg := suiteGroup{name: filepath.Base(path) + ": " + g.Description, schema: g.Schema}
		for _, x := range g.Tests {
			sg.tests = append(sg.tests, suiteTest{x.Description, x.Data, x.Valid})
		}
		out = append(out, sg)
	}
	return out
}

// loadMaskBench reads one JSONSchemaBench (MaskBench) file.
func loadMaskBench(t testing.TB, path string) suiteGroup {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Schema json.RawMessage `json:"schema"`
		Tests  []rawTest       `json:"tests"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	g := suiteGroup{name: path, schema: raw.Schema}
	for _, x := range raw.Tests {
		g.tests = append(g.tests, suiteTest{x.Description, x.Data, x.Valid})
	}
	return g
}

// checkedGroup is a compiled group with its instances serialized.
type checkedGroup struct {
	group    suiteGroup
	res      *Result
	err      error
	inputs   []string // serialized instances, parallel to group.tests
	accepted []bool
}

// compileGroup compiles a group's schema and serializes its instances.
func compileGroup(g suiteGroup, opts *Options) *checkedGroup {
	cg := &checkedGroup{group: g}
	cg.res, cg.err = FromSchema(g.schema, opts)
	if cg.err != nil {
		return cg
	}
	doc, _ := decodeJSON(g.schema)
	c := newCompiler(doc, opts.orZero())
	for _, x := range g.tests {
		v, err := decodeJSON(x.data)
		if err != nil {
			cg.inputs = append(cg.inputs, string(x.data))
			continue
		}
		cg.inputs = append(cg.inputs, instanceText(c, doc, v))
	}
	return cg
}

// matchAll runs the in-process matcher over a group's instances.
func (cg *checkedGroup) matchAll(t testing.TB) error {
	g, err := gbnf.Parse(cg.res.GBNF)
	if err != nil {
		return err
	}
	cg.accepted = make([]bool, len(cg.inputs))
	for i, in := range cg.inputs {
		ok, _ := g.Match([]byte(in))
		cg.accepted[i] = ok
	}
	return nil
}

// gbnfCheckRun runs llama.cpp's gbnf-check on a grammar file and an input
// file (or none with parseOnly); it returns the exit code and output.
func gbnfCheckRun(bin, grammarFile, inputFile string, parseOnly bool) (int, string) {
	args := []string{"-q"}
	if parseOnly {
		args = []string{"--parse-only", grammarFile}
	} else {
		args = []string{grammarFile, inputFile}
	}
	cmd := exec.Command(bin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		return -1, err.Error()
	}
	return 0, string(out)
}

// parallel runs f(i) for i in [0, n) on a few goroutines.
func parallel(n, workers int, f func(i int)) {
	var wg sync.WaitGroup
	ch := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		ch <- i
	}
	close(ch)
	wg.Wait()
}
