package ngram

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/golden"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func embed1(t testing.TB, e *Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func TestEmbedShapeAndNorm(t *testing.T) {
	e := New(nil)
	texts := []string{"delete a file", "Crème brûlée recipe", "usuń plik", "", "the a an", "12345 678"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("Embed returned %d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) != e.Dim() || e.Dim() != DefaultDim {
			t.Fatalf("vector %d has length %d, Dim() = %d, want %d", i, len(v), e.Dim(), DefaultDim)
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		wantZero := texts[i] == "" || texts[i] == "the a an" || texts[i] == "12345 678"
		switch {
		case wantZero && n != 0:
			t.Errorf("Embed(%q) has norm² %v, want the zero vector", texts[i], n)
		case !wantZero && math.Abs(n-1) > 1e-5:
			t.Errorf("Embed(%q) has norm² %v, want 1", texts[i], n)
		}
	}
	// The vectors are independent slices the caller owns.
	vs[0][0] = 42
	if vs[1][0] == 42 {
		t.Error("Embed's vectors share memory")
	}
}

func TestEmbedDeterministic(t *testing.T) {
	a, b := New(nil), New(nil)
	for _, text := range []string{"send a slack message", "¿Cómo borrar el archivo?", "wyślij wiadomość"} {
		t.Run(text, func(t *testing.T) {
			va, vb := embed1(t, a, text), embed1(t, b, text)
			for i := range va {
				if va[i] != vb[i] {
					t.Fatalf("Embed(%q)[%d] = %v and %v from two embedders", text, i, va[i], vb[i])
				}
			}
		})
	}
}

// TestGoldenFeatures records the hashed features of a few texts, so that a
// change in hashing, analysis or lexicon data (each silently invalidates
// vectors stored by an earlier build) shows up as a diff.
func TestGoldenFeatures(t *testing.T) {
	e := New(nil)
	var b bytes.Buffer
	for _, text := range []string{"delete a file", "borrar archivo", "getHTTPResponse"} {
		fs := e.Features(nil, text)
		fmt.Fprintf(&b, "%s\t%d features\n", text, len(fs))
		for _, f := range fs[:min(5, len(fs))] {
			fmt.Fprintf(&b, "\t%016x %.4f\n", f.H, f.W)
		}
		v := embed1(t, e, text)
		var idx []int
		for i, x := range v {
			if x != 0 {
				idx = append(idx, i)
			}
		}
		fmt.Fprintf(&b, "\tnonzero %d, first %v\n", len(idx), idx[:min(8, len(idx))])
	}
	golden.Check(t, filepath.Join("testdata", "golden", "features.txt"), b.Bytes())
}

func TestFeaturesSortedUnique(t *testing.T) {
	fs := New(nil).Features(nil, "create create create a new new issue issues")
	for i := 1; i < len(fs); i++ {
		if fs[i-1].H >= fs[i].H {
			t.Fatalf("Features not sorted and unique at %d: %x, %x", i, fs[i-1].H, fs[i].H)
		}
	}
}

func TestEmbedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(nil).Embed(ctx, []string{"a text"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed(cancelled ctx) error = %v, want context.Canceled", err)
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"defaults", Options{}, true},
		{"dim 1024", Options{Dim: 1024}, true},
		{"dim not power of two", Options{Dim: 1000}, false},
		{"dim too small", Options{Dim: 32}, false},
		{"n range", Options{MinN: 2, MaxN: 4}, true},
		{"min above max", Options{MinN: 5, MaxN: 3}, false},
		{"max above 8", Options{MaxN: 9}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := NewChecked(&tt.opts)
			if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrOptions)) {
				t.Errorf("%s: NewChecked error = %v, want ok %v (ErrOptions otherwise)", tt.name, err, tt.ok)
			}
			if tt.ok && tt.opts.Dim != 0 && e.Dim() != tt.opts.Dim {
				t.Errorf("%s: Dim() = %d, want %d", tt.name, e.Dim(), tt.opts.Dim)
			}
			if f := New(&tt.opts); f == nil || (!tt.ok && f.Dim() != DefaultDim && tt.opts.Dim != 0) {
				t.Errorf("%s: New did not fall back to defaults", tt.name)
			}
		})
	}
}

