package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/grammar/gbnf"
)

func init() { commands["check"] = runCheck }

// runCheck: toolgate check --grammar G.gbnf|- [--input FILE|-]; stdin is
// one of the two.
// Exit 0 when the whole input is a sentence of the grammar (from rule root),
// 1 when it is not (the byte offset on stderr, as llama.cpp's gbnf-check
// reports it), 2 for a grammar error or a usage or input error.
func runCheck(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	grammarPath := fs.String("grammar", "", "GBNF grammar `file` (llama.cpp syntax, start rule root), or - for stdin when --input is a file")
	inputPath := fs.String("input", "-", "input file, or - for stdin")
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "toolgate check: "+format+"\n", a...)
		return exitUsage
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *grammarPath == "" || fs.NArg() > 0 {
		return fail("usage: toolgate check --grammar G.gbnf [--input FILE|-]")
	}
	if *grammarPath == stdinPath && *inputPath == stdinPath {
		return fail("--grammar - and --input - both name stdin; give one of them as a file")
	}
	src, grammarName, err := readInput("grammar", *grammarPath, stdin)
	if err != nil {
		return fail("%v", err)
	}
	g, err := gbnf.Parse(string(src))
	if err != nil {
		var pe *gbnf.ParseError
		if errors.As(err, &pe) && pe.Offset >= 0 {
			return fail("%s:%d:%d: %s", grammarName, pe.Line, pe.Col, pe.Msg)
		}
		return fail("%s: %v", grammarName, err)
	}
	in, _, err := openInput("input", *inputPath, stdin)
	if err != nil {
		return fail("%v", err)
	}
	defer in.Close()
	m, err := gbnf.NewMatcher(g)
	if err != nil {
		return fail("%s: %v", grammarName, err)
	}
	pos := newLineCounter()
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return fail("%v", err)
		}
		n, readErr := in.Read(buf)
		if n > 0 {
			k, err := m.Write(buf[:n])
			pos.feed(buf[:k])
			if err != nil {
				var re *gbnf.RejectError
				errors.As(err, &re)
				allowed := describeAllowed(m)
				fmt.Fprintf(stderr, "toolgate check: rejected at byte %d (%s): %s; expected %s%s\n",
					re.Offset, pos.at(re.Offset), rejectReason(re, buf[k]), allowed, newlineHint(buf[k], allowed))
				return exitNegative
			}
		}
		if readErr == io.EOF {
			break
		}
		if readErr != nil {
			return fail("reading input: %v", readErr)
		}
	}
	if err := m.End(); err != nil {
		var re *gbnf.RejectError
		errors.As(err, &re)
		fmt.Fprintf(stderr, "toolgate check: rejected at byte %d (%s): unexpected end of input; expected %s\n",
			re.Offset, pos.at(re.Offset), describeAllowed(m))
		return exitNegative
	}
	fmt.Fprintf(stdout, "accepted (%d bytes)\n", m.Offset())
	return exitOK
}

func rejectReason(re *gbnf.RejectError, b byte) string {
	switch {
	case errors.Is(re.Err, gbnf.ErrInvalidUTF8):
		return fmt.Sprintf("invalid UTF-8 (byte 0x%02X)", b)
	case errors.Is(re.Err, gbnf.ErrTooManyStacks):
		return fmt.Sprintf("the grammar is too ambiguous here (more than %d parse stacks)", gbnf.MaxStacks)
	case re.Byte > re.Offset:
		return fmt.Sprintf("unexpected byte 0x%02X inside a multi-byte character", b)
	}
	return "unexpected " + quoteByte(b)
}

// newlineHint explains the commonest rejection of a whole answer: the
// newline that echo (and most editors) add after it, which a grammar for a
// model's output does not allow.
func newlineHint(b byte, allowed string) string {
	if b == '\n' && allowed == "end of input" {
		return " (a trailing newline? the input is checked byte for byte: use printf '%s', not echo)"
	}
	return ""
}

func quoteByte(b byte) string {
	if b >= 0x20 && b < 0x7F {
		return strconv.QuoteRune(rune(b))
	}
	return fmt.Sprintf("byte 0x%02X", b)
}

// describeAllowed lists the bytes the grammar allows next, briefly.
func describeAllowed(m *gbnf.Matcher) string {
	set := m.Allowed()
	allowed := set.Bytes()
	end := m.Accepts()
	if len(allowed) == 0 {
		if end {
			return "end of input"
		}
		return "nothing (no text can continue here)"
	}
	var parts []string
	for i := 0; i < len(allowed) && len(parts) < 16; i++ {
		j := i
		for j+1 < len(allowed) && allowed[j+1] == allowed[j]+1 {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, quoteByte(allowed[i])+"-"+quoteByte(allowed[j]))
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, quoteByte(allowed[k]))
			}
		}
		i = j
	}
	s := strings.Join(parts, " ")
	if len(parts) >= 16 {
		s += " ..."
	}
	if end {
		s += " or end of input"
	}
	return s
}

// lineCounter tracks line and column (1-based, columns in bytes, as
// gbnf-check counts them) of the bytes fed so far.
type lineCounter struct {
	offset, line, col int
}

func newLineCounter() *lineCounter { return &lineCounter{line: 1, col: 1} }

func (c *lineCounter) feed(p []byte) {
	for _, b := range p {
		c.offset++
		if b == '\n' {
			c.line++
			c.col = 1
		} else {
			c.col++
		}
	}
}

// at describes offset, which is at most a few bytes (an unfinished
// multi-byte character, never a newline) before the bytes fed so far.
func (c *lineCounter) at(offset int) string {
	return fmt.Sprintf("line %d, col %d", c.line, c.col-(c.offset-offset))
}
