package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/cards"
	"github.com/toolgate/toolgate/tools/lint"
)

func init() {
	helps["cards suggest"] = cli.Usage{
		Synopsis: `toolgate cards suggest --tools F... --backend scripted|ollama|openai|local [--model M] [--library F] --out FILE [--only-flagged] [--langs en,es,pl]`,
		Summary: "Ask a model for an overlay entry per tool (aliases, 3–5 example requests, a not_for naming lint's nearest sibling), constrained and validated; " +
			"entries already in --out for the tool's current hash are kept (a re-run costs nothing; an interrupted run resumes).",
		Examples: []string{`toolgate cards suggest --tools github=mcp-server-github.json --backend ollama --model qwen3:8b --out github.cards.jsonl --only-flagged`},
	}
}

// runCardsSuggest: toolgate cards suggest. Exit 0 when every tool has an
// entry, 1 when some suggestions failed (the others are written), 2 for
// usage or input errors.
func runCardsSuggest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const prog = "toolgate cards suggest"
	fs, src := catalogFlagSet("cards suggest")
	var mf modelFlags
	mf.register(fs, "scripted (a stand-in built from each card: wiring only)")
	outPath := fs.String("out", "", "the overlay `file` to write; its entries for unchanged tools are kept")
	onlyFlagged := fs.Bool("only-flagged", false, "only tools lint flags for missing aliases or not_for")
	langs := fs.String("langs", "en", "comma-separated languages of the example requests (en, es, pl)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := src.flagsErr(fs, "backend", "out"); err != nil {
		return fail(stderr, prog, err)
	}
	// The languages discovery analyses: examples in another would be
	// indexed as words it cannot stem or translate.
	for _, l := range splitList(*langs) {
		if !slices.Contains([]string{"en", "es", "pl"}, l) {
			return fail(stderr, prog, fmt.Errorf("--langs: %q is not one of en, es, pl (the languages discovery analyses)", l))
		}
	}
	b, mode, err := modelBackend(mf, cardStandIn{})
	if err != nil {
		return fail(stderr, prog, err)
	}
	reg, closeUpstreams, ok := src.openWarned(ctx, stderr, prog)
	if !ok {
		return exitUsage
	}
	defer closeUpstreams()
	snap := reg.Snapshot()
	findings, err := lint.Check(ctx, snap, &lint.Options{Skip: []lint.Kind{lint.Unfindable}})
	if err != nil {
		return fail(stderr, prog, err)
	}
	sibling, flagged := map[string]string{}, map[string]bool{}
	for _, f := range findings {
		if f.Kind == lint.MissingNotFor && f.Other != "" {
			sibling[f.Tool] = f.Other
		}
		if f.Kind == lint.MissingNotFor || f.Kind == lint.MissingAliases {
			flagged[f.Tool] = true
		}
	}
	redo := func(id string) bool { return !*onlyFlagged || flagged[id] }
	kept, stale, err := resumeOverlay(*outPath, snap, redo)
	if err != nil {
		return fail(stderr, prog, err)
	}
	f, err := os.OpenFile(*outPath, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fail(stderr, prog, fmt.Errorf("%s: cannot write: %w", *outPath, pathCause(err)))
	}
	defer f.Close()
	var todo []*tools.Tool
	for _, t := range snap.Tools() {
		if _, done := kept[t.ID]; !done && redo(t.ID) {
			todo = append(todo, t)
		}
	}
	// The progress line is the program's own terminal codes: it goes to
	// the terminal itself, the tool's ID escaped.
	tty, progress := isTerminal(termtext.Raw(stderr)), termtext.Raw(stderr)
	var names []string
	for _, t := range snap.Tools() {
		names = append(names, t.ID)
	}
	opts := &runtime.SuggestOptions{Mode: mode, Langs: splitList(*langs), Names: names}
	failed := 0
	for i, t := range todo {
		if tty {
			fmt.Fprintf(progress, "\r\033[K[%d/%d] %s", i+1, len(todo), termtext.Line(t.ID))
		}
		e, err := runtime.SuggestCard(ctx, b, t, sibling[t.ID], opts)
		if err != nil {
			if tty {
				fmt.Fprint(stderr, "\n") // end the progress line
			}
			if ctx.Err() != nil {
				fmt.Fprintf(stderr, "%s: interrupted after %d of %d; run again to resume\n", prog, i, len(todo))
				return exitUsage
			}
			failed++
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			continue
		}
		var line bytes.Buffer
		if err := cards.Write(&line, []cards.Entry{e}); err != nil {
			return fail(stderr, prog, err)
		}
		// One write and a sync per entry: a crash loses at most the line
		// being written, which resumeOverlay drops.
		_, err = f.Write(line.Bytes())
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			if tty {
				fmt.Fprint(stderr, "\n")
			}
			return fail(stderr, prog, fmt.Errorf("%s: cannot write: %w", *outPath, pathCause(err)))
		}
	}
	if tty {
		fmt.Fprint(progress, "\r\033[K")
	}
	fmt.Fprintf(stderr, "%s: %d entries kept from %s (%d stale dropped), %d suggested, %d failed; review before use\n", prog, len(kept), *outPath, stale, len(todo)-failed, failed)
	if failed > 0 {
		return exitNegative
	}
	return exitOK
}

// resumeOverlay reads what an earlier run wrote to path (if anything),
// drops a torn last line and the entries of tools of the catalog that
// changed since (stale) and that this run redoes (redo), rewrites the file
// with the rest (atomically) and returns the entries kept for the
// catalog's tools, by tool, and how many stale entries it dropped. Entries
// for tools the catalog lacks (another catalog's, written to the same
// file, or an upstream that is down), stale entries of tools not redone
// (--only-flagged) and namespace entries a person added are kept as they
// are: a run never loses what it was not asked to redo.
func resumeOverlay(path string, snap *tools.Snapshot, redo func(id string) bool) (kept map[string]cards.Entry, stale int, err error) {
	kept = map[string]cards.Entry{}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, 0, fmt.Errorf("%s: cannot read: %w", path, pathCause(err))
	}
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		if json.Valid(data[i+1:]) {
			data = append(data, '\n') // a complete last line without its newline
		} else {
			data = data[:i+1] // a torn last line from an interrupted write
		}
	}
	var entries []cards.Entry
	if len(bytes.TrimSpace(data)) > 0 {
		ov, err := cards.Parse(bytes.NewReader(data), path)
		if err != nil {
			return nil, 0, err
		}
		for _, e := range ov.Entries() {
			if _, isNS := e.Namespace(); !isNS {
				if i, ok := snap.Lookup(e.Tool); ok {
					switch {
					case cards.Hash(snap.Tool(i)) == e.Hash:
						kept[e.Tool] = *e
					case redo(e.Tool):
						stale++
						continue
					}
				}
			}
			entries = append(entries, *e)
		}
	}
	if err := replaceFile(path, func(w io.Writer) error { return cards.Write(w, entries) }); err != nil {
		return nil, 0, err
	}
	return kept, stale, nil
}

// replaceFile replaces path with what write writes, through a temporary
// file in the same folder renamed over it, so a reader never sees half a
// file; an existing file's permissions are kept (else 0644). A folder
// that is missing or not writable is "PATH: cannot write: CAUSE" (the
// temporary name would only confuse).
func replaceFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("%s: cannot write: %w", path, pathCause(err))
	}
	defer os.Remove(tmp.Name())
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: cannot write: %w", path, pathCause(err))
	}
	return nil
}

// pathCause is err without the operation and path an [*os.PathError] or
// [*os.LinkError] adds, for messages that name the file themselves.
func pathCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
