// Package termtext renders text that toolgate did not write (catalog
// descriptions and cards, a server's or a tool's errors and results, a
// model's answers) for a terminal, so that it is read and never obeyed:
// security invariant 10, "text is data".
//
// A terminal acts on C0 controls (ESC opens the CSI, OSC and DCS sequences
// that move the cursor, clear the screen, set the title, write the
// clipboard or forge hyperlinks; BEL, BS and CR rewrite what is shown), on
// DEL and on C1 controls (U+0080–U+009F, and the raw bytes 0x80–0x9F,
// which 8-bit terminals take as CSI, OSC and DCS on their own). Bidirectional
// controls make a line read in another order than its bytes (the "Trojan
// Source" attack), U+2028 and U+2029 break a line where none is seen, and
// Unicode tag characters (U+E0000–U+E007F) carry text no one sees. termtext
// writes each of them as an escape:
//
//   - a character as \uXXXX (above U+FFFF, its UTF-16 surrogate pair
//     \uXXXX\uXXXX): ESC is \u001b, U+202E is \u202e. This is how JSON
//     spells them, so a JSON document that goes through termtext is still
//     the same document (see [Writer]);
//   - a byte that is not part of valid UTF-8 as \xNN.
//
// Everything else, backslashes included, is written as it is: the result
// is for reading, not for parsing back. [Line] escapes line breaks and
// tabs too, for a value printed inside one line or one table cell, where a
// line break would forge another line; [Text] and [Writer] keep "\n", "\t"
// and "\r\n" for output that spans lines.
//
// cmd/toolgate and examples/transfer send all their stdout and stderr
// through a [Writer], and format one-line fields with [Line].
package termtext

import (
	"io"
	"sync"
	"unicode/utf8"
)

// Line returns s for display inside one line: every character a terminal
// acts on or that reorders or hides text is escaped, line breaks and tabs
// included ("\n" as \n, "\t" as \t, "\r" as \r). The result is valid UTF-8.
func Line(s string) string {
	if isPlain(s, false) {
		return s
	}
	out, _ := appendEscaped(nil, []byte(s), false, true)
	return string(out)
}

// Text is [Line] for output of several lines: "\n", "\t" and a "\r"
// followed by "\n" are kept; a lone "\r" (which would overwrite the line
// it ends) is escaped.
func Text(s string) string {
	if isPlain(s, true) {
		return s
	}
	out, _ := appendEscaped(nil, []byte(s), true, true)
	return string(out)
}

// Escaped reports whether termtext writes r as an escape in every mode:
// C0 and C1 controls and DEL ("\n" and "\t" aside, which [Text] keeps),
// bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
// U+2066–U+2069), U+2028 and U+2029, and tag characters
// (U+E0000–U+E007F).
func Escaped(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidirectional controls
	case r == 0x2028, r == 0x2029:
		return true
	case r >= 0xe0000 && r <= 0xe007f:
		return true // tags
	}
	return false
}

// isPlain reports whether s needs no escape: printable ASCII (with "\n"
// and "\t" when keepLines), the common case, checked without allocating.
func isPlain(s string, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f || keepLines && (c == '\n' || c == '\t') {
			continue
		}
		return false
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendU appends r as \uXXXX, or as a surrogate pair above U+FFFF.
func appendU(dst []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		dst = appendU(dst, 0xd800+(r>>10))
		return appendU(dst, 0xdc00+(r&0x3ff))
	}
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// appendEscaped appends p to dst with every escape made. keepLines keeps
// "\n", "\t" and "\r\n". Unless final, a tail that may be the start of a
// character (or a "\r" that may precede "\n") is not written: rest is its
// length, for the caller to prepend to what comes next.
func appendEscaped(dst, p []byte, keepLines, final bool) (out []byte, rest int) {
	for i := 0; i < len(p); {
		c := p[i]
		if c >= 0x20 && c < 0x7f {
			j := i + 1
			for j < len(p) && p[j] >= 0x20 && p[j] < 0x7f {
				j++
			}
			dst = append(dst, p[i:j]...)
			i = j
			continue
		}
		if c < utf8.RuneSelf {
			switch {
			case keepLines && (c == '\n' || c == '\t'):
				dst = append(dst, c)
			case keepLines && c == '\r' && i+1 == len(p) && !final:
				return dst, len(p) - i
			case keepLines && c == '\r' && i+1 < len(p) && p[i+1] == '\n':
				dst = append(dst, '\r', '\n')
				i++
			case c == '\n':
				dst = append(dst, `\n`...)
			case c == '\t':
				dst = append(dst, `\t`...)
			case c == '\r':
				dst = append(dst, `\r`...)
			default:
				dst = appendU(dst, rune(c))
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			if !final && !utf8.FullRune(p[i:]) {
				return dst, len(p) - i
			}
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
			i++
			continue
		case Escaped(r):
			dst = appendU(dst, r)
		default:
			dst = append(dst, p[i:i+n]...)
		}
		i += n
	}
	return dst, 0
}

// Writer is an [io.Writer] that writes what it is given to an underlying
// writer as [Text] renders it. A character split across two Writes is
// written whole with the second; [Writer.Flush] writes what an unfinished
// last Write left. Writes are serialized, so a Writer is safe for
// concurrent use (several loggers on one stderr).
//
// JSON goes through a Writer unchanged in meaning: encoding/json already
// escapes C0 controls, U+2028 and U+2029, but writes DEL, C1 controls, bidi
// controls and tag characters as they are; the Writer spells those \uXXXX,
// as JSON does, and leaves the rest (which is printable or JSON white
// space) alone. GBNF from grammar's printer is unchanged too: it escapes
// every character that is not printable itself.
type Writer struct {
	w io.Writer

	mu   sync.Mutex
	held []byte // the unfinished tail of the last Write, at most 3 bytes
	buf  []byte
}

// NewWriter returns a [Writer] to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write renders p and writes it. It reports len(p) when the underlying
// writer took everything (a held tail counts as taken).
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	in := p
	if len(w.held) > 0 {
		in = append(w.held[:len(w.held):len(w.held)], p...)
	}
	out, rest := appendEscaped(w.buf[:0], in, true, false)
	w.held = append(w.held[:0], in[len(in)-rest:]...)
	if cap(out) <= 64<<10 {
		w.buf = out[:0]
	}
	if len(out) > 0 {
		if _, err := w.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes the tail an unfinished character or a last "\r" left
// (escaped, since nothing completes it now).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) == 0 {
		return nil
	}
	out, _ := appendEscaped(nil, w.held, true, true)
	w.held = w.held[:0]
	_, err := w.w.Write(out)
	return err
}

// Raw returns the writer under w when w is a *[Writer], else w: for the few
// writes that must reach the terminal as they are, a protocol on stdout
// (MCP over stdio) or the program's own terminal codes (a progress line).
// What goes to Raw must be made safe by its writer (with [Line]).
func Raw(w io.Writer) io.Writer {
	if tw, ok := w.(*Writer); ok {
		return tw.w
	}
	return w
}
