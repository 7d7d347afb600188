package lexicon

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxEmbeddedBytes is the size budget of the embedded data: what the
// lexicon adds to every binary that imports discovery.
const maxEmbeddedBytes = 320 << 10

func TestEmbeddedSizeBudget(t *testing.T) {
	total := 0
	err := fs.WalkDir(dataFS, "data", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		total += int(info.Size())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > maxEmbeddedBytes {
		t.Errorf("embedded lexicon data = %d bytes, over the %d-byte budget (docs/benchmarks.md, Sourced lexicon)", total, maxEmbeddedBytes)
	}
}

func TestEmbeddedLicenseBeside(t *testing.T) {
	// The WordNet license must travel with every copy of data derived from it.
	lic, err := os.ReadFile("data/LICENSE-WordNet.txt")
	if err != nil || !strings.Contains(string(lic), "Princeton University") {
		t.Fatalf("data/LICENSE-WordNet.txt: %v, want the WordNet 3.0 license", err)
	}
	for _, name := range []string{fileWordNet, fileIrreg} {
		t.Run(name, func(t *testing.T) {
			data, err := dataFS.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), "# Source: Debian wordnet-base ") {
				t.Errorf("%s does not start with the package version it was generated from", name)
			}
		})
	}
}

func TestDerivedShareConcepts(t *testing.T) {
	src, err := DefaultSource()
	if err != nil {
		t.Fatal(err)
	}
	src.Derived = []Entry{
		{Key: "deletion", Values: []string{"delete"}},
		{Key: "retrieval", Values: []string{"retrieve"}},
		{Key: "folder", Values: []string{"fold"}},
	}
	l, err := Build(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ noun, verb string }{{"deletion", "delete"}, {"retrieval", "retrieve"}} {
		t.Run(tt.noun, func(t *testing.T) {
			if got := l.Derive(tt.noun); !slices.Contains(got, tt.verb) {
				t.Errorf("Derive(%q) = %q, want it to contain %q", tt.noun, got, tt.verb)
			}
			if syn := l.Synonyms(tt.noun); !slices.Contains(syn, "remove") && tt.verb == "delete" {
				t.Errorf("Synonyms(%q) = %q, want the derived-from verb's group (remove)", tt.noun, syn)
			}
		})
	}
	if got := l.Derive("delete"); got != nil {
		t.Errorf("Derive(delete) = %q, want nil (verbs do not derive from nouns here)", got)
	}
	// A word of a hand-written group keeps its meaning: "folder" (WordNet:
	// also one who folds) gets no concepts of "fold".
	if got := l.Derive("folder"); got != nil {
		t.Errorf("Derive(folder) = %q, want nil (folder is in a hand-written group)", got)
	}
	if got := Default().Derive("deletion"); got != nil {
		t.Errorf("Default().Derive(deletion) = %q, want nil (derivations are an optional file)", got)
	}
}

func TestDerivedDoNotChain(t *testing.T) {
	// b derives from c and a from b: a gets b's own concepts only.
	l, err := Build(&Source{
		Tools:   []Entry{{Key: "bee", Values: []string{"bees"}}, {Key: "sea", Values: []string{"ocean"}}},
		Derived: []Entry{{Key: "ay", Values: []string{"bee"}}, {Key: "bee", Values: []string{"sea"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if syn := l.Synonyms("ay"); slices.Contains(syn, "ocean") || !slices.Contains(syn, "bees") {
		t.Errorf("Synonyms(ay) = %q, want bee's group and not sea's", syn)
	}
}

func TestOpenAddsFiles(t *testing.T) {
	dir := t.TempDir()
	es := filepath.Join(dir, "es.txt")
	en := filepath.Join(dir, "en.txt")
	if err := os.WriteFile(es, []byte("# extra\ngarabatear: delete\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(en, []byte("wibble: frobnicate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Default().Translate("es", "garabatear"); got != nil {
		t.Fatalf("embedded data already translates garabatear (%q): pick another test word", got)
	}
	var files []File
	for _, spec := range []string{"es=" + es, "en=" + en} {
		t.Run(spec, func(t *testing.T) {
			f, err := ParseFile(spec)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		})
	}
	l, err := Open(files...)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Translate("es", "garabatear"); !slices.Equal(got, []string{"delete"}) {
		t.Errorf("Open(es file).Translate(garabatear) = %q, want [delete]", got)
	}
	if got := l.Synonyms("wibble"); !slices.Equal(got, []string{"frobnicate"}) {
		t.Errorf("Open(en file).Synonyms(wibble) = %q, want [frobnicate]", got)
	}
	if got := l.Translate("es", "borrar"); !slices.Contains(got, "delete") {
		t.Errorf("Open keeps the embedded data: Translate(borrar) = %q", got)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("ok: fine\nno colon here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, make([]byte, MaxFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"", "es", "es=", "de=x.txt", "=x.txt", "derive=x.txt"} {
		t.Run(spec, func(t *testing.T) {
			if _, err := ParseFile(spec); !errors.Is(err, ErrFile) {
				t.Errorf("ParseFile(%q) error = %v, want ErrFile", spec, err)
			}
		})
	}
	if _, err := Open(File{Kind: KindSpanish, Path: filepath.Join(dir, "missing.txt")}); !errors.Is(err, ErrFile) {
		t.Errorf("Open(missing file) error = %v, want ErrFile", err)
	}
	if _, err := Open(File{Kind: KindPolish, Path: big}); !errors.Is(err, ErrFile) || !strings.Contains(err.Error(), "big.txt") {
		t.Errorf("Open(oversized file) error = %v, want ErrFile naming big.txt", err)
	}
	if _, err := Open(File{Kind: "de", Path: bad}); !errors.Is(err, ErrFile) {
		t.Errorf("Open(kind de) error = %v, want ErrFile", err)
	}
	_, err := Open(File{Kind: KindEnglish, Path: bad})
	var se *SyntaxError
	if !errors.As(err, &se) || se.File != bad || se.Line != 2 {
		t.Errorf("Open(malformed file) error = %v, want a *SyntaxError at %s:2", err, bad)
	}
}

func FuzzParseFile(f *testing.F) {
	for _, s := range []string{"es=x.txt", "pl=/a/b", "en=", "derived=d.txt", "=x", "de=x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		got, err := ParseFile(spec)
		if err != nil {
			if !errors.Is(err, ErrFile) {
				t.Fatalf("ParseFile(%q) error %v does not wrap ErrFile", spec, err)
			}
			return
		}
		if string(got.Kind)+"="+got.Path != spec || got.Path == "" {
			t.Fatalf("ParseFile(%q) = %+v, which does not spell the spec back", spec, got)
		}
	})
}
