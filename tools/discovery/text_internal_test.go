package discovery

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/tools"
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
			_, got, _, _ := translate(a, lex, nil, c.text, c.lang)
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

// translate's terms are those of the joined English of every word's
// translations (word by word, through its cache, they come to the same),
// and its cache changes neither them nor the actions, on the first
// request or on a second that finds every word there.
func TestTranslateCache(t *testing.T) {
	a, lex := analysis.New(nil), lexicon.Default()
	var c transCache
	for _, q := range []struct {
		name, text string
		lang       analysis.Lang
	}{
		{"polish", "zapisz ten tekst do pliku notatki.txt i pokaż otwarte zgłoszenia", analysis.Polish},
		{"spanish", "guarda este contenido en un fichero y abre la página de inicio", analysis.Spanish},
		{"untranslated words", "qwerty asdfgh pull request", analysis.Polish},
	} {
		t.Run(q.name, func(t *testing.T) {
			var all []string
			for _, w := range contentTokens(a, q.text, q.lang) {
				all = append(all, lex.Translate(q.lang, w)...)
			}
			var wantTerms []string
			if len(all) > 0 {
				wantTerms = a.Terms(nil, strings.Join(all, " "), analysis.English)
			}
			gotTerms, wantActs, wantLead, _ := translate(a, lex, nil, q.text, q.lang)
			if !slices.Equal(gotTerms, wantTerms) {
				t.Errorf("translate's terms = %q, the joined translations' = %q", gotTerms, wantTerms)
			}
			for round := range 2 {
				terms, acts, lead, _ := translate(a, lex, &c, q.text, q.lang)
				if !slices.Equal(terms, wantTerms) || !slices.Equal(acts, wantActs) || !slices.Equal(lead, wantLead) {
					t.Errorf("round %d: translate through the cache = %q, %q; without it %q, %q", round, terms, acts, wantTerms, wantActs)
				}
			}
		})
	}
}

// translate's lead is the English of a request's first word when that word
// is a command written as the lists' entry, and nothing otherwise.
func TestTranslateLead(t *testing.T) {
	a, lex := analysis.New(nil), lexicon.Default()
	for _, c := range []struct {
		name, text string
		lang       analysis.Lang
		want       []string
	}{
		{"polish imperative", "zapomnij wszystko o Marku", analysis.Polish, a.Terms(nil, "forget", analysis.English)},
		{"a participle leads", "otwarte zgłoszenia w repozytorium", analysis.Polish, nil},
		{"a word no list has leads", "qwerty zapomnij", analysis.Polish, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, got, _ := translate(a, lex, nil, c.text, c.lang); !slices.Equal(got, c.want) {
				t.Errorf("translate(%q) lead = %q, want %q", c.text, got, c.want)
			}
		})
	}
}

// BenchmarkTranslate measures translate on one Polish request, without
// the Discoverer's cache of each word's analysed English and with it.
func BenchmarkTranslate(b *testing.B) {
	a, lex := analysis.New(nil), lexicon.Default()
	const q = "pokaż otwarte pull requesty w moim repozytorium na githubie"
	var c transCache
	for _, bc := range []struct {
		name  string
		cache *transCache
	}{{"uncached", nil}, {"cached", &c}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				translate(a, lex, bc.cache, q, analysis.Polish)
			}
		})
	}
}

// TestForeignLang checks which requests that detection leaves in English
// (no cue word, no accent) are read as Spanish or Polish by their words,
// and that English ones, and an analyzer without those languages, stay.
func TestForeignLang(t *testing.T) {
	_, x := indexed(t, nil,
		dbTool("update_records", "Update the status of records."),
		dbTool("export_data", "Export data as CSV."),
	)
	for _, row := range []struct {
		name, text string
		langs      []analysis.Lang // the analyzer's (nil: all)
		want       analysis.Lang
	}{
		{"polish, no cue", "zmien status rekordow", nil, analysis.Polish},
		{"spanish, no cue", "borrar registros viejos", nil, analysis.Spanish},
		{"english cue word", "zmien the status", nil, ""},
		{"english words", "export data records", nil, ""},
		{"english only analyzer", "zmien status rekordow", []analysis.Lang{analysis.English}, ""},
		{"polish command, english words", "scal pull request", nil, analysis.Polish},
		{"spanish command, english words", "ejecuta export data", nil, analysis.Spanish},
		{"english command, a polish word", "merge pull request numer", nil, ""},
		{"polish question word, english names", "jakie rekordy ma Export Data", nil, analysis.Polish},
		{"spanish question word, english names", "cuales registros tiene Export Data", nil, analysis.Spanish},
		{"english question word", "which records has Export Data", nil, ""},
	} {
		t.Run(row.name, func(t *testing.T) {
			a := analysis.New(&analysis.Options{Languages: row.langs})
			toks := a.Tokens(nil, row.text)
			if got := foreignLang(a, lexicon.Default(), x, toks); got != row.want {
				t.Errorf("foreignLang(%q) = %q, want %q", row.text, got, row.want)
			}
		})
	}
}

