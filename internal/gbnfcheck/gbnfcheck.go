// Package gbnfcheck runs llama.cpp's own GBNF parser and matcher
// (gbnf-check, built by ../shared/tools/gbnfcheck/build.sh) from tests, so
// that grammar code can be compared with the real thing.
//
// Find the program with testenv.GBNFCheck(t), which skips the test locally
// (and fails it in CI) when gbnf-check is not built. gbnf-check reads one
// grammar and one input per run, so Check runs one process per input, a few
// at a time; a check of N inputs costs about N × 5–10 ms.
package gbnfcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Verdict is gbnf-check's answer for one input.
type Verdict struct {
	// Accepted: the whole input is a sentence of the grammar (exit 0).
	Accepted bool
	// Offset is the byte offset gbnf-check rejected at (the start of the
	// offending code point, or len(input) when the input is a proper
	// prefix); -1 when accepted or when the grammar failed.
	Offset int
	// GrammarError is gbnf-check's message when it refused the grammar or
	// llama.cpp crashed on it (exit 2); empty otherwise.
	GrammarError string
	// Output is what gbnf-check printed (stdout, then stderr), for
	// failure messages.
	Output string
}

// Timeout bounds one gbnf-check run; llama.cpp has no limit of its own.
const Timeout = 30 * time.Second

var rejectAt = regexp.MustCompile(`^REJECT at byte (\d+) `)

// Check runs gbnf-check at gbnfPath on grammar with each input and returns
// the verdicts in the order of inputs. A usage or I/O failure of gbnf-check
// itself (exit 3), a timeout, or output it cannot read fails the test.
func Check(tb testing.TB, gbnfPath, grammar string, inputs [][]byte) []Verdict {
	tb.Helper()
	dir := tb.TempDir()
	gpath := filepath.Join(dir, "grammar.gbnf")
	if err := os.WriteFile(gpath, []byte(grammar), 0o644); err != nil {
		tb.Fatal(err)
	}
	out := make([]Verdict, len(inputs))
	errs := make([]error, len(inputs))
	workers := min(runtime.NumCPU(), 4)
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ipath := filepath.Join(dir, "input-"+strconv.Itoa(i))
				if err := os.WriteFile(ipath, inputs[i], 0o644); err != nil {
					errs[i] = err
					continue
				}
				out[i], errs[i] = run(gbnfPath, gpath, ipath)
				os.Remove(ipath)
			}
		}()
	}
	for i := range inputs {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			tb.Fatalf("gbnfcheck: input %d (%q): %v", i, clip(inputs[i]), err)
		}
	}
	return out
}

// ParseOnly runs gbnf-check --parse-only on grammar. It returns "" when
// llama.cpp accepts the grammar, else gbnf-check's one-line message.
func ParseOnly(tb testing.TB, gbnfPath, grammar string) string {
	tb.Helper()
	gpath := filepath.Join(tb.TempDir(), "grammar.gbnf")
	if err := os.WriteFile(gpath, []byte(grammar), 0o644); err != nil {
		tb.Fatal(err)
	}
	v, err := run(gbnfPath, "--parse-only", gpath)
	if err != nil {
		tb.Fatalf("gbnfcheck: %v", err)
	}
	return v.GrammarError
}

func run(gbnfPath string, args ...string) (Verdict, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gbnfPath, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	v := Verdict{Offset: -1, Output: strings.TrimSpace(stdout.String() + stderr.String())}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ctx.Err() != nil {
			return v, fmt.Errorf("running %s: %v (%s)", gbnfPath, err, v.Output)
		}
		code = ee.ExitCode()
	}
	switch code {
	case 0:
		v.Accepted = true
		return v, nil
	case 1:
		m := rejectAt.FindStringSubmatch(stdout.String())
		if m == nil {
			return v, fmt.Errorf("cannot read gbnf-check's rejection: %q", v.Output)
		}
		v.Offset, _ = strconv.Atoi(m[1])
		return v, nil
	case 2:
		v.GrammarError = strings.TrimSpace(stderr.String())
		if v.GrammarError == "" {
			v.GrammarError = "gbnf-check exit 2"
		}
		return v, nil
	}
	return v, fmt.Errorf("gbnf-check exit %d: %s", code, v.Output)
}

func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
