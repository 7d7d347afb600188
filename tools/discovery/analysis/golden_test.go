package analysis

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/golden"
)

// checkGolden compares got with testdata/golden/name ([golden.Check]).
// The golden files record what the analyzers do, so that any change in
// splitting, folding or stemming shows up in review as a diff; the
// human-checked expectations live in the table tests.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got)
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func TestGoldenSplit(t *testing.T) {
	var b bytes.Buffer
	for _, id := range readLines(t, "identifiers.txt") {
		fmt.Fprintf(&b, "%s\t%s\n", id, strings.Join(SplitIdentifier(id), " "))
	}
	checkGolden(t, "split.txt", b.Bytes())
}

func TestGoldenFold(t *testing.T) {
	var b bytes.Buffer
	for _, s := range readLines(t, "fold.txt") {
		fmt.Fprintf(&b, "%s\t%s\n", s, Fold(s))
	}
	checkGolden(t, "fold.txt", b.Bytes())
}

func TestGoldenStem(t *testing.T) {
	for _, l := range Languages {
		t.Run(string(l), func(t *testing.T) {
			var b bytes.Buffer
			for _, line := range readLines(t, "words_"+string(l)+".txt") {
				for _, w := range strings.Fields(line) {
					fmt.Fprintf(&b, "%s\t%s\n", w, Stem(l, w))
				}
			}
			checkGolden(t, "stem_"+string(l)+".txt", b.Bytes())
		})
	}
}

// TestStemCache: a stem from the cache is the stemmer's (the package's
// [Stem], which caches nothing and which TestGoldenStem pins), whether the
// cache is cold, warm or just started over, and the cache stays within its
// bound.
func TestStemCache(t *testing.T) {
	const bound = 100
	a := New(&Options{StemCache: bound, KeepStopWords: true})
	check := func(when string) {
		for i, l := range Languages {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				for _, line := range readLines(t, "words_"+string(l)+".txt") {
					for _, w := range strings.Fields(line) {
						if !isAlphaWord(w) {
							continue
						}
						if got, want := a.Terms(nil, w, l), Stem(l, w); len(got) != 1 || got[0] != want {
							t.Errorf("%s: Terms(%q, %s) = %q, the stemmer says %q", when, w, l, got, want)
						}
						if got, want := a.Stem(l, w), Stem(l, w); got != want {
							t.Errorf("%s: Analyzer.Stem(%s, %q) = %q, the stemmer says %q", when, l, w, got, want)
						}
					}
				}
			})
		}
	}
	check("cold")
	check("warm")
	for i := range 3*bound + 10 {
		a.Terms(nil, fmt.Sprintf("zq%dxing", i), English)
	}
	for _, l := range Languages {
		for i := range 3*bound + 10 {
			a.Stem(l, fmt.Sprintf("zq%dxing", i))
		}
	}
	for i, l := range Languages {
		t.Run(string(l), func(t *testing.T) {
			if n := len(a.stems.m[i]); n > bound || n == 0 {
				t.Errorf("the %s stem cache holds %d words, bound %d", l, n, bound)
			}
		})
	}
	check("after starting over")
	if New(&Options{StemCache: -1}).stems != nil {
		t.Error("StemCache -1 keeps a cache")
	}
}

// TestStemCacheConcurrent: Terms and Stem of several goroutines, through a
// cache small enough to start over while they run, give the stemmer's
// stems (run with -race).
func TestStemCacheConcurrent(t *testing.T) {
	a := New(&Options{StemCache: 16, KeepStopWords: true})
	words := map[Lang][]string{}
	for _, l := range Languages {
		for _, line := range readLines(t, "words_"+string(l)+".txt") {
			for _, w := range strings.Fields(line) {
				if isAlphaWord(w) && len(words[l]) < 200 {
					words[l] = append(words[l], w)
				}
			}
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			//testlint:rows the goroutines read every language's words at once, to race
			for _, l := range Languages {
				for i, w := range words[l] {
					want := Stem(l, w)
					var got string
					if (i+g)%2 == 0 {
						got = a.Stem(l, w)
					} else if ts := a.Terms(nil, w, l); len(ts) == 1 {
						got = ts[0]
					}
					if got != want {
						t.Errorf("goroutine %d: stem of %q in %s = %q, want %q", g, w, l, got, want)
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestCachedStem: CachedStem finds a stem the Analyzer has made, and only
// then, and stores none; a word stemmers leave alone is its own stem.
func TestCachedStem(t *testing.T) {
	a := New(nil)
	for _, tc := range []struct {
		name string
		lang Lang
		word string
	}{{"english", English, "deleting"}, {"spanish", Spanish, "archivos"}, {"polish", Polish, "plikow"}} {
		t.Run(tc.name, func(t *testing.T) {
			if st, ok := a.CachedStem(tc.lang, tc.word); ok {
				t.Fatalf("CachedStem(%s, %q) = %q before any Stem, want none", tc.lang, tc.word, st)
			}
			if _, ok := a.CachedStem(tc.lang, tc.word); ok {
				t.Fatalf("CachedStem(%s, %q) stored the stem", tc.lang, tc.word)
			}
			want := a.Stem(tc.lang, tc.word)
			if st, ok := a.CachedStem(tc.lang, tc.word); !ok || st != want {
				t.Errorf("CachedStem(%s, %q) after Stem = %q, %v, want %q, true", tc.lang, tc.word, st, ok, want)
			}
		})
	}
	if st, ok := a.CachedStem(English, "v2"); !ok || st != "v2" {
		t.Errorf(`CachedStem(en, "v2") = %q, %v, want "v2", true`, st, ok)
	}
}