// listQuestion and placeQuestion, on the same requests: a question for
// which things there are, and one where something is.
func TestListQuestion(t *testing.T) {
	a := analysis.New(nil)
	for _, row := range []struct {
		text string
		lang analysis.Lang
		want bool // listQuestion
		// placeQuestion
		place bool
	}{
		{"which pods are running in staging", analysis.English, true, false},
		{"what are the open bugs", analysis.English, false, false}, // "are", then a determiner and an adjective
		{"what files are in /var/log", analysis.English, true, false},
		{"which is the default branch", analysis.English, false, false},
		{"what does issue 1234 say", analysis.English, false, false},
		{"what's in notes.txt", analysis.English, false, false},
		{"what is the status", analysis.English, false, false},
		{"list the files", analysis.English, false, false},
		{"¿qué tablas hay en la base?", analysis.Spanish, true, false},
		{"que las ramas", analysis.Spanish, true, false},
		{"qué sabes de María", analysis.Spanish, false, true},
		{"que plan tiene acme", analysis.Spanish, false, false},
		{"jakie kolekcje są w bazie", analysis.Polish, true, false},
		{"które firmy", analysis.Polish, true, false},
		{"pokaż kolekcje", analysis.Polish, false, false},
		{"jakie", analysis.Polish, false, false},
		{"where is config.yaml under this project", analysis.English, false, true},
		{"where's the report", analysis.English, false, true},
		{"where are the logs", analysis.English, false, true},
		{"¿dónde está el informe?", analysis.Spanish, false, true},
		{"gdzie jest raport", analysis.Polish, false, true},
		{"what do you remember about project Apollo", analysis.English, false, true},
		{"co pamiętasz o projekcie Orion", analysis.Polish, false, true},
		{"what do you think", analysis.English, false, false},
		{"show where the report is", analysis.English, false, false},
		{"where", analysis.English, false, false},
		{"donde", analysis.English, false, false},
	} {
		t.Run(row.text, func(t *testing.T) {
			toks := a.Tokens(nil, row.text)
			if got := listQuestion(toks, row.lang); got != row.want {
				t.Errorf("listQuestion(%q, %s) = %v, want %v", row.text, row.lang, got, row.want)
			}
			if got := placeQuestion(toks, row.lang); got != row.place {
				t.Errorf("placeQuestion(%q, %s) = %v, want %v", row.text, row.lang, got, row.place)
			}
		})
	}
}

