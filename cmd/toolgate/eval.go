package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/embedflags"
	"github.com/toolgate/toolgate/internal/report"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/cards"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

func init() { commands["eval"] = runEval }

// htmlRankDepth is how deep eval --format html ranks a miss's right tool.
const htmlRankDepth = 100

// describe names the catalog sources for a report: files and overlays as
// given, an upstream server by its name or program (not its arguments,
// which may hold a secret), a URL without user, query or fragment.
func (c *catalogSources) describe() []string {
	var out []string
	for _, f := range c.files {
		out = append(out, f)
	}
	for _, cmd := range c.commands {
		name, line, named := strings.Cut(cmd, "=")
		if !named || strings.ContainsAny(name, " \t") {
			line = cmd
			name = ""
		}
		if fields := strings.Fields(line); name == "" && len(fields) > 0 {
			name = fields[0]
		}
		out = append(out, "mcp "+name)
	}
	for _, u := range c.urls {
		name, raw, named := strings.Cut(u, "=")
		if !named || strings.Contains(name, "/") {
			raw, name = u, ""
		}
		if p, err := url.Parse(raw); err == nil {
			p.User, p.RawQuery, p.Fragment = nil, "", ""
			raw = p.String()
		}
		out = append(out, strings.TrimSpace("mcp-url "+name+" "+raw))
	}
	if c.config != "" {
		out = append(out, "mcp-config "+c.config)
	}
	for _, f := range c.cards.files {
		out = append(out, "cards "+f)
	}
	return out
}

