package discovery

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

func TestSkeleton(t *testing.T) {
	for _, row := range []struct{ word, want string }{
		{"kolekcje", "colection"},
		{"kolekcjami", "colection"},
		{"sekcji", "section"},
		{"akcjonariusz", "actionarius"},
		{"collection", "colection"},
		{"depozyt", "deposit"},
		{"organization", "organisation"},
		{"migraciones", "migrationes"},
		{"conexion", "conection"},
		{"indeks", "index"},
		{"rekordow", "recordov"},
		{"telephone", "telefone"},
		{"automatyzacja", "automatisation"},
		{"", ""},
	} {
		t.Run(row.word, func(t *testing.T) {
			if got := string(skeleton(nil, row.word)); got != row.want {
				t.Errorf("skeleton(%q) = %q, want %q", row.word, got, row.want)
			}
		})
	}
}

// TestCognateTerms checks which words of a Spanish or Polish request reach
// a catalog's English terms by their spelling: untranslated words of five
// letters or more whose skeleton covers a term's, and nothing else. Its
// lexicon translates one word, so that the embedded lists, which grow,
// decide nothing here.
func TestCognateTerms(t *testing.T) {
	lex, err := lexicon.Build(&lexicon.Source{Polish: []lexicon.Entry{{Key: "rekordow", Values: []string{"record"}}}})
	if err != nil {
		t.Fatal(err)
	}
	d, x := indexed(t, &Options{Lexicon: lex},
		dbTool("list_collections", "List the collections of a database."),
		dbTool("create_index", "Create an index on a collection."),
		dbTool("list_migrations", "List the applied migrations."),
		dbTool("count", "Count the documents of a collection."),
		dbTool("update_records", "Update records of a table."),
		dbTool("get_session", "Get the current session."),
	)
	for _, row := range []struct {
		name, text string
		lang       analysis.Lang
		want       []string // stems of the terms found, sorted
	}{
		{"polish inflected", "pokaz kolekcje w bazie", analysis.Polish, []string{"collect"}},
		{"polish ks", "usun indeks email", analysis.Polish, []string{"index"}},
		{"polish genitive", "ile dokumentow w kolekcji", analysis.Polish, []string{"collect", "document"}},
		{"translated word", "zmien status rekordow", analysis.Polish, nil},
		{"spanish cion", "lista las migraciones aplicadas", analysis.Spanish, []string{"migrat"}},
		{"spanish single s", "cierra la sesion", analysis.Spanish, []string{"session"}},
		{"short word", "crea un indice", analysis.Spanish, nil},
		{"no cognate", "pokaz szczegoly numeru", analysis.Polish, nil},
	} {
		t.Run(row.name, func(t *testing.T) {
			var got []string
			_, _, _, unknown := translate(d.analyzer, d.lex, nil, row.text, row.lang)
			for _, id := range x.cognateTerms(nil, unknown) {
				for term, tid := range x.terms {
					if tid == id {
						got = append(got, term)
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, row.want) {
				t.Errorf("cognateTerms(%q) = %q, want %q", row.text, got, row.want)
			}
		})
	}
}

// dbTool is a tool of namespace db with name and description.
func dbTool(name, desc string) tools.Tool {
	return tools.Tool{ID: "db/" + name, Description: desc, Card: tools.Card{Name: name}}
}