// TestRequestWords holds the readings of a request's tokens that pick
// words out for another weight: light and framing verbs, idioms'
// words, particles standing as prepositions.
func TestRequestWords(t *testing.T) {
	a := analysis.New(nil)
	lex := lexicon.Default()
	light := func(toks []string) []string {
		_, light := phraseWords(nil, nil, a, lex, toks, analysis.English)
		return framingVerbs(light, toks)
	}
	idiom := func(toks []string) []string { return idiomWords(nil, toks) }
	prep := func(toks []string) []string { return prepositionWords(nil, lex, toks) }
	for _, row := range []struct {
		rule string
		read func(toks []string) []string
		text string
		want []string
	}{
		{"light", light, "get rid of the old branch", []string{"get"}},
		{"light", light, "look up the user", []string{"look"}},
		{"light", light, "get the user", nil}, // no phrase: "get" is the action
		{"light", light, "show me the open issues", []string{"show"}},
		{"light", light, "help us find the file", []string{"help"}},
		{"light", light, "send me the report", nil}, // "send" is the action
		{"light", light, "show the open issues", nil},
		{"idiom", idiom, "hang up the call right now", []string{"right"}},
		{"idiom", idiom, "delete the branch for good", []string{"good"}},
		{"idiom", idiom, "read both files at once", []string{"once"}},
		{"idiom", idiom, "list all files at all", []string{"all"}},
		{"idiom", idiom, "grant the right role", nil},
		{"idiom", idiom, "list the good products", nil},
		{"idiom", idiom, "list all files", nil},
		{"preposition", prep, "open a pull request on github", []string{"on"}},
		{"preposition", prep, "which pods are running in the staging namespace", []string{"in"}},
		{"preposition", prep, "on the page, dismiss the alert", []string{"on"}},
		{"preposition", prep, "comment on the issue", nil},                // after the imperative
		{"preposition", prep, "turn on notifications", nil},               // after the imperative
		{"preposition", prep, "please spin up a new app", nil},            // after the first content word
		{"preposition", prep, "can you log in to the portal", nil},        // before a function word
		{"preposition", prep, "switch maintenance mode on", nil},          // ends the request
		{"preposition", prep, "I want to set up a project", nil},          // after a light verb
		{"preposition", prep, "the app should scale up the workers", nil}, // a phrase the lexicon knows
	} {
		t.Run(row.rule+"/"+row.text, func(t *testing.T) {
			if got := row.read(a.Tokens(nil, row.text)); !slices.Equal(got, row.want) {
				t.Errorf("%s words of %q = %q, want %q", row.rule, row.text, got, row.want)
			}
		})
	}
}

// planWeights returns the weights plan gives query's terms over an index
// of one tool described by about, by term (an English stem).
func planWeights(t *testing.T, about, query string) map[string]float64 {
	t.Helper()
	d, x := indexed(t, nil, tools.Tool{ID: "t/tool", Description: about, Card: tools.Card{Name: "tool", Summary: about}})
	s := getScratch(len(x.docs))
	defer putScratch(s)
	d.plan(x, s, query, nil, false)
	names := make(map[uint32]string, len(x.terms))
	for name, id := range x.terms {
		names[id] = name
	}
	weights := make(map[string]float64, len(s.terms))
	for _, qt := range s.terms {
		weights[names[qt.id]] = qt.w
	}
	return weights
}

// The weight plan gives a request's word (0: not a term): light and
// framing verbs and digit runs are hints, a name's words are not widened,
// an irregular form weighs as its lemma ("sent": "send") unless that is a
// light verb, a word no card uses reaches the card word it differs from by
// a nominal suffix ("pay": "payment", "shipment": "ship") at widenWeight,
// the word that opens a request, its command, is widened to its synonyms
// at widenWeight though a card uses it, if no tool is named by it ("text":
// "message"), and its other words that no tool's name or summary has at
// passingWeight,
// an idiom's word and a particle standing as a preposition are dropped, a question where something is (or what the
// assistant knows of it) adds "search" and "find". The rows at full or
// widened weight are the premises the others contrast with.
func TestPlanWeights(t *testing.T) {
	const (
		story   = "Get and tell a story about prices, in base64"
		profile = "Get the profile of a business"
		grant   = "Grant a role the right to read"
		files   = "Search for files and find text in them"
		paid    = "Get the payments of a customer and send the invoice"
		ship    = "Ship an order to an address"
		text    = "Send a message, or render the text of a template"
	)
	for _, row := range []struct {
		about, query, word string
		want               float64
	}{
		{story, "can you tell me the prices", "tell", lightVerbWeight},
		{story, "can you tell me the prices", "prices", 1},
		{story, "get rid of the story", "get", lightVerbWeight},
		{story, "get rid of the story", "story", 1},
		{story, "story 64 in base64", "64", digitWeight},
		{story, "story 64 in base64", "story", 1},
		{profile, "profile of the shop", "business", widenWeight},
		{profile, "profile of shop-prod", "business", 0},
		{profile, "profile of shop_prod", "business", 0},
		{profile, "profile of (shop-prod)", "business", 0},
		{grant, "grant the right", "right", 1},
		{grant, "grant it right now", "right", 0},
		{grant, "grant it right now", "grant", 1},
		{files, "where is the report", "search", listWeight},
		{files, "where is the report", "find", listWeight},
		{files, "dónde está el informe", "search", listWeight},
		{files, "gdzie jest raport", "find", listWeight},
		{files, "what do you know about the report", "search", listWeight},
		{files, "search the report", "search", 1},
		{files, "find text in the files", "in", 0},
		{files, "find text in", "in", 1},
		{paid, "who sent the invoice", "send", 1},
		{paid, "who sent the invoice", "invoice", 1},
		{paid, "what has the customer paid", "payment", widenWeight},
		{paid, "pay the customer", "payment", widenWeight},
		{paid, "payment of the customer", "payment", 1},
		{paid, "what invoices we got", "get", 0},
		{ship, "track a shipment", "ship", widenWeight},
		{text, "text the customer", "text", 1},
		{text, "text the customer", "message", widenWeight},
		{text, "the text of the customer", "message", 0}, // the summary has "text"
		{text, "render the text", "message", 0},
	} {
		t.Run(row.query+"/"+row.word, func(t *testing.T) {
			weights := planWeights(t, row.about, row.query)
			if w := weights[analysis.Stem(analysis.English, row.word)]; w != row.want {
				t.Errorf("plan(%q): weight of %q = %v, want %v (terms %v)", row.query, row.word, w, row.want, weights)
			}
		})
	}
}

