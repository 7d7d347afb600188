package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/hostiletest"
	"github.com/toolgate/toolgate/tools/discovery"
)

// hostile is text that takes over a terminal.
const hostile = hostiletest.Text

// hostileFiles writes a catalog, a card overlay, queries, a discovery log
// and schemas whose every text field holds hostile.
func hostileFiles(t *testing.T) map[string]string {
	t.Helper()
	var catalog []string
	for _, name := range []string{"list_orders", "list_order_items", "cancel_order"} {
		catalog = append(catalog, mustJSON(t, map[string]any{
			"name":        name,
			"description": "List the orders of a customer. " + hostile,
			// A summary is trimmed, not folded: a line break in it would
			// start a forged line of output.
			"summary": "Orders " + hostile + "\nFORGED\t" + name + "\t9.999",
			"aliases": []string{"orders " + hostile}, "not_for": hostile, "tags": []string{hostile}, "group": hostile,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"note" + hostile: map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{hostile}}, "uniqueItems": true},
			}},
		}))
	}
	var log bytes.Buffer
	l := discovery.NewJSONLog(&log)
	for i := range 3 {
		p, s := fmt.Sprintf("user-%d", i), fmt.Sprintf("s-%d", i)
		for i, e := range []discovery.Entry{
			{Tenant: "acme", Principal: p, Session: s, Query: "my orders " + hostile, Candidates: []discovery.LoggedCandidate{{ID: "shop/list_order_items"}}},
			{Tenant: "acme", Principal: p, Session: s, Source: discovery.SourceCall, Called: "shop/list_orders"},
			{Tenant: "acme" + hostile, Principal: p + hostile, Session: s + "x", Query: hostile, Candidates: []discovery.LoggedCandidate{{ID: hostile}}},
			{Tenant: "acme" + hostile, Principal: p + hostile, Session: s + "x", Source: discovery.SourceCall, Called: "shop/" + hostile},
		} {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				if err := l.Record(context.Background(), e); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	write := func(name, content string) string { return writeFile(t, name, content) }
	return map[string]string{
		"catalog": write("shop.jsonl", strings.Join(catalog, "\n")+"\n"),
		// An overlay refuses controls, not bidi controls.
		"overlay": write("team.cards.jsonl", mustJSON(t, map[string]any{"tool": "nope/*", "aliases": []string{"\u202eorders"}})+"\n"+
			mustJSON(t, map[string]any{"tool": "shop/list_orders", "hash": "sha256:0000000000000000", "aliases": []string{"\u202eorders"}})+"\n"),
		"queries": write("q.jsonl", mustJSON(t, map[string]any{"query": "my orders " + hostile, "relevant": []string{"list_orders", "nope" + hostile}, "kind": hostile, "lang": hostile})+"\n"),
		"log":     write("discovery.jsonl", log.String()),
		"schema": write("s.json", mustJSON(t, map[string]any{"type": "object", "properties": map[string]any{
			"tags" + hostile: map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{hostile}}, "uniqueItems": true}}})),
		"badcatalog": write("bad.jsonl", mustJSON(t, map[string]any{"name": "x", "scopes": hostile})+"\n"+
			mustJSON(t, map[string]any{"name": "y", "inputSchema": map[string]any{"type": hostile}})+"\n"),
		"grammar": write("g.gbnf", "root ::= \"a\"\nbad"+hostile+" ::= \n"),
		"input":   write("in.txt", "b"+hostile),
		"tokens":  write("tokens.json", `{"tokens":{"t":{"principal":"p","tenant":"acme","scopes":[]}}}`),
	}
}

