package analysis

// Function words that mark a language in a short request. Each is folded.
// A word listed for two languages counts for neither.
var cueWords = func() map[string]uint8 {
	m := map[string]uint8{}
	add := func(bit uint8, words string) {
		for _, w := range splitFields(words) {
			m[w] |= bit
		}
	}
	add(1, `the a an of to for and in on with my me i is are from this that what how please it by at be your you all
show find get list create delete send make new update`)
	add(2, `el la los las de del que y en un una por para con mi mis es al lo como se todos todas favor cual que
este esta nuevo nueva quiero puedes muestra mostrar buscar crear borrar eliminar enviar dame necesito mis a me`)
	add(4, `i w z na do nie sie jak co to jest dla od po moj moje moja mi mnie prosze wszystkie czy ze o sa ten ta te
pokaz znajdz utworz usun wyslij dodaj nowy nowa nowe moich a`)
	return m
}()

// IsEnglishCue reports whether the folded token is one of the words that
// Detect counts for English alone ("the", "my", "show"): a request with
// one is English by evidence, not by default.
func IsEnglishCue(t string) bool { return cueWords[t] == 1 }

func splitFields(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\n' || s[i] == '\t' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return out
}

// Detect guesses the language of a short text such as a tool request. It
// scores letters only one orthography uses (ą ę ł ś ż ... for Polish; ñ á é
// í ú ¿ ¡ for Spanish), Polish consonant clusters (sz, cz, rz, prz), and
// function words of each language, and returns the best-scoring language.
// English wins ties and is returned for text with no cue at all, so a
// Spanish or Polish request typed without accents, function words or
// common request verbs ("factura pendiente") is reported as English: callers that must not
// miss such requests should look words up in every language (as the ngram
// embedder and the lexicon do). Detect allocates nothing for texts under a
// few hundred bytes after warm-up.
func Detect(text string) Lang {
	return defaultAnalyzer.DetectLang(text)
}

var defaultAnalyzer = New(nil)

// DetectLang is Detect restricted to the Analyzer's languages.
func (a *Analyzer) DetectLang(text string) Lang {
	sc := scratchPool.Get().(*scratch)
	toks, cues := sc.tokenize(sc.toks[:0], text, true) // only read here
	l := a.detect(toks, cues)
	clear(toks)
	sc.toks = toks[:0]
	scratchPool.Put(sc)
	return l
}

func (a *Analyzer) detect(toks []string, cues langCues) Lang {
	var score [3]int
	score[1] = 3 * cues.es
	score[2] = 3 * cues.pl
	for _, t := range toks {
		switch bits := cueWords[t]; bits {
		case 1:
			score[0] += 2
		case 2:
			score[1] += 2
		case 4:
			score[2] += 2
		}
		if polishCluster(t) {
			score[2]++
		}
		if len(t) > 4 && (hasSuffix(t, "cion") || hasSuffix(t, "ciones")) {
			score[1]++
		}
	}
	best := 0
	for i := 1; i < 3; i++ {
		if a.langs[i] && score[i] > score[best] {
			best = i
		}
	}
	return Languages[best]
}

// polishCluster reports whether t contains a consonant cluster that is
// common in Polish and rare in English and Spanish.
func polishCluster(t string) bool {
	for i := 0; i+1 < len(t); i++ {
		switch t[i+1] {
		case 'z':
			switch t[i] {
			case 's', 'c', 'r', 'd':
				return true
			}
		}
	}
	return false
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }
