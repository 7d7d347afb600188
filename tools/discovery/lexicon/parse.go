package lexicon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrSyntax is wrapped by every [*SyntaxError].
var ErrSyntax = errors.New("lexicon: syntax error")

// SyntaxError reports a malformed line of a lexicon data file.
type SyntaxError struct {
	File   string
	Line   int
	Reason string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// Unwrap returns [ErrSyntax].
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Entry is one line of a lexicon data file: a key and its values.
//
// The format is line-based UTF-8: blank lines and lines starting with '#'
// are ignored; every other line is "key: value, value, ...". A key is a
// word or a short phrase (words separated by single spaces); values are
// words or phrases separated by commas. Keys and values are stored folded
// (lower case, no diacritics), so the data is written as a person would
// type it. Within a file a key may repeat; its values are merged by the
// consumer.
type Entry struct {
	Key    string
	Values []string
	Line   int
}

// Parse reads lexicon entries from data. name is used in error messages
// (FILE:LINE: reason). Parse returns the first error; it never panics on
// any input.
func Parse(name string, data []byte) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		fail := func(reason string) error { return &SyntaxError{File: name, Line: line, Reason: reason} }
		if !utf8.ValidString(text) {
			return nil, fail("invalid UTF-8")
		}
		key, rest, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fail(`missing ":" between key and values`)
		}
		k, err := normalizePhrase(key)
		if err != nil {
			return nil, fail("key: " + err.Error())
		}
		var vals []string
		for _, v := range strings.Split(rest, ",") {
			if strings.TrimSpace(v) == "" {
				return nil, fail("empty value")
			}
			nv, err := normalizePhrase(v)
			if err != nil {
				return nil, fail("value: " + err.Error())
			}
			vals = append(vals, nv)
		}
		out = append(out, Entry{Key: k, Values: vals, Line: line})
	}
	if err := sc.Err(); err != nil {
		return nil, &SyntaxError{File: name, Line: line + 1, Reason: err.Error()}
	}
	return out, nil
}

// normalizePhrase folds s and checks that it is one to four words of
// letters, digits, apostrophes or hyphens separated by single spaces.
func normalizePhrase(s string) (string, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return "", errors.New("empty")
	}
	if len(f) > 4 {
		return "", fmt.Errorf("%q has more than four words", strings.TrimSpace(s))
	}
	for _, w := range f {
		for _, r := range w {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '\'' && !unicode.Is(unicode.Mn, r) {
				return "", fmt.Errorf("%q contains %q", w, r)
			}
		}
	}
	return fold(strings.Join(f, " ")), nil
}
