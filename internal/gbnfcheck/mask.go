package gbnfcheck

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

//go:embed batch/gbnf_mask.cpp
var maskSource []byte

// Token is one vocabulary entry for [Masks]: its piece, or End for an
// end-of-generation token.
type Token struct {
	Piece []byte
	End   bool
}

// MaskStep is llama.cpp's token mask at one step.
type MaskStep struct {
	// Allowed has bit id%64 of word id/64 set when llama.cpp leaves
	// token id's logit finite.
	Allowed []uint64
	// Apply is the wall time of llama_grammar_apply_impl over the whole
	// vocabulary.
	Apply time.Duration
}

// Masks runs llama.cpp's own grammar sampler (llama_grammar_apply_impl,
// then llama_grammar_accept_impl for each of steps, with the vocabulary
// handed over through ollama_vocab as Ollama's runner does) and returns
// the mask before the first step and after each one. It compiles
// gbnf-mask (batch/gbnf_mask.cpp) against the objects beside the
// gbnf-check at gbnfPath on first use; when it cannot, the test is skipped
// (failed in CI). An error means llama.cpp threw (it aborts on a token its
// mask did not allow); the masks before it are returned.
func Masks(tb testing.TB, gbnfPath, grammar string, vocab []Token, steps []int) ([]MaskStep, error) {
	tb.Helper()
	exe, err := program(gbnfPath, "gbnf-mask", maskSource)
	if err != nil {
		if testenv.InCI() {
			tb.Fatalf("gbnf-mask: %v", err)
		}
		tb.Skipf("gbnf-mask cannot be built: %v", err)
	}
	dir := tb.TempDir()
	gpath, vpath := filepath.Join(dir, "grammar.gbnf"), filepath.Join(dir, "vocab.txt")
	if err := os.WriteFile(gpath, []byte(grammar), 0o644); err != nil {
		tb.Fatal(err)
	}
	var vb bytes.Buffer
	for _, t := range vocab {
		if t.End {
			vb.WriteString("E\n")
			continue
		}
		vb.WriteString("T ")
		vb.WriteString(hex.EncodeToString(t.Piece))
		vb.WriteByte('\n')
	}
	if err := os.WriteFile(vpath, vb.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	var in strings.Builder
	for _, id := range steps {
		fmt.Fprintf(&in, "%d\n", id)
	}
	cmd := exec.Command(exe, gpath, vpath)
	cmd.Stdin = strings.NewReader(in.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var masks []MaskStep
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	words := (len(vocab) + 63) / 64
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "X ") {
			return masks, fmt.Errorf("llama.cpp: %s", line[2:])
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "M" || len(f[2]) != 16*words {
			return masks, fmt.Errorf("gbnf-mask printed %.80q", line)
		}
		ns, _ := strconv.ParseInt(f[1], 10, 64)
		st := MaskStep{Allowed: make([]uint64, words), Apply: time.Duration(ns)}
		for w := range words {
			st.Allowed[w], err = strconv.ParseUint(f[2][16*w:16*w+16], 16, 64)
			if err != nil {
				return masks, err
			}
		}
		masks = append(masks, st)
	}
	if runErr != nil && len(masks) < len(steps)+1 {
		return masks, fmt.Errorf("gbnf-mask: %v: %s", runErr, stderr.String())
	}
	return masks, nil
}
