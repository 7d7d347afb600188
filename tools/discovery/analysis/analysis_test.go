package analysis

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/testenv"
)

func TestSplitIdentifier(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"create_issue", []string{"create", "issue"}},
		{"createIssue", []string{"create", "issue"}},
		{"CreateIssue", []string{"create", "issue"}},
		{"create-issue", []string{"create", "issue"}},
		{"repos.create.issue", []string{"repos", "create", "issue"}},
		{"getHTTPResponse", []string{"get", "http", "response"}},
		{"HTTPServer", []string{"http", "server"}},
		{"parseJSON", []string{"parse", "json"}},
		{"utf8Decode", []string{"utf", "8", "decode"}},
		{"sha256sum", []string{"sha", "256", "sum"}},
		{"ACC-12345", []string{"acc", "12345"}},
		{"owner/repo#94218", []string{"owner", "repo", "94218"}},
		{"__private__", []string{"private"}},
		{"", nil},
		{"---", nil},
		{"ŁódźCity", []string{"lodz", "city"}},
		{"straßeName", []string{"strasse", "name"}},
		{"user's", []string{"users"}},
		{"don’t", []string{"dont"}},
		{"'quoted'", []string{"quoted"}},
		{"ID", []string{"id"}},
		{"iOS", []string{"i", "os"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := SplitIdentifier(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("SplitIdentifier(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"hello", "hello"},
		{"Hello World", "hello world"},
		{"Crème-Brûlée", "creme-brulee"},
		{"Straße", "strasse"},
		{"ẞ", "ss"},
		{"Łódź", "lodz"},
		{"zażółć gęślą jaźń", "zazolc gesla jazn"},
		{"¿Cómo está?", "¿como esta?"},
		{"ñandú", "nandu"},
		{"Ærøskøbing", "aeroskobing"},
		{"œuvre", "oeuvre"},
		{"ﬁle", "file"},
		{"ＡＢＣ１２３", "abc123"},
		{"Ελληνικά", "ελληνικα"},
		{"Привет", "привет"},
		{"東京", "東京"},
		{"e\u0301", "e"}, // combining acute
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Fold(tt.in); got != tt.want {
				t.Errorf("Fold(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestStemKnown checks stems derived by hand from the published Snowball
// algorithms (and, for English, listed in the Snowball sample vocabulary).
func TestStemKnown(t *testing.T) {
	tests := []struct {
		lang       Lang
		word, want string
	}{
		{English, "running", "run"},
		{English, "generously", "generous"},
		{English, "caresses", "caress"},
		{English, "cries", "cri"},
		{English, "ties", "tie"},
		{English, "gas", "gas"},
		{English, "gaps", "gap"},
		{English, "kiwis", "kiwi"},
		{English, "skies", "sky"},
		{English, "dying", "die"},
		{English, "news", "news"},
		{English, "inning", "inning"},
		{English, "proceed", "proceed"},
		{English, "hoping", "hope"},
		{English, "hopping", "hop"},
		{English, "consistency", "consist"},
		{English, "consistently", "consist"},
		{English, "consolatory", "consolatori"},
		{English, "consolidated", "consolid"},
		{English, "conspiracy", "conspiraci"},
		{English, "constable", "constabl"},
		{English, "knightly", "knight"},
		{English, "knives", "knive"},
		{English, "knowledge", "knowledg"},
		{English, "knowingly", "know"},
		{English, "generate", "generat"},
		{English, "communication", "communic"},
		{English, "luxuriating", "luxuri"},
		{English, "by", "by"},
		{English, "say", "say"},
		{English, "cry", "cri"},
		{Spanish, "corriendo", "corr"},
		{Spanish, "borrar", "borr"},
		{Spanish, "eliminar", "elimin"},
		{Spanish, "archivos", "archiv"},
		{Spanish, "archivo", "archiv"},
		{Spanish, "canciones", "cancion"},
		{Spanish, "cancion", "cancion"},
		{Spanish, "actualizacion", "actualiz"},
		{Spanish, "actualizar", "actualiz"},
		{Spanish, "rapidamente", "rapid"},
		// Polish: the light stemmer's design (stem_polish.go), not a
		// published reference.
		{Polish, "plik", "plik"},
		{Polish, "pliki", "plik"},
		{Polish, "plikow", "plik"},
		{Polish, "plikami", "plik"},
		{Polish, "usunac", "usun"},
		{Polish, "usuniecie", "usun"},
		{Polish, "faktury", "faktur"},
		{Polish, "wiadomosci", "wiadom"},
		{Polish, "wiadomosc", "wiadom"},
		{Polish, "dom", "dom"},
	}
	for _, tt := range tests {
		t.Run(tt.word, func(t *testing.T) {
			if got := Stem(tt.lang, tt.word); got != tt.want {
				t.Errorf("Stem(%s, %q) = %q, want %q", tt.lang, tt.word, got, tt.want)
			}
		})
	}
}

func TestTerms(t *testing.T) {
	a := New(nil)
	tests := []struct {
		text string
		lang Lang
		want []string
	}{
		{"Delete all the files", English, []string{"delet", "all", "file"}},
		{"do not send the email", English, []string{"not", "send", "email"}},
		{"please create a new issue in owner/repo", "", []string{"creat", "new", "issu", "in", "owner", "repo"}},
		{"turn off the lights", English, []string{"turn", "off", "light"}},
		{"borrar todos los archivos", Spanish, []string{"borr", "tod", "archiv"}},
		{"¿Cómo borrar el archivo?", "", []string{"borr", "archiv"}},
		{"usuń wszystkie pliki z dysku", "", []string{"usun", "wszystk", "plik", "dysk"}},
		{"listInvoices for ACC-12345", English, []string{"list", "invoic", "acc", "12345"}},
		{"", English, nil},
		{"the a an", English, nil},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := a.Terms(nil, tt.text, tt.lang); !slices.Equal(got, tt.want) {
				t.Errorf("Terms(%q, %q) = %q, want %q", tt.text, tt.lang, got, tt.want)
			}
		})
	}
}

// TermsBorrowed reads a Spanish or Polish request's words as English,
// without the function words of its own language.
func TestTermsBorrowed(t *testing.T) {
	a := New(nil)
	for _, row := range []struct {
		text string
		lang Lang
		want []string
	}{
		{"abre el pull request en github", Spanish, []string{"abr", "pull", "request", "github"}},
		{"scal pull request na githubie z main", Polish, []string{"scal", "pull", "request", "githubi", "main"}},
		{"open the pull request", English, []string{"open", "pull", "request"}},
	} {
		t.Run(row.text, func(t *testing.T) {
			if got := a.TermsBorrowed(nil, row.text, row.lang); !slices.Equal(got, row.want) {
				t.Errorf("TermsBorrowed(%q, %q) = %q, want %q", row.text, row.lang, got, row.want)
			}
		})
	}
}

func TestTermsAppendsToDst(t *testing.T) {
	a := New(nil)
	dst := []string{"keep"}
	got := a.Terms(dst, "deleting files", English)
	if want := []string{"keep", "delet", "file"}; !slices.Equal(got, want) {
		t.Errorf("Terms([keep], ...) = %q, want %q", got, want)
	}
}

func TestOptions(t *testing.T) {
	keep := New(&Options{KeepStopWords: true, NoStemming: true})
	if got, want := keep.Terms(nil, "Deleting the files", English), []string{"deleting", "the", "files"}; !slices.Equal(got, want) {
		t.Errorf("Terms with KeepStopWords, NoStemming = %q, want %q", got, want)
	}
	enOnly := New(&Options{Languages: []Lang{English}})
	if got := enOnly.DetectLang("¿Cómo borrar el archivo?"); got != English {
		t.Errorf("DetectLang restricted to English = %q, want en", got)
	}
	if _, err := NewChecked(&Options{Languages: []Lang{"de"}}); !errors.Is(err, ErrUnsupportedLanguage) {
		t.Errorf("NewChecked(Languages: de) error = %v, want ErrUnsupportedLanguage", err)
	}
}

func TestParseLang(t *testing.T) {
	tests := []struct {
		in      string
		want    Lang
		wantErr bool
	}{
		{"", "", false}, {"en", English, false}, {"ES", Spanish, false}, {"es-MX", Spanish, false},
		{"pl_PL", Polish, false}, {"de", "", true}, {"english", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLang(tt.in)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("ParseLang(%q) = %q, %v, want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		text string
		want Lang
	}{
		{"send a message to the team", English},
		{"delete file", English},
		{"", English},
		{"¿Cuál es el saldo de mi cuenta?", Spanish},
		{"envía un mensaje al equipo", Spanish},
		{"muestra todas las facturas de este mes", Spanish},
		{"crear una incidencia nueva", Spanish},
		{"wyślij wiadomość do zespołu", Polish},
		{"pokaż wszystkie faktury z tego miesiąca", Polish},
		{"jaka jest pogoda w Krakowie", Polish},
		{"usun plik z dysku", Polish},
		{"borrar archivo", Spanish},    // a listed request verb
		{"factura pendiente", English}, // no cue at all: documented fallback
		// "a" is a word of all three ("to" in Spanish, "and" in Polish),
		// and "recA" splits into rec and a: it counts for none.
		{"zmien status rekordow recA i recB na Gotowe", Polish},
		{"pasa el pedido a enviado", Spanish},
		{"add a ticket", English},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := Detect(tt.text); got != tt.want {
				t.Errorf("Detect(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestStopWordPolicy(t *testing.T) {
	// Words that change which tool a request needs are kept (stop.go).
	for _, w := range []string{"not", "no", "all", "new", "on", "off", "up", "down", "out", "without", "before", "after"} {
		t.Run(w, func(t *testing.T) {
			if IsStopWord(English, w) {
				t.Errorf("IsStopWord(en, %q) = true, want false", w)
			}
		})
	}
	// "any" opens questions far more than it selects (stop.go).
	for _, w := range []string{"any", "please", "the"} {
		t.Run(w, func(t *testing.T) {
			if !IsStopWord(English, w) {
				t.Errorf("IsStopWord(en, %q) = false, want true", w)
			}
		})
	}
	for _, w := range []string{"no", "sin", "todos", "nuevo"} {
		t.Run(w, func(t *testing.T) {
			if IsStopWord(Spanish, w) {
				t.Errorf("IsStopWord(es, %q) = true, want false", w)
			}
		})
	}
	for _, w := range []string{"nie", "bez", "wszystkie", "nowy"} {
		t.Run(w, func(t *testing.T) {
			if IsStopWord(Polish, w) {
				t.Errorf("IsStopWord(pl, %q) = true, want false", w)
			}
		})
	}
	for i, l := range Languages {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for _, w := range StopWords(l) {
				if Fold(w) != w {
					t.Errorf("stop word %q of %s is not folded", w, l)
				}
				if !IsStopWord(l, w) {
					t.Errorf("IsStopWord(%s, %q) = false for a listed word", l, w)
				}
			}
		})
	}
}

// checkTokens asserts the invariants every token satisfies.
func checkTokens(t *testing.T, text string, toks []string) {
	t.Helper()
	for _, tok := range toks {
		if tok == "" || strings.ContainsAny(tok, " \t\n_-./'") || !utf8.ValidString(tok) {
			t.Fatalf("Tokens(%q) has malformed token %q", text, tok)
		}
		if Fold(tok) != tok {
			t.Fatalf("Tokens(%q) token %q is not folded (Fold gives %q)", text, tok, Fold(tok))
		}
	}
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"", "getHTTPResponse_v2", "Crème-Brûlée Straße", "usuń wszystkie pliki", "¿Cómo borrar?",
		"user's don’t", "e\u0301\u0301", "ǅungla", "ﬁle ＡＢＣ", "\xff\xfe", "a'b'c", "ABCdef123GHI", "東京タワー"} {
		f.Add(s, "")
		f.Add(s, "es")
	}
	a := New(nil)
	raw := New(&Options{KeepStopWords: true, NoStemming: true})
	f.Fuzz(func(t *testing.T, text, lang string) {
		toks := a.Tokens(nil, text)
		checkTokens(t, text, toks)
		if got := raw.Terms(nil, text, Lang(lang)); !slices.Equal(got, toks) {
			t.Fatalf("Terms without stop words and stemming (%q) = %q, want Tokens = %q", text, got, toks)
		}
		terms := a.Terms(nil, text, Lang(lang))
		if len(terms) > len(toks) {
			t.Fatalf("Terms(%q) = %q has more terms than Tokens %q", text, terms, toks)
		}
		for _, term := range terms {
			if term == "" || !utf8.ValidString(term) {
				t.Fatalf("Terms(%q) has malformed term %q", text, term)
			}
		}
		if got := Detect(text); langIndex(got) < 0 {
			t.Fatalf("Detect(%q) = %q, not a supported language", text, got)
		}
		checkTermsDetect(t, a, text)
	})
}

func FuzzSplitIdentifier(f *testing.F) {
	for _, s := range []string{"create_issue", "getHTTPResponse", "utf8Decode", "ACC-12345", "a.b-c_d", "ŁódźCity", "", "ÀÉÎõü", "already folded words"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts := SplitIdentifier(s)
		checkTokens(t, s, parts)
		// Splitting is idempotent: the joined parts split into themselves.
		if again := SplitIdentifier(strings.Join(parts, "_")); !slices.Equal(again, parts) {
			t.Fatalf("SplitIdentifier(%q) = %q, but splitting their join gives %q", s, parts, again)
		}
		// AppendIdentifier writes the join, after what dst held.
		if got, want := string(AppendIdentifier([]byte("x"), s, "_")), "x"+strings.Join(parts, "_"); got != want {
			t.Fatalf("AppendIdentifier(x, %q, _) = %q, want %q", s, got, want)
		}
		if got, want := string(AppendIdentifier(nil, s, " ")), strings.Join(parts, " "); got != want {
			t.Fatalf("AppendIdentifier(nil, %q, space) = %q, want %q", s, got, want)
		}
	})
}

// TestConcurrentUse runs one Analyzer from several goroutines (run with
// -race) and checks every result against the serial one.
func TestConcurrentUse(t *testing.T) {
	a := New(nil)
	texts := []string{"getHTTPResponse_v2 user's files", "¿Cómo borrar el archivo?", "usuń wszystkie pliki", "Straße Crème", "running generously"}
	want := make([][]string, len(texts))
	for i, s := range texts {
		want[i] = a.Terms(nil, s, "")
	}
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func() {
			var err error
			var dst []string
			for r := 0; r < 200 && err == nil; r++ {
				i := (g + r) % len(texts)
				if dst = a.Terms(dst[:0], texts[i], ""); !slices.Equal(dst, want[i]) {
					err = fmt.Errorf("concurrent Terms(%q) = %q, want %q", texts[i], dst, want[i])
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

// checkTermsDetect fails unless a.TermsDetect(text) is Detect(text) and
// Terms in that language, appended after what dst holds.
func checkTermsDetect(t *testing.T, a *Analyzer, text string) {
	t.Helper()
	lang := Detect(text)
	want := a.Terms([]string{"x"}, text, lang)
	got, gotLang := a.TermsDetect([]string{"x"}, text)
	if gotLang != lang || !slices.Equal(got, want) {
		t.Fatalf("TermsDetect(%q) = %q, %q; want Terms in Detect's %q = %q", text, got, gotLang, lang, want)
	}
}

func TestTermsDetect(t *testing.T) {
	// English only: Terms with lang "" would read every text as English;
	// TermsDetect still detects among all languages, as Detect does.
	englishOnly := New(&Options{Languages: []Lang{English}})
	for _, a := range []*Analyzer{New(nil), englishOnly, New(&Options{KeepStopWords: true})} {
		for _, s := range []string{"", "delete the file", "borrar todos los archivos de la base de datos",
			"usuń wszystkie pliki z katalogu", "¿Cómo borrar?", "getHTTPResponse_v2 user's files"} {
			checkTermsDetect(t, a, s)
		}
	}
	if _, lang := englishOnly.TermsDetect(nil, "borrar todos los archivos de la base de datos"); lang != Spanish {
		t.Errorf("TermsDetect of a Spanish request by an English-only analyzer = %q, want es (Detect's)", lang)
	}
}

// TestTermsDetectFunc pins that TermsDetectFunc gives TermsDetect's terms
// and language and passes fn what Tokens returns, and that TokensFunc
// passes the same tokens.
func TestTermsDetectFunc(t *testing.T) {
	a := New(nil)
	for _, text := range []string{"Get rid of the old cronjob", "pokaż logi poda płatności", "búscame los archivos", ""} {
		t.Run(text, func(t *testing.T) {
			wantTerms, wantLang := a.TermsDetect(nil, text)
			wantToks := a.Tokens(nil, text)
			var gotToks []string
			var gotLang Lang
			terms, lang := a.TermsDetectFunc(nil, text, func(toks []string, l Lang) {
				gotToks = append([]string(nil), toks...)
				gotLang = l
			})
			if !slices.Equal(terms, wantTerms) || lang != wantLang || gotLang != wantLang {
				t.Errorf("TermsDetectFunc = %q %s (fn saw %s), want %q %s", terms, lang, gotLang, wantTerms, wantLang)
			}
			if !slices.Equal(gotToks, wantToks) {
				t.Errorf("fn saw tokens %q, want %q", gotToks, wantToks)
			}
			var viaFunc []string
			a.TokensFunc(nil, text, func(toks []string) { viaFunc = append([]string(nil), toks...) })
			if !slices.Equal(viaFunc, wantToks) {
				t.Errorf("TokensFunc saw %q, want %q", viaFunc, wantToks)
			}
		})
	}
}

func TestAppendIdentifierAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" || testenv.Race {
		t.Skip("coverage and the race detector allocate")
	}
	buf := make([]byte, 0, 256)
	AppendIdentifier(buf, "getHTTPResponse_v2", " ") // the pool's scratch
	if n := testing.AllocsPerRun(100, func() { buf = AppendIdentifier(buf[:0], "getHTTPResponse_v2 ŁódźCity", "_") }); n != 0 {
		t.Errorf("AppendIdentifier allocates %v times a call, want 0", n)
	}
}