// Every command's output, text or JSON or HTML, on stdout and stderr,
// holds no character a terminal acts on when the catalog, the overlay,
// the queries, the log, the schema and the model's output are hostile
// (security invariant 10). The MCP protocol that "mcp serve" speaks on
// stdout is for its client, not a terminal, and is left out.
func TestNoCommandWritesTerminalControls(t *testing.T) {
	f := hostileFiles(t)
	cat, ov := []string{"--tools", f["catalog"]}, []string{"--cards", f["overlay"]}
	// A server whose descriptions, results and errors are hostile.
	up := []string{"--mcp-url", "notes=" + hostiletest.MCPServer(t)}
	out := filepath.Join(t.TempDir(), "suggested.jsonl")
	join := func(parts ...[]string) []string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	tests := []struct {
		name string
		args []string
		// usage marks the rows that end in a usage or input error; the
		// others must run.
		usage bool
	}{
		{"discover", join([]string{"discover"}, cat, ov, []string{"my orders " + hostile}), false},
		{"discover upstream", join([]string{"discover"}, up, []string{"read a note"}), false},
		{"lint upstream", join([]string{"lint"}, up), false},
		{"discover json", join([]string{"discover"}, cat, []string{"--format", "json", "orders"}), false},
		{"discover bad catalog", []string{"discover", "--tools", f["badcatalog"], "orders"}, true},
		{"eval", join([]string{"eval"}, cat, ov, []string{"--queries", f["queries"]}), false},
		{"eval json", join([]string{"eval"}, cat, []string{"--queries", f["queries"], "--format", "json"}), false},
		{"eval html", join([]string{"eval"}, cat, []string{"--queries", f["queries"], "--format", "html"}), false},
		{"eval history", join([]string{"eval"}, cat, []string{"--queries", f["queries"], "--history", "0.5", "--backend", "scripted"}), false},
		{"lint", join([]string{"lint"}, cat, ov), false},
		{"lint json", join([]string{"lint"}, cat, []string{"--format", "json"}), false},
		{"lint html", join([]string{"lint"}, cat, []string{"--format", "html"}), false},
		{"lint bad catalog", []string{"lint", "--tools", f["badcatalog"]}, true},
		{"cards hash", join([]string{"cards", "hash"}, cat, ov), false},
		{"cards check", join([]string{"cards", "check"}, cat, ov), false},
		{"cards learn", join([]string{"cards", "learn"}, cat, []string{"--log", f["log"], "--tenant", "acme", "--min-principals", "1"}), false},
		{"cards learn tenants", join([]string{"cards", "learn"}, cat, []string{"--log", f["log"], "--min-principals", "1"}), true},
		{"cards suggest", join([]string{"cards", "suggest"}, cat, ov, []string{"--backend", "scripted", "--out", out}), false},
		{"log misses", []string{"log", "misses", "--log", f["log"]}, false},
		{"log misses json", []string{"log", "misses", "--log", f["log"], "--format", "json"}, false},
		{"grammar schema", []string{"grammar", "--schema", f["schema"]}, false},
		{"grammar schema openai", []string{"grammar", "--schema", f["schema"], "--format", "openai-strict"}, false},
		{"grammar schema ollama", []string{"grammar", "--schema", f["schema"], "--format", "ollama"}, false},
		{"grammar envelope", join([]string{"grammar"}, cat, ov, []string{"--select", "list_orders,cancel_order"}), false},
		{"grammar envelope ollama", join([]string{"grammar"}, cat, []string{"--select", "list_orders", "--format", "ollama"}), false},
		{"grammar select unknown", join([]string{"grammar"}, cat, []string{"--select", "nope" + hostile}), true},
		{"check bad grammar", []string{"check", "--grammar", f["grammar"], "--input", f["input"]}, true},
		{"mcp serve", join([]string{"mcp", "serve"}, cat, ov, []string{"--principal", "p", "--tenant", "acme", "-v"}), false},
		{"serve", join([]string{"serve"}, cat, ov, []string{"--tokens", f["tokens"], "--store", "bogus://" + hostile}), true},
		{"unknown command", []string{hostile}, true},
		{"unknown flag", []string{"discover", "--" + hostile}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(tc.args...)
			if code == exitUsage && !tc.usage {
				t.Fatalf("exit %d, stderr %q; want the command to run", code, stderr)
			}
			if tc.args[0] != "mcp" { // stdout is the MCP protocol
				hostiletest.CheckTerminal(t, "stdout", stdout)
			}
			hostiletest.CheckTerminal(t, "stderr", stderr)
			if slices.Contains(tc.args, "html") {
				return // a line break in HTML text is white space
			}
			for _, line := range strings.Split(stdout+stderr, "\n") {
				if strings.HasPrefix(line, "FORGED") {
					t.Errorf("a summary's line break forged the line %q", line)
				}
			}
		})
	}
}

// "mcp approve" prints the approval, whose arguments the model wrote.
func TestMCPApproveWritesNoTerminalControls(t *testing.T) {
	dir := t.TempDir()
	id, _, _ := heldCallWith(t, dir, json.RawMessage(`{"transaction_id":"tx-1 \u009b31m\u202e\u007f"}`))
	code, stdout, stderr := runCmd("mcp", "approve", "--data", dir, "--principal", "bob", "--tenant", "acme", "--show", id)
	if code != exitOK {
		t.Fatalf("mcp approve = %d, %s", code, stderr)
	}
	hostiletest.CheckTerminal(t, "stdout", stdout)
	// Escaped for the terminal, the JSON still means what the model sent.
	var a struct {
		Arguments struct {
			TransactionID string `json:"transaction_id"`
		} `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatalf("mcp approve printed no JSON: %v: %s", err, stdout)
	}
	if want := "tx-1 \u009b31m\u202e\u007f"; a.Arguments.TransactionID != want {
		t.Errorf("printed transaction_id %q, want %q", a.Arguments.TransactionID, want)
	}
}
