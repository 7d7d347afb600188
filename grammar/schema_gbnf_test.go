package grammar

import (
	"fmt"
	"strings"
	"testing"
)

// TestPrintGBNFAgreesWithLowering checks that the printer that writes a
// compiled grammar straight into a buffer writes exactly what gbnf's
// Grammar.String writes for the lowered grammar, on the golden schemas and
// the real MCP catalogs' and every JSONSchemaBench schema, spaced and
// compact, bounded and not.
func TestPrintGBNFAgreesWithLowering(t *testing.T) {
	var golden [][]byte
	for _, g := range goldenSchemas(t) {
		golden = append(golden, g.data)
	}
	check := func(t *testing.T, schemas [][]byte) {
		compiled := 0
		for i, s := range schemas {
			doc, err := decodeJSON(s)
			if err != nil {
				continue
			}
			for row, o := range []Options{{}, {Compact: true}, {MaxStringLength: 7, MaxItems: 3}} {
				t.Run(fmt.Sprint(row), func(t *testing.T) {
					res, err := compileTree(doc, o)
					if err != nil {
						return
					}
					compiled++
					if got, want := printGBNF(res.root), toGBNF(res.root).String(); got != want {
						t.Fatalf("schema %d %s, options %+v: printGBNF =\n%s\nwant (toGBNF(root).String())\n%s", i, s, o, got, want)
					}
				})
			}
		}
		if compiled == 0 {
			t.Fatal("no schema compiled")
		}
	}
	t.Run("golden", func(t *testing.T) { check(t, golden) })
	t.Run("MCP catalogs", func(t *testing.T) {
		var catalogs [][]byte
		for _, s := range catalogSchemas(t) {
			catalogs = append(catalogs, s)
		}
		check(t, catalogs)
	})
	t.Run("JSONSchemaBench", func(t *testing.T) { check(t, benchSchemas(t, false)) })
}

// TestLeftRecursionNeedsDeferredRules checks the premise of skipping
// leftRecursion in compileTree: on every schema of the golden files, the
// MCP catalogs and JSONSchemaBench, a compilation that made no rule before
// its body (deferredRules false) has no left-recursive cycle; and a
// schema with one has deferred rules.
func TestLeftRecursionNeedsDeferredRules(t *testing.T) {
	schemas := [][]byte{[]byte(`{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}},"$ref":"#/$defs/a"}`)}
	for _, g := range goldenSchemas(t) {
		schemas = append(schemas, g.data)
	}
	for _, s := range catalogSchemas(t) {
		schemas = append(schemas, s)
	}
	schemas = append(schemas, benchSchemas(t, false)...)
	flat, recursive := 0, 0
	for i, s := range schemas {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			doc, err := decodeJSON(s)
			if err != nil {
				return
			}
			c := newCompiler(doc, Options{})
			root := c.compileRoot()
			if c.fatal != nil {
				return
			}
			name, bad := leftRecursion(root)
			if bad {
				recursive++
			}
			if !c.deferredRules() {
				flat++
				if bad {
					t.Errorf("schema %d %s: left recursion through %s without deferred rules", i, s, name)
				}
			}
		})
	}
	if flat == 0 || recursive == 0 {
		t.Fatalf("%d schemas without deferred rules, %d left-recursive: want some of each", flat, recursive)
	}
}

// TestRuleNameOK checks the fast path of sanitizeRuleName against the slow
// one: ruleNameOK(s) exactly when cleanRuleName(s) == s, on every string of
// up to five characters over an alphabet with each kind of character, and
// on names around the 40-character limit.
func TestRuleNameOK(t *testing.T) {
	alphabet := []string{"a", "Z", "0", "-", "_", " ", "é"}
	inputs := []string{strings.Repeat("a", 39), strings.Repeat("a", 40), strings.Repeat("a", 41), strings.Repeat("ab-", 13) + "c"}
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		inputs = append(inputs, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			grow(prefix+c, n-1)
		}
	}
	grow("", 5)
	for _, s := range inputs {
		t.Run(s, func(t *testing.T) {
			if got, want := ruleNameOK(s), cleanRuleName(s) == s; got != want {
				t.Errorf("ruleNameOK(%q) = %v, want %v (cleanRuleName = %q)", s, got, want, cleanRuleName(s))
			}
		})
	}
}
