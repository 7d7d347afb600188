// Package fileline reads line-oriented input files (JSON Lines catalogs,
// query sets, logs, overlays) and names positions in them the way editors
// and CI logs link to: "FILE:LINE: reason".
package fileline

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// Error is one problem in an input file: the file, the 1-based line of
// the problem (0 when it concerns the whole file) and why. Packages
// declare their own error types on it (type Error fileline.Error), so
// that callers can tell a catalog's errors from a configuration's with
// [errors.As].
type Error struct {
	File   string
	Line   int
	Reason string
}

// Error returns "FILE:LINE: reason", or "FILE: reason" when Line is 0 or
// less, the form editors and CI logs link to.
func (e *Error) Error() string {
	if e.Line <= 0 {
		return e.File + ": " + e.Reason
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
}

// Open opens path for reading. Its error is the cause alone
// ([os.ErrNotExist], a permission error, ...), without the operation and
// path an *[os.PathError] adds, for messages that name the file themselves.
func Open(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, err
	}
	return f, nil
}

// A Scanner reads the non-blank lines of its input, counting every line
// (blank ones too) so that errors can name the line a reader sees in an
// editor. It is [bufio.Scanner] with the bookkeeping every line-oriented
// parser repeats.
type Scanner struct {
	sc   *bufio.Scanner
	max  int
	line int
	text []byte
}

// NewScanner returns a [Scanner] over r that accepts lines of up to max
// bytes.
func NewScanner(r io.Reader, max int) *Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(max, 64<<10)), max)
	return &Scanner{sc: sc, max: max}
}

// Scan advances to the next line that is not blank after trimming space.
// A UTF-8 byte order mark at the start of the input is skipped, as
// editors on Windows write one. It returns false at the end of the input
// or on a read error (see Err).
func (s *Scanner) Scan() bool {
	for s.sc.Scan() {
		s.line++
		b := s.sc.Bytes()
		if s.line == 1 {
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		}
		if b := bytes.TrimSpace(b); len(b) > 0 {
			s.text = b
			return true
		}
	}
	s.text = nil
	if s.sc.Err() != nil {
		s.line++ // the line that could not be read
	}
	return false
}

// Bytes returns the current line without surrounding space. The slice
// is valid until the next call of Scan.
func (s *Scanner) Bytes() []byte { return s.text }

// Line returns the 1-based number of the current line; after Scan has
// stopped on a read error, the number of the line that could not be read.
func (s *Scanner) Line() int { return s.line }

// Err returns the read error that stopped Scan, or nil at the end of the
// input.
func (s *Scanner) Err() error { return s.sc.Err() }

// Reason returns Err as a reason for an error message: "line longer than
// N bytes" for a line over the limit, Err's text otherwise.
func (s *Scanner) Reason() string {
	err := s.sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Sprintf("line longer than %d bytes", s.max)
	}
	return err.Error()
}
