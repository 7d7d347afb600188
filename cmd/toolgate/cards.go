package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/cards"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/lint"
)

func init() {
	commands["cards"] = runCards
	catalogFlags := " --tools F [--tools F2]... [--mcp \"CMD ARGS\"]... [--cards O]..."
	helps["cards"] = cli.Usage{
		Synopsis: "toolgate cards hash|check|learn|suggest" + catalogFlags + " (toolgate cards SUB -h lists each subcommand's flags)",
		Summary:  "Card overlays: print each tool's hash to start one, check one for stale entries, learn one from the discovery log, or have a model suggest one.",
		Examples: []string{`toolgate cards hash --tools github=mcp-server-github.json > team.cards.jsonl`},
	}
	helps["cards hash"] = cli.Usage{Synopsis: "toolgate cards hash" + catalogFlags,
		Summary:  `Print one {"tool","hash"} line per tool: the start of an overlay.`,
		Examples: []string{`toolgate cards hash --tools github=mcp-server-github.json > team.cards.jsonl`}}
	helps["cards check"] = cli.Usage{Synopsis: "toolgate cards check" + catalogFlags,
		Summary:  "Report the overlays' stale and unknown entries; exit 1 if any.",
		Examples: []string{`toolgate cards check --tools github=mcp-server-github.json --cards team.cards.jsonl`}}
	helps["cards learn"] = cli.Usage{Synopsis: "toolgate cards learn" + catalogFlags + " --log FILE [--tenant T] [--min-principals 3] [--max-per-principal 3] [--out FILE]",
		Summary:  "Propose an overlay (examples and tags) from a discovery log's calls, for a person to review; one tenant, bounded against poisoning.",
		Examples: []string{`toolgate cards learn --tools github=mcp-server-github.json --log discovery.jsonl --tenant acme --out proposed.cards.jsonl`}}
}

// cardFlags is --cards FILE (repeatable): card overlays applied to every
// catalog a command loads, files and upstreams alike. It keeps the tools
// as they were before the overlay, for lint's count of what it fixed.
type cardFlags struct {
	files multiFlag
	ov    *cards.Overlay

	mu       sync.Mutex
	raw      map[string]tools.Tool // by ID, before the overlay
	problems []cards.Problem
	changed  int
}

func (c *cardFlags) register(fs *flag.FlagSet) {
	fs.Var(&c.files, "cards", "card overlay `file` (JSON Lines: aliases, examples, not_for, tags by tool ID or NS/*); repeatable")
}

// load parses the overlay files; a bad line is the error (FILE:LINE: reason).
func (c *cardFlags) load() error {
	ov, err := cards.Load(c.files...)
	if err != nil {
		return err
	}
	c.ov = ov
	c.raw = map[string]tools.Tool{}
	return nil
}

// apply overlays ts, remembering the originals.
func (c *cardFlags) apply(ts []tools.Tool) []tools.Tool {
	if c.ov.Len() == 0 {
		return ts
	}
	c.mu.Lock()
	for _, t := range ts {
		c.raw[t.ID] = t
	}
	c.mu.Unlock()
	return c.ov.Transform(ts)
}

// transform is apply in the form mcp.Options.Transform takes; nil without
// an overlay.
func (c *cardFlags) transform() func([]tools.Tool) []tools.Tool {
	if c.ov.Len() == 0 {
		return nil
	}
	return c.apply
}

// check records which entries were stale or unknown in the loaded catalog
// and how many cards the overlay changed.
func (c *cardFlags) check(snap *tools.Snapshot) {
	if c.ov.Len() == 0 {
		return
	}
	c.mu.Lock()
	ts := make([]tools.Tool, 0, len(c.raw))
	for _, t := range snap.Tools() {
		if r, ok := c.raw[t.ID]; ok {
			ts = append(ts, r)
		}
	}
	c.mu.Unlock()
	_, rep := c.ov.Apply(ts)
	c.problems = rep.Problems()
	c.changed = len(rep.Changed)
}

// warn prints each entry not applied, one line each, prefixed by prog.
func (c *cardFlags) warn(stderr io.Writer, prog string) {
	for _, p := range c.problems {
		fmt.Fprintf(stderr, "%s: warning: %s\n", prog, termtext.Line(p.String()))
	}
}

// rawSnapshot is the catalog as it was before the overlay.
func (c *cardFlags) rawSnapshot(snap *tools.Snapshot) (*tools.Snapshot, error) {
	reg := tools.NewRegistry()
	c.mu.Lock()
	ts := make([]tools.Tool, 0, snap.Len())
	for _, t := range snap.Tools() {
		if r, ok := c.raw[t.ID]; ok {
			ts = append(ts, r)
		} else {
			ts = append(ts, *t)
		}
	}
	c.mu.Unlock()
	if err := reg.Add(ts...); err != nil {
		return nil, err
	}
	return reg.Snapshot(), nil
}

const cardsUsage = `usage: toolgate cards hash --tools F...           print {"tool","hash"} per tool, to start an overlay
       toolgate cards check --tools F... --cards O...  report stale and unknown entries (exit 1 if any)
       toolgate cards learn --tools F... --log FILE [--tenant T] [--min-principals 3] [--max-per-principal 3] [--out FILE]
       toolgate cards suggest --tools F... --backend scripted|ollama|openai [--model M] --out FILE [--only-flagged] [--langs en,es,pl]`

