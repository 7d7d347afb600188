package main

import (
	"github.com/toolgate/toolgate/internal/report"
	"github.com/toolgate/toolgate/internal/termtext"

	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/tools/lint"
)

func init() { commands["lint"] = runLint }

type lintOutput struct {
	Tools    int               `json:"tools"`
	Checked  []lint.Kind       `json:"checked"`
	Counts   map[lint.Kind]int `json:"counts"`
	Findings []lint.Finding    `json:"findings"`
	// Fixed counts, with --cards, the findings of the catalog without the
	// overlays that the overlays made go away, by kind.
	Fixed map[lint.Kind]int `json:"fixed_by_cards,omitempty"`
}

// runLint: toolgate lint --tools F [--tools F2] [--skip kinds] [--k 5]
// [--max-tokens 50] [--duplicate-threshold 0.8] [--all] [--format text|json].
// Exit 0 when the cards are clean, 1 with findings (one "ID: kind: message"
// line each; in text, the missing aliases and not_for of tools from MCP
// servers are one summary line unless --all, and a summary line ends the
// report, both on stderr), 2 for usage or input errors (every catalog
// problem as FILE:LINE: reason on stderr).
func runLint(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	const prog = "toolgate lint"
	fs, src := catalogFlagSet("lint")
	skip := fs.String("skip", "", "comma-separated kinds not to check: "+kindList())
	k := fs.Int("k", 5, "shortlist size a tool must come back in to be findable")
	maxTokens := fs.Int("max-tokens", 50, "card budget in o200k tokens")
	threshold := fs.Float64("duplicate-threshold", 0.8, "similarity in (0,1] from which two cards are near duplicates")
	format := fs.String("format", "text", "output format: text, json, or html (one self-contained page)")
	all := fs.Bool("all", false, "list every finding: also the missing aliases and not_for of tools from MCP tools/list files or servers, otherwise one summary line")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	opts := &lint.Options{K: *k, MaxCardTokens: *maxTokens, DuplicateThreshold: *threshold}
	for _, s := range splitList(*skip) {
		opts.Skip = append(opts.Skip, lint.Kind(s))
	}
	if err := src.flagsErr(fs); err != nil {
		return fail(stderr, prog, err)
	}
	if *k < 1 || *maxTokens < 1 || !(*threshold > 0 && *threshold <= 1) {
		return fail(stderr, prog, errors.New("--k and --max-tokens must be at least 1, --duplicate-threshold in (0,1]"))
	}
	if err := formatErr(*format, "text", "json", "html"); err != nil {
		return fail(stderr, prog, err)
	}
	reg, closeUpstreams, err := src.load(ctx, quietLogger())
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "%s: %s\n", prog, line)
		}
		return exitUsage
	}
	defer closeUpstreams()
	src.warnRejected(stderr, prog)
	src.cards.warn(stderr, prog)
	snap := reg.Snapshot()
	findings, err := lint.Check(ctx, snap, opts)
	switch {
	case errors.Is(err, context.Canceled):
		return fail(stderr, prog, errors.New("interrupted"))
	case errors.Is(err, lint.ErrOptions):
		return fail(stderr, prog, fmt.Errorf("%v (kinds: %s)", err, kindList()))
	case err != nil:
		return fail(stderr, prog, err)
	}
	var fixed map[lint.Kind]int
	if len(src.cards.files) > 0 {
		if fixed, err = fixedByCards(ctx, &src.cards, snap, findings, opts); err != nil {
			return fail(stderr, prog, err)
		}
	}
	if *format == "html" {
		if err := report.Lint(stdout, fmt.Sprintf("toolgate lint: %d tools", snap.Len()), snap, findings); err != nil {
			return fail(stderr, prog, err)
		}
	} else if *format == "json" {
		out := lintOutput{Tools: snap.Len(), Counts: map[lint.Kind]int{}, Findings: findings, Fixed: fixed}
		if out.Findings == nil {
			out.Findings = []lint.Finding{}
		}
		for _, kind := range lint.Kinds {
			if !slices.Contains(opts.Skip, kind) {
				out.Checked = append(out.Checked, kind)
				out.Counts[kind] = 0
			}
		}
		for _, f := range findings {
			out.Counts[f.Kind]++
		}
		if err := writeJSON(stdout, out); err != nil {
			return fail(stderr, prog, err)
		}
	} else {
		listed, grouped := findings, []lint.Finding(nil)
		if !*all {
			listed, grouped = splitMCPCardFindings(findings, src.mcpNamespaces)
		}
		for _, f := range listed {
			fmt.Fprintln(stdout, termtext.Line(f.String()))
		}
		if fixed != nil {
			fmt.Fprintf(stdout, "card overlays fixed %s\n", fixedList(fixed))
		}
		if len(grouped) > 0 {
			fmt.Fprintf(stderr, "%s: %d findings not listed (%s) on %d tools from MCP servers: an MCP tool definition has no aliases or not_for, so add them with --cards overlays (--all lists them)\n",
				prog, len(grouped), countList(grouped), countTools(grouped))
		}
		if len(findings) > 0 {
			fmt.Fprintf(stderr, "%s: %d findings on %d of %d tools: %s\n", prog, len(findings), countTools(findings), snap.Len(), countList(findings))
		}
	}
	if len(findings) > 0 {
		return exitNegative
	}
	return exitOK
}

// splitMCPCardFindings separates the findings a tool's own definition
// cannot fix when the tool came from an MCP server (mcpNS holds the
// namespaces that did): missing-aliases and missing-not-for, since MCP
// has no such fields. The rest are listed.
func splitMCPCardFindings(findings []lint.Finding, mcpNS map[string]bool) (listed, grouped []lint.Finding) {
	for _, f := range findings {
		ns, _, _ := strings.Cut(f.Tool, "/")
		if mcpNS[ns] && (f.Kind == lint.MissingAliases || f.Kind == lint.MissingNotFor) {
			grouped = append(grouped, f)
		} else {
			listed = append(listed, f)
		}
	}
	return listed, grouped
}

// countList is "N kind, M kind2", in the order of [lint.Kinds].
func countList(findings []lint.Finding) string {
	counts := map[lint.Kind]int{}
	for _, f := range findings {
		counts[f.Kind]++
	}
	var parts []string
	for _, k := range lint.Kinds {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	return strings.Join(parts, ", ")
}

// countTools is the number of distinct tools the findings are about.
func countTools(findings []lint.Finding) int {
	seen := map[string]bool{}
	for _, f := range findings {
		seen[f.Tool] = true
	}
	return len(seen)
}

func kindList() string {
	names := make([]string, len(lint.Kinds))
	for i, k := range lint.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}