// TestQualityTriples: for each (anchor, near, far), the anchor is closer to
// near than to far. The triples are hand-picked paraphrases and everyday
// requests, not benchmark queries.
func TestQualityTriples(t *testing.T) {
	e := New(nil)
	triples := [][3]string{
		{"delete a file", "remove file from disk", "send a slack message"},
		{"delete a file", "borrar archivo", "send a slack message"},
		{"delete a file", "usuń plik", "send a slack message"},
		{"send a message to the team", "enviar un mensaje al equipo", "delete a file"},
		{"send a message to the team", "wyślij wiadomość do zespołu", "delete a file"},
		{"create a new issue", "open a ticket", "what is the weather"},
		{"create a new issue", "crear una incidencia nueva", "what is the weather"},
		{"create a new issue", "utwórz nowe zgłoszenie", "what is the weather"},
		{"what is the weather tomorrow", "¿qué tiempo hará mañana?", "list my invoices"},
		{"what is the weather tomorrow", "jaka będzie pogoda jutro", "list my invoices"},
		{"refund the last payment", "reembolsar el último pago", "schedule a meeting"},
		{"refund the last payment", "zwrot ostatniej płatności", "schedule a meeting"},
		{"schedule a meeting with Anna", "book an appointment with Anna", "transfer money to Anna"},
		{"show my account balance", "muestra el saldo de mi cuenta", "upload a photo"},
		{"show my account balance", "pokaż saldo mojego konta", "upload a photo"},
		{"search repositories", "find repos", "pay an invoice"},
		{"get_file_contents", "read a file", "create a calendar event"},
		{"open a pull request", "create a merge request", "read a file"},
		{"turn off the lights", "disable the lights", "turn the page"},
		{"¿cuál es el tipo de cambio?", "what is the exchange rate", "change my password"},
	}
	for i, tr := range triples {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			a, n, f := embed1(t, e, tr[0]), embed1(t, e, tr[1]), embed1(t, e, tr[2])
			if cn, cf := cosine(a, n), cosine(a, f); cn <= cf {
				t.Errorf("cos(%q, %q) = %.3f, not above cos(%q, %q) = %.3f", tr[0], tr[1], cn, tr[0], tr[2], cf)
			}
		})
	}
}

// TestLexiconGroupsCohere checks, over the lexicon's own definitions, that
// two words of one hand-written group are closer than a word of the group
// and a word of another group, for most pairs; and that a Spanish or Polish
// entry is closer to its English translation than to another entry's.
// Pairs are enumerated deterministically from the data.
func TestLexiconGroupsCohere(t *testing.T) {
	e := New(nil)
	lex := lexicon.Default()
	words := []string{"delete", "create", "find", "get", "update", "send", "schedule", "pay", "refund", "issue",
		"repository", "file", "account", "balance", "message", "calendar", "weather"}
	good, total := 0, 0
	for i, w := range words {
		syn := lex.Synonyms(w)
		other := words[(i+1)%len(words)]
		vw, vo := embed1(t, e, w), embed1(t, e, other)
		for _, s := range syn[:min(6, len(syn))] {
			vs := embed1(t, e, s)
			total++
			if cosine(vw, vs) > cosine(vw, vo) {
				good++
			}
		}
	}
	if frac := float64(good) / float64(total); frac < 0.95 {
		t.Errorf("synonym closer than another group's word for %d of %d pairs (%.2f), want at least 0.95", good, total, frac)
	}

	for row, lang := range []analysis.Lang{analysis.Spanish, analysis.Polish} {
		t.Run(fmt.Sprint(row), func(t *testing.T) {
			var src []string
			switch lang {
			case analysis.Spanish:
				src = []string{"borrar", "crear", "buscar", "enviar", "pagar", "factura", "archivo", "calendario", "reunión", "saldo", "mensaje", "actualizar"}
			case analysis.Polish:
				src = []string{"usuń", "utwórz", "szukaj", "wyślij", "zapłać", "faktura", "plik", "kalendarz", "spotkanie", "saldo", "wiadomość", "zaktualizuj"}
			}
			good, total := 0, 0
			for i, w := range src {
				t.Run(w, func(t *testing.T) {
					tr := lex.Translate(lang, analysis.Fold(w))
					if len(tr) == 0 {
						t.Fatalf("Translate(%s, %q) is empty", lang, w)
					}
					otherTr := lex.Translate(lang, analysis.Fold(src[(i+1)%len(src)]))
					vw, vt, vo := embed1(t, e, w), embed1(t, e, tr[0]), embed1(t, e, otherTr[0])
					total++
					if cosine(vw, vt) > cosine(vw, vo) {
						good++
					} else {
						t.Logf("%s %q: cos with %q %.3f, with %q %.3f", lang, w, tr[0], cosine(vw, vt), otherTr[0], cosine(vw, vo))
					}
				})
			}
			if good != total {
				t.Errorf("%s: %d of %d words closer to their translation than to another word's", lang, good, total)
			}
		})
	}
}