// runCards: toolgate cards hash|check|learn|suggest.
func runCards(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, cardsUsage)
		return exitUsage
	}
	if strings.HasPrefix(args[0], "-") {
		// "cards --help" or a flag before the subcommand.
		fs, _ := catalogFlagSet("cards")
		if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
			return code
		}
		fmt.Fprintln(stderr, cardsUsage)
		return exitUsage
	}
	switch args[0] {
	case "hash", "check":
		return runCardsHash(ctx, args[0], args[1:], stdout, stderr)
	case "learn":
		return runCardsLearn(ctx, args[1:], stdin, stdout, stderr)
	case "suggest":
		return runCardsSuggest(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "toolgate cards: unknown command %q (hash, check, learn or suggest); see \"toolgate help cards\"\n", args[0])
	return exitUsage
}

// runCardsHash prints one {"tool","hash"} line per tool (hash), or the
// overlay's problems (check).
func runCardsHash(ctx context.Context, sub string, args []string, stdout, stderr io.Writer) int {
	prog := "toolgate cards " + sub
	fs, src := catalogFlagSet("cards " + sub)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	var required []string
	if sub == "check" {
		required = []string{"cards"}
	}
	if err := src.flagsErr(fs, required...); err != nil {
		return fail(stderr, prog, err)
	}
	reg, closeUpstreams, ok := src.open(ctx, quietLogger(), stderr, prog)
	if !ok {
		return exitUsage
	}
	defer closeUpstreams()
	snap := reg.Snapshot()
	if sub == "check" {
		for _, p := range src.cards.problems {
			fmt.Fprintln(stdout, termtext.Line(p.String()))
		}
		fmt.Fprintf(stdout, "%d entries; %d cards changed; %d not applied\n", src.cards.ov.Len(), src.cards.changed, len(src.cards.problems))
		if len(src.cards.problems) > 0 {
			return exitNegative
		}
		return exitOK
	}
	src.cards.warn(stderr, prog)
	entries := make([]cards.Entry, 0, snap.Len())
	for _, t := range snap.Tools() {
		entries = append(entries, cards.Entry{Tool: t.ID, Hash: cards.Hash(t)})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Tool < entries[j].Tool })
	if err := cards.Write(stdout, entries); err != nil {
		return fail(stderr, prog, err)
	}
	return exitOK
}

// fixedByCards lints the catalog as it was before the overlays and counts,
// by kind, the findings the overlays made go away.
func fixedByCards(ctx context.Context, c *cardFlags, snap *tools.Snapshot, after []lint.Finding, opts *lint.Options) (map[lint.Kind]int, error) {
	raw, err := c.rawSnapshot(snap)
	if err != nil {
		return nil, err
	}
	before, err := lint.Check(ctx, raw, opts)
	if err != nil {
		return nil, err
	}
	type key struct {
		tool  string
		kind  lint.Kind
		other string
	}
	// A finding is the same when its tool and kind are, and for a near
	// duplicate its other tool (a missing not_for's suggested sibling may
	// move when aliases change; the finding is still there).
	keyOf := func(f lint.Finding) key {
		if f.Kind != lint.NearDuplicate {
			f.Other = ""
		}
		return key{f.Tool, f.Kind, f.Other}
	}
	still := map[key]bool{}
	for _, f := range after {
		still[keyOf(f)] = true
	}
	fixed := map[lint.Kind]int{}
	for _, kind := range lint.Kinds {
		if !slices.Contains(opts.Skip, kind) {
			fixed[kind] = 0
		}
	}
	for _, f := range before {
		if !still[keyOf(f)] {
			fixed[f.Kind]++
		}
	}
	return fixed, nil
}

// fixedList formats fixed as "3 missing-aliases, 1 unfindable" (or "nothing").
func fixedList(fixed map[lint.Kind]int) string {
	var parts []string
	for _, kind := range lint.Kinds {
		if n := fixed[kind]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, kind))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// learnHistory is eval --history: it replays the first share of each
// tool's queries as usage, learns an overlay from their calls (hits and
// misses, as cards learn does) with its defaults, and returns the overlaid
// snapshot, the queries left to measure and a one-line account of what was
// learned.
func learnHistory(ctx context.Context, d *discovery.Discoverer, snap *tools.Snapshot, qs []discovery.Query, share float64, k int, lopts *cards.LearnOptions) (*tools.Snapshot, []discovery.Query, string, error) {
	hist, measured, err := discovery.SplitHistory(qs, share)
	if err != nil {
		return nil, nil, "", err
	}
	calls, err := cards.Replay(ctx, d, snap, hist, k)
	if err != nil {
		return nil, nil, "", err
	}
	entries, rep, err := cards.Learn(snap, calls, lopts)
	if err != nil {
		return nil, nil, "", err
	}
	ov, err := cards.New(entries)
	if err != nil {
		return nil, nil, "", err
	}
	ts := make([]tools.Tool, snap.Len())
	for i, t := range snap.Tools() {
		ts[i] = *t
	}
	ts, _ = ov.Apply(ts)
	reg := tools.NewRegistry()
	if err := reg.Add(ts...); err != nil {
		return nil, nil, "", err
	}
	missed := 0
	for _, c := range calls {
		if !c.Hit {
			missed++
		}
	}
	msg := fmt.Sprintf("history: %d queries replayed, %d of their %d tools missed; learned %d examples and %d tags for %d tools (%d requests unsupported, %d capped); measuring %d queries",
		len(hist), missed, len(calls), rep.Proposed, rep.Keywords, len(entries), rep.Unsupported, rep.Capped, len(measured))
	return reg.Snapshot(), measured, msg, nil
}
