// Package gbnfcheck runs llama.cpp's own GBNF parser and matcher
// (gbnf-check, built by ../shared/tools/gbnfcheck/build.sh) from tests, so
// that grammar code can be compared with the real thing.
//
// Find the program with testenv.GBNFCheck(t), which skips the test locally
// (and fails it in CI) when gbnf-check is not built. gbnf-check reads one
// grammar and one input per run (about 3 ms of CPU each). When g++ and the
// objects build.sh leaves beside gbnf-check (../obj/libgbnfcheck.a) are
// there, [Check] instead compiles gbnf-batch once (batch/gbnf_batch.cpp: the
// same llama.cpp calls as gbnf-check, in a loop over many inputs) and runs
// one process per few hundred inputs; set TOOLGATE_GBNF_BATCH=0 to always
// use gbnf-check itself.
package gbnfcheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
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
	done := make([]bool, len(inputs))
	if batch := batchProgram(gbnfPath); batch != "" {
		checkBatch(batch, gpath, inputs, out, done)
	}
	checkEach(tb, gbnfPath, dir, gpath, inputs, out, done)
	return out
}

// checkEach runs gbnf-check once per input not done yet.
func checkEach(tb testing.TB, gbnfPath, dir, gpath string, inputs [][]byte, out []Verdict, done []bool) {
	tb.Helper()
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
				done[i] = errs[i] == nil
				os.Remove(ipath)
			}
		}()
	}
	for i := range inputs {
		if !done[i] {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			tb.Fatalf("gbnfcheck: input %d (%q): %v", i, clip(inputs[i]), err)
		}
	}
}

// batchChunk is how many inputs one gbnf-batch process checks: a crash
// (llama.cpp segfaults on some grammars) loses at most that many verdicts to
// the slow path.
const batchChunk = 256

// checkBatch fills the verdicts gbnf-batch gives; the inputs it could not
// answer (a crash, a grammar llama.cpp refuses) stay not done.
func checkBatch(batch, gpath string, inputs [][]byte, out []Verdict, done []bool) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, min(runtime.NumCPU(), 4))
	for lo := 0; lo < len(inputs); lo += batchChunk {
		hi := min(lo+batchChunk, len(inputs))
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			runBatch(batch, gpath, inputs[lo:hi], out[lo:hi], done[lo:hi])
		}()
	}
	wg.Wait()
}

func runBatch(batch, gpath string, inputs [][]byte, out []Verdict, done []bool) {
	var frames bytes.Buffer
	for _, in := range inputs {
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(in)))
		frames.Write(n[:])
		frames.Write(in)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout*batchChunk/8)
	defer cancel()
	cmd := exec.CommandContext(ctx, batch, gpath)
	cmd.Stdin = &frames
	stdout, _ := cmd.Output() // a crash still leaves the verdicts printed before it
	lines := strings.Split(string(stdout), "\n")
	for i := range inputs {
		if i >= len(lines) {
			return
		}
		switch line := lines[i]; {
		case line == "A":
			out[i] = Verdict{Accepted: true, Offset: -1, Output: "ACCEPT (gbnf-batch)"}
		case strings.HasPrefix(line, "R "):
			off, err := strconv.Atoi(line[2:])
			if err != nil {
				return
			}
			out[i] = Verdict{Offset: off, Output: "REJECT at byte " + line[2:] + " (gbnf-batch)"}
		default: // "E" or garbage: let gbnf-check say why
			return
		}
		done[i] = true
	}
}

//go:embed batch/gbnf_batch.cpp
var batchSource []byte

var (
	batchMu    sync.Mutex
	batchBuilt = map[string]string{} // program name + gbnf-check path -> program path ("" when unavailable)
)

// batchProgram returns the path of gbnf-batch built against the objects of
// the gbnf-check at gbnfPath, building it on first use; "" when it cannot.
func batchProgram(gbnfPath string) string {
	if os.Getenv("TOOLGATE_GBNF_BATCH") == "0" {
		return ""
	}
	p, _ := program(gbnfPath, "gbnf-batch", batchSource)
	return p
}

// program returns the path of the C++ program source (named name) built
// against the objects of the gbnf-check at gbnfPath, building it on first
// use; "" and the reason when it cannot.
func program(gbnfPath, name string, source []byte) (string, error) {
	batchMu.Lock()
	defer batchMu.Unlock()
	key := name + " " + gbnfPath
	if p, ok := batchBuilt[key]; ok {
		if p == "" {
			return "", fmt.Errorf("%s could not be built", name)
		}
		return p, nil
	}
	p, err := buildProgram(gbnfPath, name, source)
	batchBuilt[key] = p
	return p, err
}

func buildProgram(gbnfPath, name string, source []byte) (string, error) {
	lib := filepath.Join(filepath.Dir(filepath.Dir(gbnfPath)), "obj", "libgbnfcheck.a")
	st, err := os.Stat(lib)
	if err != nil {
		return "", err
	}
	src := os.Getenv("OLLAMA_SRC")
	if src == "" {
		cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			return "", err
		}
		src = filepath.Join(strings.TrimSpace(string(cache)), "github.com", "ollama", "ollama@v0.17.4")
	}
	l, g := filepath.Join(src, "llama", "llama.cpp"), filepath.Join(src, "ml", "backend", "ggml", "ggml")
	h := sha256.New()
	h.Write(source)
	fmt.Fprintf(h, "%s %d %d %s", lib, st.Size(), st.ModTime().UnixNano(), src)
	exe := filepath.Join(os.TempDir(), fmt.Sprintf("toolgate-%s-%x", name, h.Sum(nil)[:8]))
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	dir, err := os.MkdirTemp("", name+"-build")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	cpp := filepath.Join(dir, name+".cpp")
	if err := os.WriteFile(cpp, source, 0o644); err != nil {
		return "", err
	}
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	tmp := filepath.Join(dir, name)
	cmd := exec.Command(cxx, "-std=c++17", "-O2",
		"-I"+filepath.Join(l, "include"), "-I"+filepath.Join(l, "src"), "-I"+filepath.Join(l, "common"),
		"-I"+filepath.Join(g, "include"), "-I"+filepath.Join(g, "src"),
		"-o", tmp, cpp, lib, "-Wl,--gc-sections", "-pthread", "-lm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v: %s", name, err, out)
	}
	// rename is atomic: parallel test processes never see half a file
	if err := os.Rename(tmp, exe); err != nil {
		return "", err
	}
	return exe, nil
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
