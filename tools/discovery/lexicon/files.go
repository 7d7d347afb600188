package lexicon

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Kind names what an optional lexicon file holds.
type Kind string

// The kinds of optional lexicon file, each in Parse's format.
const (
	// KindEnglish: groups of English synonyms, "word: synonym, synonym".
	KindEnglish Kind = "en"
	// KindSpanish: Spanish → English, "palabra: word, word".
	KindSpanish Kind = "es"
	// KindPolish: Polish → English, "słowo: word, word".
	KindPolish Kind = "pl"
	// KindDerived: English nouns and the verbs they derive from,
	// "deletion: delete" ([Source.Derived]; the generator's derived_en.txt).
	KindDerived Kind = "derived"
)

// MaxFileBytes bounds one optional lexicon file.
const MaxFileBytes = 32 << 20

// ErrFile is wrapped by Open's errors for a file spec, a file that cannot
// be read or one over [MaxFileBytes].
var ErrFile = errors.New("lexicon: bad file")

// File is an optional lexicon file: data a user points to (with
// toolgate's --lexicon KIND=FILE) that is not embedded, such as the
// Spanish and Polish word lists the generator derives from LGPL or GPL
// thesauri and dictionaries (see data/README.md).
type File struct {
	Kind Kind
	Path string
}

// ParseFile reads a "KIND=PATH" spec, KIND one of en, es, pl, derived.
func ParseFile(spec string) (File, error) {
	kind, path, ok := strings.Cut(spec, "=")
	f := File{Kind: Kind(kind), Path: path}
	switch {
	case !ok || path == "":
		return File{}, fmt.Errorf("%w: %q: want KIND=FILE with KIND en, es, pl or derived", ErrFile, spec)
	case f.Kind != KindEnglish && f.Kind != KindSpanish && f.Kind != KindPolish && f.Kind != KindDerived:
		return File{}, fmt.Errorf("%w: %q: unknown kind %q (want en, es, pl or derived)", ErrFile, spec, kind)
	}
	return f, nil
}

// Open returns a lexicon built from the embedded data plus the optional
// files, added in order. It fails with an error wrapping [ErrFile] for a
// file that cannot be read or is too big, or a [*SyntaxError] naming the
// file and line.
func Open(files ...File) (*Lexicon, error) {
	src, err := DefaultSource()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := src.AddFile(f); err != nil {
			return nil, err
		}
	}
	return Build(src)
}

// AddFile parses an optional file and appends its entries to the part of
// src its kind names.
func (src *Source) AddFile(f File) error {
	var dst *[]Entry
	switch f.Kind {
	case KindEnglish:
		dst = &src.Synonyms
	case KindSpanish:
		dst = &src.Spanish
	case KindPolish:
		dst = &src.Polish
	case KindDerived:
		dst = &src.Derived
	default:
		return fmt.Errorf("%w: %s: unknown kind %q (want en, es, pl or derived)", ErrFile, f.Path, f.Kind)
	}
	fh, err := os.Open(f.Path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFile, err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrFile, f.Path, err)
	}
	if len(data) > MaxFileBytes {
		return fmt.Errorf("%w: %s is over %d bytes", ErrFile, f.Path, MaxFileBytes)
	}
	entries, err := Parse(f.Path, data)
	if err != nil {
		return err
	}
	*dst = append(*dst, entries...)
	return nil
}