// TestWidenCommand: the word that opens a request is widened to its
// synonyms when cards use it but no tool is named by it; a tool named by
// it takes it at its word. The request's other words are widened less,
// and only where no tool's summary has them and the request is short.
func TestWidenCommand(t *testing.T) {
	send := tools.Tool{ID: "t/send_message", Description: "Send a message to a number", Card: tools.Card{Name: "send_message"}}
	render := tools.Tool{ID: "t/render_template", Description: "Render the text of a template", Card: tools.Card{Name: "render_template"}}
	replace := tools.Tool{ID: "t/replace_text", Description: "Replace text in a file", Card: tools.Card{Name: "replace_text"}}
	summarised := render
	summarised.Card.Summary = render.Description
	for _, row := range []struct {
		name  string
		query string
		ts    []tools.Tool
		want  float64
	}{
		{"no tool named text", "text the customer", []tools.Tool{send, render}, widenWeight},
		{"a tool named text", "text the customer", []tools.Tool{send, render, replace}, 0},
		// A word no tool is named by, used in passing, is widened too,
		// at passingWeight: it is a detail of the request, not its
		// action.
		{"text not first", "the customer wants a text", []tools.Tool{send, render}, passingWeight},
		{"text not first, a tool named text", "the customer wants a text", []tools.Tool{send, render, replace}, 0},
		{"a light verb", "get the text", []tools.Tool{send, render}, passingWeight},
		{"a word no card uses", "the customer wants a pear", []tools.Tool{send, render}, 0},
		{"text not first, in a summary", "the customer wants a text", []tools.Tool{send, summarised}, 0},
		{"text first, in a summary", "text the customer", []tools.Tool{send, summarised}, widenWeight},
		// In a long request the words are mostly details: none is
		// widened but the command.
		{"a long request", "the customer from the Lisbon office wants the text about the order, the invoice, the delivery date, the warranty and the refund policy of the shop",
			[]tools.Tool{send, render}, 0},
		{"a long request's command", "text the customer from the Lisbon office about the order, the invoice, the delivery date and the refund policy of the shop",
			[]tools.Tool{send, render}, widenWeight},
	} {
		t.Run(row.name, func(t *testing.T) {
			d, x := indexed(t, nil, row.ts...)
			s := getScratch(len(x.docs))
			defer putScratch(s)
			d.plan(x, s, row.query, nil, false)
			var got float64
			for _, qt := range s.terms {
				if qt.id == x.terms["messag"] {
					got = qt.w
				}
			}
			if got != row.want {
				t.Errorf("plan(%q) over %d tools: weight of message = %v, want %v", row.query, len(row.ts), got, row.want)
			}
		})
	}
}

func TestNameWords(t *testing.T) {
	a := analysis.New(nil)
	for _, row := range []struct {
		text string
		want []string
	}{
		{"nuke staging_old, then restart shop-prod and queue-worker", []string{"stage", "old", "shop", "prod", "queue", "worker"}},
		{"profile of (shop-prod)", []string{"shop", "prod"}},
		{"x-y-z w_v", []string{"x", "y", "z", "w", "v"}},
		{"a - b", nil},
		{"the end-", nil},
		{"no joiner here", nil},
	} {
		t.Run(row.text, func(t *testing.T) {
			if got := nameWords(nil, a, row.text); !slices.Equal(got, row.want) {
				t.Errorf("nameWords(%q) = %q, want %q", row.text, got, row.want)
			}
		})
	}
}