func TestEmbedToReuses(t *testing.T) {
	e := New(nil)
	dst := make([]float32, e.Dim())
	got := e.EmbedTo(dst, "delete a file")
	if &got[0] != &dst[0] {
		t.Error("EmbedTo did not reuse dst")
	}
	if testenv.Race {
		return
	}
	if n := testing.AllocsPerRun(50, func() { e.EmbedTo(dst, "delete a file") }); n > 0 {
		t.Errorf("EmbedTo allocates %v times per call with a reused dst, want 0", n)
	}
}

func TestNeighboursSorted(t *testing.T) {
	// A readable failure aid: the nearest of a few candidates to a query.
	e := New(nil)
	q := embed1(t, e, "borrar un archivo")
	cands := []string{"delete a file", "create a file", "send an email", "list files", "pay an invoice"}
	sort.SliceStable(cands, func(i, j int) bool {
		return cosine(q, embed1(t, e, cands[i])) > cosine(q, embed1(t, e, cands[j]))
	})
	if cands[0] != "delete a file" {
		t.Errorf("nearest to %q = %q (order %q), want %q", "borrar un archivo", cands[0], cands, "delete a file")
	}
}

// TestConcurrentUse embeds from several goroutines (run with -race) and
// checks every vector against the serial one.
func TestConcurrentUse(t *testing.T) {
	e := New(nil)
	texts := []string{"delete a file", "borrar archivo", "wyślij wiadomość", "open a pull request", "Crème brûlée"}
	want := make([][]float32, len(texts))
	for i, s := range texts {
		want[i] = embed1(t, e, s)
	}
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func() {
			var err error
			dst := make([]float32, e.Dim())
			for r := 0; r < 100 && err == nil; r++ {
				i := (g + r) % len(texts)
				e.EmbedTo(dst, texts[i])
				for j := range dst {
					if dst[j] != want[i][j] {
						err = fmt.Errorf("concurrent EmbedTo(%q)[%d] = %v, want %v", texts[i], j, dst[j], want[i][j])
						break
					}
				}
			}
			done <- err
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestCacheChangesNothing: a vector is the same whether its tokens and
// phrase windows come from the feature cache, are computed, or the cache
// started over in between; the cache stays within its bound.
func TestCacheChangesNothing(t *testing.T) {
	texts := []string{"delete a file", "open a pull request", "borrar archivo de la base de datos", "wyślij wiadomość do zespołu",
		"please create a new issue in the payments repository", "turn off the lights", "Crème brûlée"}
	warm := New(nil)
	for _, s := range texts {
		embed1(t, warm, s) // fills the cache
	}
	for _, s := range texts {
		t.Run(s, func(t *testing.T) {
			want := embed1(t, New(nil), s)
			if got := embed1(t, warm, s); !slices.Equal(got, want) {
				t.Errorf("EmbedTo(%q) with a warm cache differs from a cold one", s)
			}
		})
	}
	// Distinct words until the cache starts over, more than once.
	var sb strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&sb, "zq%dx ", i)
	}
	embed1(t, warm, sb.String())
	if warm.cache.n > DefaultFeatureCache {
		t.Errorf("cache holds %d features, bound %d", warm.cache.n, DefaultFeatureCache)
	}
	for _, s := range texts {
		t.Run(s, func(t *testing.T) {
			if got, want := embed1(t, warm, s), embed1(t, New(nil), s); !slices.Equal(got, want) {
				t.Errorf("EmbedTo(%q) after the cache started over differs", s)
			}
		})
	}
	// A token with more features than a slab takes an eighth of is stored
	// alone, between tokens stored in the slab.
	long := "delete " + strings.Repeat("abcdefghij", 8) + " file"
	embed1(t, warm, long)
	if got, want := embed1(t, warm, long), embed1(t, New(nil), long); !slices.Equal(got, want) {
		t.Errorf("EmbedTo(%q) from the cache differs", long)
	}
	// The entries share slabs: each is capped at its length, so that an
	// append to one cannot write into the next.
	for k, f := range warm.cache.m {
		if cap(f) != len(f) {
			t.Fatalf("cache entry %q has capacity %d beyond its %d features", k, cap(f), len(f))
		}
	}
	if len(warm.cache.m) == 0 || cap(warm.cache.slab) > slabFeatures {
		t.Errorf("cache holds %d entries, its slab %d features, want some, at most %d", len(warm.cache.m), cap(warm.cache.slab), slabFeatures)
	}
	small, none := New(&Options{FeatureCache: 50}), New(&Options{FeatureCache: -1})
	for _, s := range texts {
		t.Run(s, func(t *testing.T) {
			want := embed1(t, New(nil), s)
			if got := embed1(t, small, s); !slices.Equal(got, want) || small.cache.n > 50 {
				t.Errorf("EmbedTo(%q) with a 50-feature cache differs or holds %d", s, small.cache.n)
			}
			if got := embed1(t, none, s); !slices.Equal(got, want) || none.cache.n != 0 {
				t.Errorf("EmbedTo(%q) with no cache differs or holds %d", s, none.cache.n)
			}
		})
	}
}

