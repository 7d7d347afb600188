package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/toolgate/toolgate/internal/embedflags"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

func init() { commands["discover"] = runDiscover }

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

// Set appends v; an empty value (a shell variable that was not set) is
// refused here, where the flag can still be named.
func (m *multiFlag) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("empty value")
	}
	*m = append(*m, v)
	return nil
}

// firstLine keeps a multi-error's first line: the CLI reports one line.
func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

type discoverOutput struct {
	Query           string                `json:"query"`
	Candidates      []discoveredCandidate `json:"candidates"`
	Authorized      int                   `json:"authorized"`
	ShortlistTokens int                   `json:"shortlist_tokens"`
	CatalogTokens   int                   `json:"catalog_tokens"`
	Reformulated    bool                  `json:"reformulated"`
}

type discoveredCandidate struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"`
}

// runDiscover: toolgate discover --tools F [--tools F2] [--scopes a,b] [--k 5] [--format json] "request".
// Exit 0 with candidates, 2 for usage or input errors, 1 when nothing
// matched: the output is still printed (no candidates), and one line on
// stderr says so. The shortlist holds only tools the request matched, so
// it may be shorter than --k.
func runDiscover(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	const prog = "toolgate discover"
	fs, src := catalogFlagSet("discover")
	scopes := fs.String("scopes", "", "comma-separated scopes the caller holds (absent: every scope)")
	k := fs.Int("k", 5, "shortlist size")
	format := fs.String("format", "text", "output format: text or json")
	indexPath := indexFlag(fs)
	var embed embedflags.Flags
	embed.Register(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	switch {
	case src.empty():
		return fail(stderr, prog, errNoCatalog)
	case fs.NArg() == 1 && strings.TrimSpace(fs.Arg(0)) == "":
		return fail(stderr, prog, errors.New(`the request is empty: say what the tool should do, e.g. "close issue #42"`))
	case fs.NArg() > 1:
		return fail(stderr, prog, fmt.Errorf(`want exactly one request argument, got %d (%s): quote the request, e.g. "close issue #42"`,
			fs.NArg(), quotedArgs(fs.Args())))
	case fs.NArg() != 1:
		return fail(stderr, prog, errors.New(`want exactly one request argument, e.g. "close issue #42"`))
	case *k < 1:
		return fail(stderr, prog, fmt.Errorf("--k %d must be at least 1", *k))
	}
	if err := formatErr(*format, "text", "json"); err != nil {
		return fail(stderr, prog, err)
	}
	model, err := embed.Options(stderr, embedAPIs)
	if err != nil {
		return fail(stderr, prog, err)
	}
	src.useIndex(*indexPath)
	// The discoverer (its lexicon) and the token tables the answer counts
	// with are made beside the catalog's load, which is most of a
	// restart with --index.
	type made struct {
		d   *discovery.Discoverer
		err error
	}
	ready := make(chan made, 1)
	go func() {
		d, err := discovery.New(&discovery.Options{Model: model})
		tokens.Count("")
		ready <- made{d, err}
	}()
	reg, closeUpstreams, ok := src.openWarned(ctx, stderr, prog)
	m := <-ready
	if !ok {
		return exitUsage
	}
	defer closeUpstreams()
	snap := reg.Snapshot()
	p := tools.Principal{ID: "cli", Tenant: "cli", Scopes: snap.Scopes()}
	if fs.Lookup("scopes") != nil && isSet(fs, "scopes") {
		p.Scopes = splitList(*scopes)
	}
	d, err := m.d, m.err
	if err != nil {
		return fail(stderr, prog, err)
	}
	if err := prepareIndex(ctx, d, snap, *indexPath, stderr, prog); err != nil {
		return fail(stderr, prog, err)
	}
	// With --embed-model, the cards first (a failure is warned about, and
	// the built-in ranking answers); without, a no-op.
	_ = d.EmbedCatalog(ctx, snap)
	sl, err := d.Shortlist(ctx, snap.Authorize(p), discovery.Request{Query: fs.Arg(0), K: *k})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		return fail(stderr, prog, err)
	}
	out := discoverOutput{Query: sl.Query, Candidates: []discoveredCandidate{}, Authorized: sl.Authorized,
		ShortlistTokens: sl.ShortlistTokens, CatalogTokens: sl.CatalogTokens, Reformulated: sl.Reformulated}
	for _, c := range sl.Candidates {
		out.Candidates = append(out.Candidates, discoveredCandidate{Name: c.Tool.ID, Score: round(c.Score, 4)})
	}
	if *format == "json" {
		if err := writeJSON(stdout, out); err != nil {
			return fail(stderr, prog, err)
		}
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		if len(sl.Candidates) > 0 {
			fmt.Fprintf(tw, "RANK\tTOOL\tSCORE\tSUMMARY\n")
		}
		for i, c := range sl.Candidates {
			fmt.Fprintf(tw, "%d\t%s\t%.3f\t%s\n", i+1, termtext.Line(c.Tool.ID), c.Score, truncate(termtext.Line(c.Tool.Card.Summary), 70))
		}
		tw.Flush()
		fmt.Fprintf(stdout, "\n%d of %d authorized tools; shortlist %d tokens vs %d for the whole catalog; confidence %.2f",
			len(sl.Candidates), sl.Authorized, sl.ShortlistTokens, sl.CatalogTokens, sl.Confidence)
		if sl.Reformulated {
			fmt.Fprintf(stdout, "; reformulated as %q", sl.ReformulatedQuery)
		}
		if sl.Model != "" {
			fmt.Fprintf(stdout, "; embedding model: %s", sl.Model)
		}
		fmt.Fprintln(stdout)
	}
	if len(sl.Candidates) == 0 {
		if snap.Len() > 0 { // else the catalog's warning said why
			fmt.Fprintf(stderr, "%s: %s\n", prog, noMatch(sl))
		}
		return exitNegative
	}
	return exitOK
}

// noMatch is the reason a shortlist is empty, for stderr: the caller may
// use no tool, or the request matched none of those it may use (no word,
// identifier or n-gram in common: [discovery.Shortlist.Candidates]).
func noMatch(sl *discovery.Shortlist) string {
	if sl.Authorized == 0 {
		return "no tool matches: the caller may use none of the catalog's tools (see --scopes)"
	}
	return fmt.Sprintf("no tool matches %s among the %d authorized tools: rephrase it with what the tool should do",
		strconv.Quote(sl.Query), sl.Authorized)
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func round(f float64, places int) float64 {
	p := 1.0
	for range places {
		p *= 10
	}
	return float64(int64(f*p+0.5)) / p
}

// quotedArgs is args as Go strings ("close" "issue"), control characters
// escaped, cut at 200 bytes: what a usage error shows of them.
func quotedArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return textcut.Shorten(strings.Join(q, " "), 200)
}
