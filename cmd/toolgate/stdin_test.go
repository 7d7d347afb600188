package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// endless is an input that never ends: a pipe from "yes".
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestStdinInputs runs each command whose input flag takes "-" with a
// given stdin: the input is read from it, and its errors say "stdin"
// and where.
func TestStdinInputs(t *testing.T) {
	catalog := writeFile(t, "github.json", `{"tools":[{"name":"create_issue","description":"Create a new issue in a GitHub repository","inputSchema":{"type":"object","properties":{"title":{"type":"string"}}}}]}`)
	gbnfFile := writeFile(t, "a.gbnf", `root ::= "a"`)
	input := writeFile(t, "in.txt", "a")
	tests := []struct {
		name   string
		args   []string
		stdin  io.Reader
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"grammar schema", []string{"grammar", "--schema", "-"}, strings.NewReader(`{"type":"object"}`), exitOK, `root ::= "{" ws "}"`, ""},
		{"grammar schema openai-strict", []string{"grammar", "--schema", "-", "--format", "openai-strict"}, strings.NewReader(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`), exitOK, `"additionalProperties":false`, ""},
		{"grammar schema invalid", []string{"grammar", "--schema", "-"}, strings.NewReader("{\"type\":\n \"object\",,}"), exitUsage, "", "toolgate grammar: stdin: grammar: invalid schema: invalid JSON at byte 19"},
		{"grammar schema endless", []string{"grammar", "--schema", "-"}, endless{}, exitUsage, "", "toolgate grammar: stdin: larger than 16 MiB"},
		{"eval queries", []string{"eval", "--tools", catalog, "--queries", "-", "--format", "json"}, strings.NewReader(`{"query":"open an issue","relevant":["create_issue"]}` + "\n"), exitOK, `"queries": 1,`, ""},
		{"eval queries bad line", []string{"eval", "--tools", catalog, "--queries", "-"}, strings.NewReader(`{"query":"open an issue","relevant":["create_issue"]}` + "\n\n" + `{"query":3}` + "\n"), exitUsage, "", "toolgate eval: stdin:3: "},
		{"check grammar", []string{"check", "--grammar", "-", "--input", input}, strings.NewReader(`root ::= "a"`), exitOK, "accepted (1 bytes)", ""},
		{"check grammar error", []string{"check", "--grammar", "-", "--input", input}, strings.NewReader("root ::= \"a\"\nx ::= ("), exitUsage, "", "toolgate check: stdin:2:8: "},
		{"check grammar and input", []string{"check", "--grammar", "-"}, strings.NewReader(`root ::= "a"`), exitUsage, "", "--grammar - and --input - both name stdin"},
		{"check input", []string{"check", "--grammar", gbnfFile, "--input", "-"}, strings.NewReader("b"), exitNegative, "", "rejected at byte 0"},
		{"log misses", []string{"log", "misses", "--log", "-"}, strings.NewReader(`{"time":"2026-01-02T03:04:05Z","query":"x"}` + "\n{\n"), exitOK, "", "toolgate log misses: warning: stdin:2: not a JSON value"},
		{"log misses sqlite", []string{"log", "misses", "--log", "-"}, strings.NewReader("SQLite format 3\x00..."), exitUsage, "", "toolgate log misses: stdin: a SQLite log is read by path"},
		{"audit verify file", []string{"audit", "verify", "--file", "-"}, strings.NewReader(""), exitUsage, "", "toolgate audit verify: stdin: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkRun(t, tc.args, tc.stdin, tc.code, tc.stdout, tc.stderr)
		})
	}
}

// TestStdinRefused: a flag whose file stdin cannot stand for refuses "-"
// with one line naming the flag, never "open -: no such file".
func TestStdinRefused(t *testing.T) {
	catalog := writeFile(t, "github.json", `{"tools":[{"name":"create_issue","description":"Create an issue"}]}`)
	queries := writeFile(t, "q.jsonl", `{"query":"open an issue","relevant":["create_issue"]}`+"\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"discover tools", []string{"discover", "--tools", "-", "open an issue"}, "toolgate discover: --tools -: not stdin: "},
		{"discover named tools", []string{"discover", "--tools", "gh=-", "open an issue"}, "toolgate discover: --tools gh=-: not stdin: "},
		{"discover second tools", []string{"discover", "--tools", catalog, "--tools", "-", "open an issue"}, "toolgate discover: --tools -: not stdin: "},
		{"discover cards", []string{"discover", "--tools", catalog, "--cards", "-", "open an issue"}, "toolgate discover: --cards -: not stdin: "},
		{"eval lexicon", []string{"eval", "--tools", catalog, "--queries", queries, "--lexicon", "en=-"}, "toolgate eval: --lexicon en=-: not stdin: "},
		{"eval index", []string{"eval", "--tools", catalog, "--queries", queries, "--index", "-"}, "toolgate eval: --index -: not stdin: "},
		{"grammar tools", []string{"grammar", "--tools", "-", "--select", "create_issue"}, "toolgate grammar: --tools -: not stdin: "},
		{"lint tools", []string{"lint", "--tools", "-"}, "toolgate lint: --tools -: not stdin: "},
		{"serve tokens", []string{"serve", "--tools", catalog, "--tokens", "-"}, "toolgate serve: --tokens -: not stdin: "},
		{"mcp serve config", []string{"mcp", "serve", "--mcp-config", "-", "--principal", "p", "--tenant", "t"}, "--mcp-config -: not stdin: "},
		{"audit pubkey", []string{"audit", "verify", "--file", queries, "--pubkey", "-"}, "toolgate audit: --pubkey -: not stdin: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(context.Background(), tc.args, strings.NewReader("{}"), io.Discard, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("toolgate %v = exit %d, stderr %q; want exit %d and one line containing %q", tc.args, code, stderr.String(), exitUsage, tc.want)
			}
			if strings.Contains(stderr.String(), "open -") {
				t.Errorf("stderr = %q, want no %q", stderr.String(), "open -")
			}
		})
	}
}
