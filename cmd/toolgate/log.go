package main

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	_ "modernc.org/sqlite" // the SQLite discovery log

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/sqliteutil"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/tools/cards"
	"github.com/toolgate/toolgate/tools/discovery"
)

func init() {
	commands["log"] = runLog
	helps["log"] = cli.Usage{Synopsis: strings.TrimPrefix(logUsage, "usage: "),
		Summary:  "Read a discovery log (JSON Lines or SQLite): the requests whose first shortlist lacked the tool finally called, per tool; exit 1 with misses.",
		Examples: []string{`toolgate log misses --log discovery.jsonl --tenant acme`}}
}

const logUsage = `usage: toolgate log [misses] --log FILE [--tenant T] [--format text|json]`

// runLog: toolgate log misses --log FILE|- (- for JSON Lines on stdin). It lists, per tool, the requests
// whose first shortlist lacked the tool finally called. Exit 0 with none,
// 1 with misses, 2 for usage or input errors.
func runLog(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	const prog = "toolgate log misses"
	if len(args) == 0 || (args[0] != "misses" && !strings.HasPrefix(args[0], "-")) {
		fmt.Fprintln(stderr, logUsage)
		return exitUsage
	}
	if args[0] == "misses" {
		args = args[1:]
	}
	fs := flag.NewFlagSet("log", flag.ContinueOnError)
	logPath := fs.String("log", "", "discovery log `file`: JSON Lines (discovery.JSONLog) or SQLite (discovery.SQLLog); - reads JSON Lines from stdin")
	tenant := fs.String("tenant", "", "only this tenant's misses")
	format := fs.String("format", "text", "output format: text or json")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := cmp.Or(flagsErr(fs, "log"), formatErr(*format, "text", "json")); err != nil {
		return fail(stderr, prog, err)
	}
	rep, err := readMisses(ctx, *logPath, stdin, *tenant, stderr, prog)
	if err != nil {
		return fail(stderr, prog, err)
	}
	byTool := rep.ByTool()
	if *format == "json" {
		out := struct {
			Calls    int                    `json:"calls"`
			Hits     int                    `json:"hits"`
			Misses   int                    `json:"misses"`
			Unlinked int                    `json:"unlinked"`
			Tools    []discovery.ToolMisses `json:"tools"`
		}{rep.Calls, rep.Hits, len(rep.Misses), rep.Unlinked, byTool}
		if out.Tools == nil {
			out.Tools = []discovery.ToolMisses{}
		}
		if err := writeJSON(stdout, out); err != nil {
			return fail(stderr, prog, err)
		}
	} else {
		fmt.Fprintf(stdout, "%d calls linked to their request: %d found by the first shortlist, %d missed; %d calls not linked\n",
			rep.Calls, rep.Hits, len(rep.Misses), rep.Unlinked)
		if len(byTool) > 0 {
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "\nTENANT\tTOOL\tMISSES\tPRINCIPALS\tMOST MISSED REQUEST\n")
			for _, t := range byTool {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", termtext.Line(t.Tenant), termtext.Line(t.Tool), t.Count, t.Principals,
					truncate(fmt.Sprintf("%q ×%d", t.Queries[0].Query, t.Queries[0].Count), 70))
			}
			tw.Flush()
		}
	}
	if len(rep.Misses) > 0 {
		return exitNegative
	}
	return exitOK
}

