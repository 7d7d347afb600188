package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/lint"
	"github.com/toolgate/toolgate/tools/mcp"
)

// pinFlags are --pins FILE and --unpinned POLICY of the commands that run
// upstream MCP tools (serve, mcp serve): the lock "toolgate mcp pin"
// writes, and what becomes of a tool it does not pin.
type pinFlags struct {
	file, unpinned string

	lock   *mcp.Lock // nil without --pins
	policy mcp.Unpinned
}

func (p *pinFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.file, "pins", "", "lock `file` of pinned upstream tool definitions (toolgate mcp pin): a tool whose definition differs is quarantined")
	fs.StringVar(&p.unpinned, "unpinned", "", "with --pins, a listed tool the lock does not pin is quarantined (default), allow (registered) or refuse (startup fails)")
}

// load reads the lock; --unpinned without --pins is a usage error.
func (p *pinFlags) load() error {
	if p.file == "" {
		if p.unpinned != "" {
			return errors.New("--unpinned needs --pins")
		}
		return nil
	}
	policy, err := mcp.ParseUnpinned(p.unpinned)
	if err != nil {
		return fmt.Errorf("--unpinned %q: want quarantine, allow or refuse", p.unpinned)
	}
	lock, err := mcp.LoadLock(p.file)
	if err != nil {
		return err
	}
	p.lock, p.policy = lock, policy
	return nil
}

// warn reports, one line per server, the tools each upstream's first
// listing quarantined; later quarantines go to the log and the metrics.
// Tool names are the server's text: quoted, so none reaches the terminal
// raw.
func (p *pinFlags) warn(stderr io.Writer, prog string, ups []*mcp.Upstream) {
	if p.lock == nil {
		return
	}
	for _, u := range ups {
		q := u.Quarantined()
		if len(q) == 0 {
			continue
		}
		parts := make([]string, len(q))
		for i, x := range q {
			parts[i] = fmt.Sprintf("%q %s", x.Tool, x.Reason)
		}
		fmt.Fprintf(stderr, "%s: warning: %s: %d tools quarantined by --pins %s (%s); review and re-pin with toolgate mcp pin\n",
			prog, u.Status().Server, len(q), p.file, strings.Join(parts, ", "))
	}
}

// The synopsis of "toolgate mcp pin" (its helps entry is below).
const mcpPinSynopsis = `toolgate mcp pin [--mcp "CMD ARGS"]... [--mcp-url URL]... [--mcp-config FILE] [--pins FILE [--check]]`

func init() {
	helps["mcp pin"] = cli.Usage{
		Synopsis: mcpPinSynopsis,
		Summary: "Pin the definitions of upstream MCP tools: write the lock (one \"SERVER/TOOL sha256:HEX\" line per tool) that mcp serve --pins checks, " +
			"and say on stderr what changed per server and, as warnings, what lint finds of tool poisoning in them; --check exits 1 instead of writing when the lock is stale.",
		Examples: []string{
			`toolgate mcp pin --mcp-config servers.json --pins mcp.pins && git diff mcp.pins`,
			`toolgate mcp pin --mcp-config servers.json --pins mcp.pins --check`,
		},
	}
}

// runMCPPin is "toolgate mcp pin": list each server's tools as it states
// them, hash them, and write the lock to --pins FILE (keeping the pins of
// servers not given) or stdout. The change per server, and the poisoning
// lint finds in the tools (warnPoisoning), go to stderr.
func runMCPPin(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const prog = "toolgate mcp pin"
	fs := flag.NewFlagSet("mcp pin", flag.ContinueOnError)
	var src catalogSources
	src.registerServers(fs)
	file := fs.String("pins", "", "the lock `file` to update (servers not given keep their pins); empty writes the lock to stdout")
	check := fs.Bool("check", false, "write nothing; exit 1 when the lock differs from what the servers list now")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := flagsErr(fs); err != nil {
		return fail(stderr, prog, err)
	}
	switch {
	case len(src.commands) == 0 && len(src.urls) == 0 && src.config == "":
		return fail(stderr, prog, errors.New("no server: give --mcp, --mcp-url or --mcp-config"))
	case *check && *file == "":
		return fail(stderr, prog, errors.New("--check needs --pins"))
	}
	servers, err := src.servers()
	if err != nil {
		return failLine(stderr, prog, err)
	}
	lock := mcp.NewLock()
	if _, err := os.Stat(*file); *file != "" && !errors.Is(err, os.ErrNotExist) {
		if lock, err = mcp.LoadLock(*file); err != nil {
			return failLine(stderr, prog, err)
		}
	}
	stale := false
	var served []tools.Tool
	for _, s := range servers {
		before := lock.Tools(s.Name)
		listed, err := mcp.ListTools(ctx, s, src.mcpOptions(quietLogger()))
		if err != nil {
			return failLine(stderr, prog, err)
		}
		if err := lock.Pin(s.Name, listed); err != nil {
			for _, e := range strings.Split(err.Error(), "\n") {
				fmt.Fprintf(stderr, "%s: warning: %s\n", prog, e)
			}
		}
		ts, _ := mcp.Tools(s, listed) // a tool left out is not served, so not linted
		served = append(served, ts...)
		d := diffPins(before, lock.Tools(s.Name))
		stale = stale || !d.same()
		fmt.Fprintf(stderr, "%s: %s: %s\n", prog, s.Name, d)
	}
	if err := warnPoisoning(ctx, stderr, prog, served); err != nil {
		return fail(stderr, prog, err)
	}
	text := mustText(lock)
	switch {
	case *check && stale:
		fmt.Fprintf(stderr, "%s: %s is stale; review the changes above and re-pin\n", prog, *file)
		return exitNegative
	case *check:
		return exitOK
	case *file == "":
		stdout.Write(text)
		return exitOK
	}
	if err := replaceFile(*file, func(w io.Writer) error { _, err := w.Write(text); return err }); err != nil {
		return fail(stderr, prog, err)
	}
	return exitOK
}

// poisoningKinds are the lint kinds mcp pin checks: tool poisoning, what
// a definition does to reach the model or other tools' requests. The
// card kinds (aliases, not_for, findability) are lint's, not a pin
// reviewer's: an MCP definition has no card.
var poisoningKinds = []lint.Kind{lint.Instructions, lint.NamesOtherTool, lint.RepeatedText, lint.AliasFlood, lint.LongText}

// warnPoisoning lints the tools of every server given, together (a tool
// may name another server's), for [poisoningKinds] and prints each
// finding on stderr as a warning, one escaped line each: the reviewer
// reads them before committing the lock; they refuse nothing.
func warnPoisoning(ctx context.Context, stderr io.Writer, prog string, ts []tools.Tool) error {
	reg := tools.NewRegistry()
	if err := reg.Add(ts...); err != nil {
		return err
	}
	opts := &lint.Options{}
	for _, k := range lint.Kinds {
		if !slices.Contains(poisoningKinds, k) {
			opts.Skip = append(opts.Skip, k)
		}
	}
	findings, err := lint.Check(ctx, reg.Snapshot(), opts)
	if err != nil {
		return err
	}
	for _, f := range findings {
		fmt.Fprintf(stderr, "%s: warning: %s\n", prog, termtext.Line(f.String()))
	}
	return nil
}

func mustText(l *mcp.Lock) []byte {
	b, _ := l.MarshalText() // never fails
	return b
}

// pinDiff is how one server's pins change: tool names by kind.
type pinDiff struct {
	changed, added, removed []string
	unchanged               int
}

func diffPins(old, now map[string]string) pinDiff {
	var d pinDiff
	for t, h := range now {
		switch o, ok := old[t]; {
		case !ok:
			d.added = append(d.added, t)
		case o != h:
			d.changed = append(d.changed, t)
		default:
			d.unchanged++
		}
	}
	for t := range old {
		if _, ok := now[t]; !ok {
			d.removed = append(d.removed, t)
		}
	}
	sort.Strings(d.changed)
	sort.Strings(d.added)
	sort.Strings(d.removed)
	return d
}

func (d pinDiff) same() bool { return len(d.changed)+len(d.added)+len(d.removed) == 0 }

// String reads "2 changed ("a", "b"), 1 new ("c"), 0 removed, 5 unchanged",
// the names quoted: they are the server's text.
func (d pinDiff) String() string {
	names := func(n int, what string, list []string) string {
		if len(list) == 0 {
			return fmt.Sprintf("%d %s", n, what)
		}
		q := make([]string, len(list))
		for i, s := range list {
			q[i] = fmt.Sprintf("%q", s)
		}
		return fmt.Sprintf("%d %s (%s)", n, what, strings.Join(q, ", "))
	}
	return strings.Join([]string{names(len(d.changed), "changed", d.changed), names(len(d.added), "new", d.added),
		names(len(d.removed), "removed", d.removed), fmt.Sprintf("%d unchanged", d.unchanged)}, ", ")
}