// openLexicon returns the embedded lexicon plus the --lexicon KIND=FILE files.
func openLexicon(specs []string) (*lexicon.Lexicon, error) {
	var files []lexicon.File
	for _, spec := range specs {
		f, err := lexicon.ParseFile(spec)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return lexicon.Open(files...)
}

// runEval: toolgate eval --tools F --queries Q [--k 5] [--cards O] [--lexicon KIND=FILE] [--history share]
// [--backend B [--model M] [--library F] [--reformulate-below 0.3]] --format json.
// Exit 0 when no unauthorized tool leaked, 1 when one did, 2 for usage or
// input errors.
func runEval(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	var src catalogSources
	src.register(fs)
	queriesPath := fs.String("queries", "", "JSON Lines queries `file`, or - for stdin")
	k := fs.Int("k", 5, "shortlist size")
	format := fs.String("format", "text", "output format: text, json, or html (one self-contained page)")
	indexPath := indexFlag(fs)
	var mf modelFlags
	mf.register(fs, "reformulate low-confidence requests with a model: scripted (echoes the request: wiring only)")
	below := fs.Float64("reformulate-below", runtime.ModelReformulateBelow, "with --backend, the confidence under which the model rewrites the request")
	rtimeout := fs.Duration("reformulate-timeout", 2*time.Second, "with --backend, the bound on one rewrite")
	var lexFiles multiFlag
	fs.Var(&lexFiles, "lexicon", "optional lexicon `KIND=FILE` added to the embedded one: en (English synonym groups), es or pl (→ English), derived (noun: verb), e.g. the files tools/discovery/lexicon/internal/gen -optional writes (see tools/discovery/lexicon/data/README.md); repeatable")
	var learn cards.LearnOptions
	fs.IntVar(&learn.MinPrincipals, "learn-min-principals", 0, "with --history, cards learn's --min-principals (0: its default, 3)")
	fs.IntVar(&learn.MaxExamples, "learn-examples", 0, "with --history, the examples learned per tool at most (0: the default, 64)")
	fs.IntVar(&learn.MaxKeywords, "learn-tags", 0, "with --history, the tags learned per tool at most (0: the default, 32; negative: none)")
	var embed embedflags.Flags
	embed.Register(fs)
	embedWeights := fs.String("embed-weights", "", "with --embed-model, score each of these comma-separated `weights` (e.g. 0.5,0.6,0.7,0.8,0.9) to calibrate --embed-weight on a dev split")
	noBgIDF := fs.Bool("no-background-idf", false, "do not cap each word's IDF with its frequency in a large catalog of tool descriptions (discovery.Options.NoBackgroundIDF)")
	noCompanions := fs.Bool("no-companions", false, "do not add the tool that produces a token or an id a shortlisted tool needs (discovery.Options.NoCompanions)")
	history := fs.Float64("history", 0, "replay this `share` of each tool's queries as usage, learn an overlay from its calls, hits and misses (cards learn), measure the rest")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	switch {
	case src.empty():
		fmt.Fprintln(stderr, "toolgate eval: a catalog is required: --tools, --mcp, --mcp-url or --mcp-config")
		return exitUsage
	case *queriesPath == "":
		fmt.Fprintln(stderr, "toolgate eval: --queries is required")
		return exitUsage
	case fs.NArg() != 0:
		fmt.Fprintf(stderr, "toolgate eval: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	case *k < 1:
		fmt.Fprintf(stderr, "toolgate eval: --k %d must be at least 1\n", *k)
		return exitUsage
	case *format != "text" && *format != "json" && *format != "html":
		fmt.Fprintf(stderr, "toolgate eval: unknown --format %q (want text, json or html)\n", *format)
		return exitUsage
	case learn.MinPrincipals < 0 || learn.MaxExamples < 0:
		fmt.Fprintln(stderr, "toolgate eval: --learn-min-principals and --learn-examples must not be negative")
		return exitUsage
	case !(*history >= 0 && *history < 1): // NaN too
		fmt.Fprintf(stderr, "toolgate eval: --history %v must be in [0,1)\n", *history)
		return exitUsage
	}
	src.useIndex(*indexPath)
	reg, closeUpstreams, ok := src.openWarned(ctx, stderr, "toolgate eval")
	if !ok {
		return exitUsage
	}
	defer closeUpstreams()
	snap := reg.Snapshot()
	f, name, err := openInput("queries", *queriesPath, stdin)
	if err != nil {
		return fail(stderr, "toolgate eval", err)
	}
	qs, err := discovery.ReadQueries(f, name)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "toolgate eval: %v\n", err)
		return exitUsage
	}
	if len(qs) == 0 {
		fmt.Fprintf(stderr, "toolgate eval: %s: no queries (want JSON Lines, one {\"query\",\"relevant\":[...]} per line)\n", *queriesPath)
		return exitUsage
	}
	warnUnknownRelevant(stderr, snap, qs)
	embedModel, err := embed.Options(stderr, embedAPIs)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate eval: %v\n", err)
		return exitUsage
	}
	weights, err := weightList(*embedWeights)
	if err != nil || (len(weights) > 0 && embedModel == nil) {
		fmt.Fprintf(stderr, "toolgate eval: %v\n", cmp.Or(err, errors.New("--embed-weights needs --embed-model")))
		return exitUsage
	}
	metrics := prometheus.NewRegistry()
	dopts, err := reformulation(mf, *below, *rtimeout, metrics)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate eval: %v\n", err)
		return exitUsage
	}
	if len(lexFiles) > 0 {
		if dopts == nil {
			dopts = &discovery.Options{}
		}
		if dopts.Lexicon, err = openLexicon(lexFiles); err != nil {
			fmt.Fprintf(stderr, "toolgate eval: --lexicon: %v\n", err)
			return exitUsage
		}
	}
	if *noBgIDF || *noCompanions {
		if dopts == nil {
			dopts = &discovery.Options{}
		}
		dopts.NoBackgroundIDF, dopts.NoCompanions = *noBgIDF, *noCompanions
	}
	d, err := discovery.New(dopts)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate eval: %v\n", err)
		return exitUsage
	}
	if *history > 0 {
		var learned string
		if snap, qs, learned, err = learnHistory(ctx, d, snap, qs, *history, *k, &learn); err != nil {
			fmt.Fprintf(stderr, "toolgate eval: --history: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(stderr, "toolgate eval: %s\n", learned)
	}
	if err := prepareIndex(ctx, d, snap, *indexPath, stderr, "toolgate eval"); err != nil {
		fmt.Fprintf(stderr, "toolgate eval: %v\n", err)
		return exitUsage
	}
	eopts := &discovery.EvalOptions{K: *k}
	if *format == "html" {
		// The page gives each miss the rank of its right tool.
		eopts.RankDepth = htmlRankDepth
	}
	var rep *discovery.Report
	if embedModel != nil {
		var o discovery.Options
		if dopts != nil {
			o = *dopts
		}
		rep, err = evalModel(ctx, stderr, o, embedModel, weights, snap, qs, eopts)
	} else {
		rep, err = discovery.Evaluate(ctx, d, snap, qs, eopts)
	}
	if err != nil {
		fmt.Fprintf(stderr, "toolgate eval: %v\n", err)
		return exitUsage
	}
	if calls := reformulations(metrics); calls != "" {
		// On stderr, so that --format json stays the report alone.
		fmt.Fprintf(stderr, "toolgate eval: reformulation below confidence %v: %s\n", *below, calls)
	}
	switch *format {
	case "html":
		info := &report.EvalInfo{Version: versionLine(debug.ReadBuildInfo()), Catalogs: src.describe(), Queries: name,
			Date: time.Now(), RankDepth: eopts.RankDepth}
		if err := report.Eval(stdout, "toolgate eval: "+filepath.Base(name), rep, info); err != nil {
			fmt.Fprintf(stderr, "toolgate eval: %v\n", err)
			return exitUsage
		}
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "toolgate eval: %v\n", err)
			return exitUsage
		}
	default:
		fmt.Fprintf(stdout, "%d queries (k=%d): recall@1 %.3f  recall@3 %.3f  recall@5 %.3f  MRR %.3f\n",
			rep.Queries, rep.K, rep.RecallAt1, rep.RecallAt3, rep.RecallAt5, rep.MRR)
		fmt.Fprintf(stdout, "denied leaks %d; latency p50 %.0f µs, p99 %.0f µs; %d denied and %d unanswerable queries not scored\n",
			rep.DeniedLeaks, rep.P50us, rep.P99us, rep.Denied, rep.Unanswerable)
		for _, g := range []struct {
			title string
			m     map[string]discovery.Group
		}{{"KIND", rep.ByKind}, {"LANG", rep.ByLang}} {
			if len(g.m) == 0 {
				continue
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "\n%s\tQUERIES\tRECALL@5\tMRR\n", g.title)
			keys := make([]string, 0, len(g.m))
			for key := range g.m {
				keys = append(keys, key)
			}
			sort.Strings(keys)
			for _, key := range keys {
				fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\n", termtext.Line(key), g.m[key].Queries, g.m[key].RecallAt5, g.m[key].MRR)
			}
			tw.Flush()
		}
	}
	if rep.DeniedLeaks > 0 {
		return exitNegative
	}
	return exitOK
}

// warnUnknownRelevant reports the queries whose relevant entries name no
// tool of the catalog: they are scored (a miss each), as the contract
// says, but a whole file of them is usually a namespace that differs
// (--tools FILE names tools by the file's stem; --tools NS=FILE by NS).
func warnUnknownRelevant(stderr io.Writer, snap *tools.Snapshot, qs []discovery.Query) {
	names := map[string]bool{}
	for _, t := range snap.Tools() {
		names[t.Name()] = true
	}
	n, first := 0, ""
	for _, q := range qs {
		for _, r := range q.Relevant {
			if _, ok := snap.Lookup(r); ok || names[r] {
				continue
			}
			if n++; first == "" {
				first = r
			}
		}
	}
	if n > 0 {
		fmt.Fprintf(stderr, "toolgate eval: warning: %d relevant entries name no tool of the catalog (first %q), each scored as a miss; check the namespaces (--tools NS=FILE)\n", n, first)
	}
}