// readMisses reads a JSON Lines or SQLite discovery log (told apart by the
// SQLite header) and links its calls to their requests, keeping one
// tenant's when tenant is set. Warnings go to stderr, prefixed by prog.
func readMisses(ctx context.Context, path string, stdin io.Reader, tenant string, stderr io.Writer, prog string) (*discovery.MissReport, error) {
	entries, err := readLog(ctx, path, stdin, stderr, prog)
	if err != nil {
		return nil, err
	}
	if tenant != "" {
		kept := entries[:0]
		for _, e := range entries {
			if e.Tenant == tenant {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	return discovery.Misses(entries), nil
}

// readLog reads the log at path; "-" is a JSON Lines log on stdin (a
// SQLite database is read by path).
func readLog(ctx context.Context, path string, stdin io.Reader, stderr io.Writer, prog string) ([]discovery.Entry, error) {
	if path == stdinPath {
		head := make([]byte, 16)
		n, _ := io.ReadFull(stdin, head)
		if bytes.Equal(head[:n], []byte("SQLite format 3\x00")) {
			return nil, fmt.Errorf("%s: a SQLite log is read by path: give --log FILE", stdinName)
		}
		return readJSONLog(io.MultiReader(bytes.NewReader(head[:n]), stdin), stdinName, stderr, prog)
	}
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: cannot read log: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	if bytes.Equal(head[:n], []byte("SQLite format 3\x00")) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		db, err := sql.Open("sqlite", sqliteutil.FileURI(abs, url.Values{"mode": {"ro"}}))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer db.Close()
		entries, err := discovery.ReadSQLLog(ctx, db)
		if errors.Is(err, discovery.ErrNoSQLLog) {
			return nil, fmt.Errorf("%s: holds no toolgate discovery log (a SQLite database without the discovery_log table)", path)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return entries, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return readJSONLog(f, path, stderr, prog)
}

// readJSONLog reads a JSON Lines log named name from r, warning on stderr
// about the torn lines it skips.
func readJSONLog(r io.Reader, name string, stderr io.Writer, prog string) ([]discovery.Entry, error) {
	entries, torn, err := discovery.ReadJSONLog(r, name)
	if err != nil {
		return nil, err
	}
	// One torn line alone is a crash in the first write; more, with not
	// one entry, is another file given by mistake.
	if len(entries) == 0 && len(torn) > 1 {
		return nil, fmt.Errorf("%s:%d: not a discovery log: none of its %d lines is a JSON value", name, torn[0], len(torn))
	}
	if n := len(torn); n > 0 {
		fmt.Fprintf(stderr, "%s: warning: %s:%d: not a JSON value (a write cut short by a crash, or still in progress); %d such lines skipped\n", prog, name, torn[0], n)
	}
	return entries, nil
}

// runCardsLearn: toolgate cards learn --tools F --log FILE|- [--tenant T]
// [--min-principals 3] [--max-per-principal 3] [--out FILE]. It writes the
// proposed overlay (stdout by default) for a person to review; nothing is
// applied. Exit 0 with a proposal, 1 with nothing to propose, 2 for usage
// or input errors.
func runCardsLearn(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	const prog = "toolgate cards learn"
	fs, src := catalogFlagSet("cards learn")
	logPath := fs.String("log", "", "discovery log `file` (JSON Lines or SQLite); - reads JSON Lines from stdin")
	tenant := fs.String("tenant", "", "the tenant to learn for (required when the log holds several)")
	minPrincipals := fs.Int("min-principals", 3, "distinct principals a request's wording needs before it is proposed")
	perPrincipal := fs.Int("max-per-principal", 3, "requests one principal contributes per tool")
	outPath := fs.String("out", "", "write the overlay to `file` instead of stdout")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := src.flagsErr(fs, "log"); err != nil {
		return fail(stderr, prog, err)
	}
	if *minPrincipals < 1 || *perPrincipal < 1 {
		return fail(stderr, prog, errors.New("--min-principals and --max-per-principal must be at least 1"))
	}
	reg, closeUpstreams, ok := src.openWarned(ctx, stderr, prog)
	if !ok {
		return exitUsage
	}
	defer closeUpstreams()
	rep, err := readMisses(ctx, *logPath, stdin, *tenant, stderr, prog)
	if err != nil {
		return fail(stderr, prog, err)
	}
	entries, lrep, err := cards.Learn(reg.Snapshot(), rep.Linked, &cards.LearnOptions{Tenant: *tenant,
		MinPrincipals: *minPrincipals, MaxPerPrincipal: *perPrincipal})
	if err != nil {
		if errors.Is(err, cards.ErrTenants) {
			err = fmt.Errorf("the log holds several tenants' calls: choose one with --tenant (learning never crosses tenants)")
		}
		return fail(stderr, prog, err)
	}
	w := stdout
	if *outPath != "" {
		f, err := os.Create(*outPath)
		if err != nil {
			return fail(stderr, prog, err)
		}
		defer f.Close()
		w = f
	}
	if err := cards.Write(w, entries); err != nil {
		return fail(stderr, prog, err)
	}
	fmt.Fprintf(stderr, "%s: tenant %q: %d calls (%d missed), %d left out (a tool the catalog lacks or the tenant may not use, or no usable request); proposed %d examples and %d tags for %d tools; %d requests lacked support from %d principals, %d were over the caps; review before use\n",
		prog, lrep.Tenant, len(rep.Linked), len(rep.Misses), lrep.Skipped, lrep.Proposed, lrep.Keywords, len(entries), lrep.Unsupported, *minPrincipals, lrep.Capped)
	if len(entries) == 0 {
		return exitNegative
	}
	return exitOK
}