// checkNonZero fails unless EmbedNonZero(text) is EmbedTo(text) in sparse
// form, bit for bit: every non-zero dimension once, ascending, nothing else.
func checkNonZero(t *testing.T, e *Embedder, text string) {
	t.Helper()
	want := e.EmbedTo(nil, text)
	dims, vals := e.EmbedNonZero([]int32{-1}, []float32{-1}, text) // appends after what is there
	if len(dims) != len(vals) || dims[0] != -1 || vals[0] != -1 {
		t.Fatalf("EmbedNonZero(%q) did not append: %d dims, %d values", text, len(dims), len(vals))
	}
	got := make([]float32, e.Dim())
	for i, d := range dims[1:] {
		if i > 0 && d <= dims[i] {
			t.Fatalf("EmbedNonZero(%q) dims not ascending: %d after %d", text, d, dims[i])
		}
		if vals[i+1] == 0 {
			t.Fatalf("EmbedNonZero(%q) lists dim %d with value 0", text, d)
		}
		got[d] = vals[i+1]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("EmbedNonZero(%q) differs from EmbedTo", text)
	}
}

func TestEmbedNonZeroIsEmbedTo(t *testing.T) {
	e := New(nil)
	for _, s := range []string{"", "the of a", "123 456", "delete a file", "borrar archivo de la base de datos",
		"wyślij wiadomość do zespołu", "open a pull request in toolgate/toolgate", "Crème brûlée", strings.Repeat("files ", 300)} {
		checkNonZero(t, e, s)
		checkNonZero(t, e, s) // the scratch is clean after a call
	}
	// Each slice is appended to after its own contents.
	dims, vals := e.EmbedNonZero([]int32{7, 8}, []float32{0.5}, "delete a file")
	wantDims, wantVals := e.EmbedNonZero(nil, nil, "delete a file")
	if !slices.Equal(dims[2:], wantDims) || vals[0] != 0.5 || !slices.Equal(vals[1:], wantVals) {
		t.Errorf("EmbedNonZero after 2 dims and 1 value = %v, %v; want them followed by %v, %v", dims, vals, wantDims, wantVals)
	}
	small := New(&Options{Dim: 64})
	checkNonZero(t, small, "delete a file and send an email to the whole team about the invoice")
	if testenv.Race {
		return
	}
	dims, vals = make([]int32, 0, 512), make([]float32, 0, 512)
	if n := testing.AllocsPerRun(50, func() { e.EmbedNonZero(dims, vals, "delete a file") }); n > 0 {
		t.Errorf("EmbedNonZero allocates %v times per call with reused slices, want 0", n)
	}
}

