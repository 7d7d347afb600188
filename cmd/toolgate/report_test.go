package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

// TestHTMLReports runs eval and lint with --format html over the real MCP
// catalogs: each writes one self-contained page with its figures
// (internal/report renders it in headless Chromium in its own test).
func TestHTMLReports(t *testing.T) {
	root := testenv.RepoRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "examples", "transfer", "catalog", "*.json"))
	var tools []string
	for _, f := range files {
		tools = append(tools, "--tools", f)
	}
	for i, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{append(append([]string{"eval"}, tools...), "--queries", filepath.Join(root, "testdata", "queries", "real-mcp.jsonl"), "--format", "html"),
			exitOK, []string{"<!DOCTYPE html>", `id="recall5"`, "Recall@5 by", "Misses", "<svg",
				// What was measured, per server, and the misses' ranks.
				`id="measured"`, "toolgate (devel)", "real-mcp.jsonl", "github.json", `id="servers"`, "<code>github</code>",
				"rank of the right tool", `<td class="n rank">`}},
		{append(append([]string{"lint"}, tools...), "--format", "html"),
			exitNegative, []string{"<!DOCTYPE html>", "Near-duplicate cards", `class="pair"`, "Findings by tool"}},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			code, stdout, stderr := runCmd(tc.args...)
			if code != tc.code {
				t.Fatalf("toolgate %s --format html = exit %d (stderr %q), want %d", tc.args[0], code, stderr, tc.code)
			}
			page := stdout
			for _, w := range tc.want {
				if !strings.Contains(page, w) {
					t.Errorf("toolgate %s --format html lacks %q", tc.args[0], w)
				}
			}
			if strings.Contains(page, "<script") || strings.Contains(page, "<link") || strings.Contains(page, `src="http`) || strings.Contains(page, "url(") {
				t.Errorf("toolgate %s --format html is not self-contained", tc.args[0])
			}
		})
	}
}
