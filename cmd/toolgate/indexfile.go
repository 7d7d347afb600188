package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// indexFlag registers --index, the discovery index file, on fs.
func indexFlag(fs *flag.FlagSet) *string {
	return fs.String("index", "", "keep the discovery index in `FILE` and the catalog files' load in FILE.catalog: a restart reads "+
		"the analysis of unchanged tools, and the tools of unchanged catalog files, instead of redoing them (a restart of 100,000 tools "+
		"in about 0.7 s instead of a 4.5 s build, 0.9 s instead of 7.5 s when every schema differs); a missing, corrupt or stale file is rebuilt, with a warning, and written again; a pipe, device or folder at FILE is neither read nor replaced (exit 2)")
}

// prepareIndex builds d's index for snap before the first request: through
// the index file path when it is set, with a progress line on stderr
// when that is a terminal and the build takes more than a second. A file
// that could not be used as it is is reported as a warning, prefixed by
// prog; an error is the build's or the file write's. Without a file or a
// terminal it does nothing: the index is built on first use.
func prepareIndex(ctx context.Context, d *discovery.Discoverer, snap *tools.Snapshot, path string, stderr io.Writer, prog string) error {
	progress, done := terminalProgress(stderr, prog)
	if path == "" && progress == nil {
		return nil
	}
	_, rep, err := d.IndexFile(ctx, snap, path, progress)
	done()
	if rep.Warning != nil && path != "" {
		fmt.Fprintf(stderr, "%s: warning: %s\n", prog, termtext.Line(firstLine(rep.Warning)))
	}
	return err
}

// terminalProgress returns a progress callback that keeps one line on
// stderr ("prog: indexing 41% (41000 of 100000 steps)"), shown only after the
// first second and redrawn at most ten times a second, and a function
// that clears it; both are nil-safe no-ops (progress nil) when stderr is
// not a terminal: pipes and tests see nothing.
func terminalProgress(stderr io.Writer, prog string) (progress func(done, total int), clear func()) {
	if !isTerminal(termtext.Raw(stderr)) {
		return nil, func() {}
	}
	// The line is the program's own terminal codes: it goes to the
	// terminal itself.
	return progressLine(termtext.Raw(stderr), prog, time.Now)
}

// progressLine is terminalProgress's line on out, by the clock now.
func progressLine(out io.Writer, prog string, now func() time.Time) (progress func(done, total int), clear func()) {
	var mu sync.Mutex
	start, last := now(), time.Time{}
	shown := false
	progress = func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		t := now()
		if t.Sub(start) < time.Second || t.Sub(last) < 100*time.Millisecond && done < total {
			return
		}
		last, shown = t, true
		fmt.Fprintf(out, "\r\033[K%s: indexing %d%% (%d of %d steps)", prog, 100*done/max(total, 1), done, total)
	}
	clear = func() {
		mu.Lock()
		defer mu.Unlock()
		if shown {
			fmt.Fprint(out, "\r\033[K")
		}
	}
	return progress, clear
}

// slowNotice shows "prog: what…" on stderr when stderr is a terminal and
// the work it announces is still going after a second (a catalog file of
// 100,000 tools takes 2 to 9 s of CPU to load); the returned function,
// called when the work is done, clears the line if it was shown.
func slowNotice(stderr io.Writer, prog, what string) (done func()) {
	if !isTerminal(termtext.Raw(stderr)) {
		return func() {}
	}
	return noticeLine(termtext.Raw(stderr), prog, what, func(f func()) func() bool {
		return time.AfterFunc(time.Second, f).Stop
	})
}

// noticeLine is slowNotice's line on out; schedule runs its function once
// the second has passed and returns what cancels it.
func noticeLine(out io.Writer, prog, what string, schedule func(func()) (cancel func() bool)) (done func()) {
	var mu sync.Mutex
	shown, over := false, false
	cancel := schedule(func() {
		mu.Lock()
		defer mu.Unlock()
		if !over {
			shown = true
			fmt.Fprintf(out, "\r\033[K%s: %s…", prog, what)
		}
	})
	return func() {
		cancel()
		mu.Lock()
		defer mu.Unlock()
		over = true
		if shown {
			fmt.Fprint(out, "\r\033[K")
		}
	}
}
