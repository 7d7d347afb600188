package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/grammar/gbnf"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
)

func runGrammarCmd(args ...string) (int, string, string) {
	return runCmd(append([]string{"grammar"}, args...)...)
}

func TestGrammarCommand(t *testing.T) {
	root := testenv.RepoRoot(t)
	transfer := filepath.Join(root, "grammar", "testdata", "schema", "finance_transfer_funds.json")
	relaxed := writeFile(t, "relaxed.json", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"uniqueItems":true}}}`)
	broken := writeFile(t, "broken.json", `{"type":`)
	github := filepath.Join(root, "examples", "transfer", "catalog", "github.json")

	code, out, errOut := runGrammarCmd("--schema", transfer)
	if code != exitOK || !strings.HasPrefix(out, "root ::= ") || errOut != "" {
		t.Errorf("grammar --schema transfer = %d, %q, %q; want a grammar and no relaxations", code, out, errOut)
	}
	if g, err := gbnf.Parse(out); err != nil {
		t.Errorf("printed grammar does not parse: %v", err)
	} else if ok, _ := g.Match([]byte(`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5}`)); !ok {
		t.Errorf("printed grammar rejects a valid transfer")
	}

	code, out, errOut = runGrammarCmd("--schema", relaxed)
	if code != exitOK || errOut != "#/properties/tags\tuniqueItems\tuniqueness of items is not expressible in the grammar; the gateway checks it\n" {
		t.Errorf("grammar --schema relaxed = %d, stderr %q; want the uniqueItems relaxation", code, errOut)
	}
	code, _, errOut = runGrammarCmd("--schema", relaxed, "--strict")
	if code != exitUsage || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "uniqueItems") {
		t.Errorf("grammar --strict = %d, %q; want exit 2 with one line", code, errOut)
	}

	code, out, errOut = runGrammarCmd("--schema", transfer, "--format", "openai-strict")
	var spec map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &spec) != nil || spec["additionalProperties"] != false {
		t.Errorf("grammar --format openai-strict = %d, %q, %q", code, out, errOut)
	}

	for i, args := range [][]string{
		{"--schema", broken},
		{"--schema", filepath.Join(t.TempDir(), "missing.json")},
		{},
		{"--schema", transfer, "--format", "xml"},
		{"--tools", github},
		{"--tools", github, "--select", "no_such_tool"},
		{"--schema", transfer, "extra"},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			code, out, errOut := runGrammarCmd(args...)
			if code != exitUsage || out != "" || strings.Count(errOut, "\n") != 1 {
				t.Errorf("grammar %v = %d, stdout %q, stderr %q; want exit 2 and one line", args, code, out, errOut)
			}
		})
	}

	code, out, errOut = runGrammarCmd("--tools", github, "--select", "create_issue,search_repositories")
	if code != exitOK || !strings.Contains(out, `create-issue-args`) || !strings.Contains(out, `search-repositories-args`) {
		t.Fatalf("grammar --tools --select = %d, %q, %q", code, out, errOut)
	}
	// The bounds are the agent's: toolgate grammar prints the envelope a
	// model writes a turn under ([llm.DefaultBounds]).
	bd := llm.DefaultBounds()
	for _, want := range []string{fmt.Sprintf("envelope: #/text\tmaxLength\t%d ", bd.Answer), fmt.Sprintf("envelope: #/query\tmaxLength\t%d ", bd.Query),
		fmt.Sprintf("create_issue: #/properties/owner\tmaxLength\t%d ", bd.String)} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(errOut, want) {
				t.Errorf("grammar --tools --select stderr lacks the bound %q:\n%s", want, errOut)
			}
		})
	}
	g, err := gbnf.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := g.Match([]byte(`{"action":"call","tool":"create_issue","arguments":{"owner":"o","repo":"r","title":"t"}}`)); !ok {
		t.Errorf("envelope rejects a valid create_issue call")
	}
	if ok, _ := g.Match([]byte(`{"action":"call","tool":"create_issue","arguments":{"owner":"o","repo":"r","title":"t","admin":true}}`)); ok {
		t.Errorf("envelope admits an undeclared argument")
	}
	code, out, _ = runGrammarCmd("--tools", github, "--select", "create_issue", "--format", "ollama")
	if code != exitOK || !json.Valid([]byte(out)) || !strings.Contains(out, `"anyOf"`) {
		t.Errorf("grammar --format ollama envelope = %d, %q", code, out)
	}
}

// envelopeToolName finds the tool names of a --compact envelope's call rule.
var envelopeToolName = regexp.MustCompile(`\\"([a-zA-Z0-9_-]+)\\",\\"arguments\\":`)

// TestGrammarEnvelopeNames: the envelope names each tool as the agent and
// mcp serve show it (tools.SessionNames): a bare name that another tool of
// the catalogs shares is server-qualified, whether or not that other tool
// is selected, so the grammar never has the model write an ambiguous name.
// Before, the first selected tool took the bare name ("create_issue" for
// github/create_issue beside gitlab's), one a gateway refuses as ambiguous.
func TestGrammarEnvelopeNames(t *testing.T) {
	root := testenv.RepoRoot(t)
	github := filepath.Join(root, "examples", "transfer", "catalog", "github.json")
	gitlab := filepath.Join(root, "examples", "transfer", "catalog", "gitlab.json")
	for _, tc := range []struct {
		name, sel string
		want      []string
	}{
		{"both selected", "github/create_issue,gitlab/create_issue,get_issue", []string{"github__create_issue", "gitlab__create_issue", "get_issue"}},
		{"one selected", "github/create_issue", []string{"github__create_issue"}},
		{"unshared", "get_issue,list_issues", []string{"get_issue", "list_issues"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runGrammarCmd("--tools", github, "--tools", gitlab, "--select", tc.sel, "--compact")
			if code != exitOK {
				t.Fatalf("grammar --select %s = %d, %q", tc.sel, code, errOut)
			}
			var got []string
			for _, m := range envelopeToolName.FindAllStringSubmatch(out, -1) {
				got = append(got, m[1])
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("grammar --select %s names %v, want %v", tc.sel, got, tc.want)
			}
		})
	}
}
