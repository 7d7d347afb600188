package discovery

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

// translate reads a Spanish or Polish verb and its object as the English
// pair of the senses data does, only when the verb is written as a
// command.
func TestTranslateSense(t *testing.T) {
	a, lex := analysis.New(nil), lexicon.Default()
	for _, c := range []struct {
		name, text string
		lang       analysis.Lang
		want       string // one of the actions; "" for none
	}{
		{"polish imperative and object", "zapisz ten tekst do pliku notatki.txt", analysis.Polish, "write"},
		{"spanish imperative and object", "abre la página de inicio de la tienda", analysis.Spanish, "navig"},
		{"spanish object two words on", "guarda este contenido en un fichero", analysis.Spanish, "write"},
		{"a participle leads", "otwarte zgłoszenia w repozytorium", analysis.Polish, ""},
		{"no pair", "pokaż historię wiadomości", analysis.Polish, ""},
		{"english is not translated", "save the text to a file", analysis.English, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, got := translate(a, lex, c.text, c.lang)
			if c.want == "" {
				if got != nil {
					t.Errorf("translate(%q) = %q, want none", c.text, got)
				}
				return
			}
			if !slices.Contains(got, c.want) {
				t.Errorf("translate(%q) = %q, want it to hold %q", c.text, got, c.want)
			}
		})
	}
}