// showList reads an English or Spanish request opened by a verb of
// showing before a plural as asking for a list.
func TestShowList(t *testing.T) {
	a := analysis.New(nil)
	for _, row := range []struct {
		text string
		lang analysis.Lang
		want bool
	}{
		{"show me my boards", analysis.English, true},
		{"display all invoices from May", analysis.English, true},
		{"muéstrame los tableros que tengo", analysis.Spanish, true},
		{"enséñanos las facturas", analysis.Spanish, true},
		{"show me the status", analysis.English, false},       // no plural
		{"show where the report is", analysis.English, false}, // a question of place
		{"show me what this does", analysis.English, false},
		{"list my boards", analysis.English, false}, // "list" says it already
		{"pokaż kolekcje", analysis.Polish, false},  // Polish plurals are not read
		{"show", analysis.English, false},
	} {
		t.Run(row.text, func(t *testing.T) {
			if got := showList(a.Tokens(nil, row.text), row.lang); got != row.want {
				t.Errorf("showList(%q, %s) = %v, want %v", row.text, row.lang, got, row.want)
			}
		})
	}
}

// A request to be shown things of a kind adds the list term, as a
// question which things there are does.
func TestShowListAsksList(t *testing.T) {
	d, x := indexed(t, &Options{NoDense: true}, dbTool("list_boards", "List all boards the user has access to."),
		dbTool("get_board_labels", "Get all labels of a specific board."))
	id, ok := x.terms[listTerm]
	if !ok {
		t.Fatalf("no term %q in the index", listTerm)
	}
	for _, q := range []string{"show me my boards", "muestrame los tableros que tengo"} {
		t.Run(q, func(t *testing.T) {
			s := getScratch(len(x.docs))
			defer putScratch(s)
			d.plan(x, s, q, nil, false)
			var w float64
			for _, qt := range s.terms {
				if qt.id == id {
					w = qt.w
				}
			}
			if w < listWeight {
				t.Errorf("plan(%q): term %q weighs %v, want at least %v", q, listTerm, w, listWeight)
			}
		})
	}
}

// TestDerivedTermSuffixed checks derivedTerm, which reads the terms with a
// suffix added from x.suffixed, against looking each word plus each
// suffix up in the terms: the same term for every word of the cards,
// every word with each suffix added or cut, and words no card has.
func TestDerivedTermSuffixed(t *testing.T) {
	_, x := indexed(t, nil,
		tools.Tool{ID: "t/pay", Description: "Record a payment for the sender's order and pay the seller", Card: tools.Card{Name: "pay"}},
		tools.Tool{ID: "t/edit_rental", Description: "Open the editor to edit an action, or act on a rental", Card: tools.Card{Name: "edit_rental"}},
		tools.Tool{ID: "t/ship", Description: "Track a shipment; a shipper's arrival", Card: tools.Card{Name: "ship"}})
	lookedUp := func(w, suf string) (uint32, bool) {
		if id, ok := x.terms[w+suf]; ok && len(x.postings[id]) > 0 {
			return id, true
		}
		if base, ok := strings.CutSuffix(w, suf); ok && len(base) >= minDerivedBase {
			if id, ok := x.terms[base]; ok && len(x.postings[id]) > 0 {
				return id, true
			}
		}
		return 0, false
	}
	words := []string{"pear", "zzz", "ren", "shipp"}
	for w := range x.terms {
		words = append(words, w)
		for _, suf := range nominalSuffixes {
			words = append(words, w+suf)
			if base, ok := strings.CutSuffix(w, suf); ok {
				words = append(words, base)
			}
		}
	}
	found := 0
	for _, w := range words {
		plus := x.suffixed[w]
		for k, suf := range nominalSuffixes {
			t.Run(w+"+"+suf, func(t *testing.T) {
				id, ok := x.derivedTerm(w, k, plus[k])
				wantID, wantOK := lookedUp(w, suf)
				if id != wantID || ok != wantOK {
					t.Errorf("derivedTerm(%q, %q) = %d, %v, want %d, %v", w, suf, id, ok, wantID, wantOK)
				}
				if ok {
					found++
				}
			})
		}
	}
	if found == 0 {
		t.Error("no word has a derived term: the catalog tests nothing")
	}
}