func FuzzEmbedNonZero(f *testing.F) {
	for _, s := range []string{"delete a file", "borrar archivo", "ąę łóż", "a\x00b", "x/y_z-w.v"} {
		f.Add(s)
	}
	e := New(nil)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		checkNonZero(t, e, s)
	})
}

// TestEmbedTokensNonZero checks that embedding a text's tokens and
// language gives what embedding the text gives, value for value, over
// requests in the three languages, with identifiers, other scripts and
// lexicon phrases, for a fresh Embedder (every token a cache miss) and a
// warm one (every token a hit).
func TestEmbedTokensNonZero(t *testing.T) {
	texts := []string{
		"open a pull request on github", "Remember that Ada is a person", "getHTTPResponse_v2 for ana@example.com",
		"borra la entidad Carlos del grafo de conocimiento", "utwórz nowy katalog o nazwie kopie", "거실, 에어컨, 실행하고",
		"turn off the lights in the living room", "base de datos", "", "the a an", "17 plus 25",
	}
	an := analysis.New(nil)
	for _, warm := range []bool{false, true} {
		t.Run(fmt.Sprint("warm=", warm), func(t *testing.T) {
			e := New(&Options{Analyzer: an})
			if warm {
				for _, text := range texts {
					e.EmbedNonZero(nil, nil, text)
				}
			}
			//testlint:rows each text is compared in turn against one warm or cold embedder
			for i, text := range texts {
				toks, lang := an.TokensLang(nil, text)
				gotD, gotV := e.EmbedTokensNonZero(nil, nil, toks, lang)
				wantD, wantV := New(&Options{Analyzer: an}).EmbedNonZero(nil, nil, text)
				if !slices.Equal(gotD, wantD) || !slices.Equal(gotV, wantV) {
					t.Errorf("text %d %q: tokens embed to %v %v, the text to %v %v", i, text, gotD, gotV, wantD, wantV)
				}
			}
		})
	}
}

// TestDropCache: DropCache empties the cache (CachedFeatures says so),
// and the vectors after it are those before.
func TestDropCache(t *testing.T) {
	e := New(nil)
	const text = "please create a new issue in the payments repository"
	want := embed1(t, e, text)
	if n := e.CachedFeatures(); n == 0 || n != e.cache.n {
		t.Fatalf("CachedFeatures() = %d after one text, want the cache's %d, not 0", n, e.cache.n)
	}
	e.DropCache()
	if n := e.CachedFeatures(); n != 0 || len(e.cache.m) != 0 {
		t.Fatalf("CachedFeatures() = %d (%d keys) after DropCache, want 0", n, len(e.cache.m))
	}
	if got := embed1(t, e, text); !slices.Equal(got, want) {
		t.Errorf("EmbedTo(%q) after DropCache differs", text)
	}
	if e.CachedFeatures() == 0 {
		t.Errorf("the cache stays empty after DropCache: it must fill again")
	}
}

// TestTFScaleSameBits checks that the table of sublinear tf scales holds,
// for every count it covers, the very float32 the formula gives, and that
// counts past it fall back to the formula: the table changes no vector.
func TestTFScaleSameBits(t *testing.T) {
	for c := int32(2); c < 2*int32(len(tfScales)); c++ {
		want := 1 + float32(math.Log(float64(c)))
		if got := tfScale(c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("tfScale(%d) = %v, want %v", c, got, want)
		}
	}
}
