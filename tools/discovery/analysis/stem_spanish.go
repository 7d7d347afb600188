package analysis

// This file implements the Snowball Spanish stemmer
// (snowballstem.org/algorithms/spanish/stemmer.html) over folded input.
// Because Terms folds before stemming, the suffix lists are the published
// ones with their accents removed, and three suffixes that exist only with
// an accent are left out, because unaccented they are common noun endings
// and stripping them would split a noun's singular from its plural:
// "ís" (vivís; but análisis, crisis), "ió" (comió; but servicio) and the
// residual "í". Everything else follows the published algorithm, so the
// stems differ from the reference only for words whose accent was the only
// thing that chose a suffix.

func isVowelEs(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	}
	return false
}

type esWord struct {
	b          []byte
	rv, r1, r2 int
}

func (w *esWord) hasSuffix(s string) bool {
	return len(w.b) >= len(s) && string(w.b[len(w.b)-len(s):]) == s
}

func (w *esWord) longest(set *suffixSet) string { return set.longest(w.b) }

func (w *esWord) at(suf string) int     { return len(w.b) - len(suf) }
func (w *esWord) cut(suf string)        { w.b = w.b[:len(w.b)-len(suf)] }
func (w *esWord) inRV(suf string) bool  { return w.at(suf) >= w.rv }
func (w *esWord) inR1(suf string) bool  { return w.at(suf) >= w.r1 }
func (w *esWord) inR2(suf string) bool  { return w.at(suf) >= w.r2 }
func (w *esWord) replace(suf, r string) { w.b = append(w.b[:len(w.b)-len(suf)], r...) }

func regionAfterVCEs(b []byte, start int) int {
	for i := start + 1; i < len(b); i++ {
		if !isVowelEs(b[i]) && isVowelEs(b[i-1]) {
			return i + 1
		}
	}
	return len(b)
}

var (
	esPronouns     = newSuffixSet("me", "se", "sela", "selo", "selas", "selos", "la", "le", "lo", "las", "les", "los", "nos")
	esPronounHosts = newSuffixSet("iendo", "ando", "ar", "er", "ir", "yendo")
	esStep1        = newSuffixSet(
		"anza", "anzas", "ico", "ica", "icos", "icas", "ismo", "ismos", "able", "ables", "ible", "ibles",
		"ista", "istas", "oso", "osa", "osos", "osas", "amiento", "amientos", "imiento", "imientos",
		"adora", "ador", "acion", "adoras", "adores", "aciones", "ante", "antes", "ancia", "ancias",
		"logia", "logias", "ucion", "uciones", "encia", "encias", "amente", "mente",
		"idad", "idades", "iva", "ivo", "ivas", "ivos",
	)
	esStep2a = newSuffixSet("ya", "ye", "yan", "yen", "yeron", "yendo", "yo", "yas", "yes", "yais", "yamos")
	esStep2b = newSuffixSet(
		"en", "es", "eis", "emos",
		"arian", "arias", "aran", "aras", "ariais", "aria", "areis", "ariamos", "aremos", "ara", "are",
		"erian", "erias", "eran", "eras", "eriais", "eria", "ereis", "eriamos", "eremos", "era", "ere",
		"irian", "irias", "iran", "iras", "iriais", "iria", "ireis", "iriamos", "iremos", "ira", "ire",
		"aba", "ada", "ida", "ia", "iera", "ad", "ed", "id", "ase", "iese", "aste", "iste",
		"an", "aban", "ian", "aran", "ieran", "asen", "iesen", "aron", "ieron", "ado", "ido", "ando", "iendo",
		"ar", "er", "ir", "as", "abas", "adas", "idas", "ias", "aras", "ieras", "ases", "ieses",
		"ais", "abais", "iais", "arais", "ierais", "aseis", "ieseis", "asteis", "isteis", "ados", "idos",
		"amos", "abamos", "iamos", "imos", "aramos", "ieramos", "iesemos", "asemos",
	)
	esStep3 = newSuffixSet("os", "a", "o", "e")
	esMente = newSuffixSet("ante", "able", "ible")
	esIdad  = newSuffixSet("abil", "ic", "iv")
)

func (sc *scratch) stemSpanish(word string) string {
	if len(word) < 2 {
		return word
	}
	w := esWord{b: append(sc.stem[:0], word...)}
	s := stemSpanishWord(word, &w)
	sc.stem = w.b[:0]
	return s
}

func stemSpanishWord(word string, wp *esWord) string {
	w := wp
	n := len(w.b)
	w.rv = n
	switch {
	case !isVowelEs(w.b[1]):
		for i := 2; i < n; i++ {
			if isVowelEs(w.b[i]) {
				w.rv = i + 1
				break
			}
		}
	case isVowelEs(w.b[0]):
		for i := 2; i < n; i++ {
			if !isVowelEs(w.b[i]) {
				w.rv = i + 1
				break
			}
		}
	default:
		w.rv = min(3, n)
	}
	w.r1 = regionAfterVCEs(w.b, 0)
	w.r2 = len(w.b)
	if w.r1 < len(w.b) {
		w.r2 = regionAfterVCEs(w.b, w.r1)
	}

	// Step 0: attached pronoun after a gerund or infinitive in RV.
	if p := w.longest(esPronouns); p != "" {
		host := esWord{b: w.b[:w.at(p)], rv: w.rv}
		if h := host.longest(esPronounHosts); h != "" && host.inRV(h) {
			if h != "yendo" || (host.at(h) > 0 && host.b[host.at(h)-1] == 'u') {
				w.cut(p)
			}
		}
	}

	// Step 1: standard suffixes.
	done := false
	if s := w.longest(esStep1); s != "" {
		switch s {
		case "anza", "anzas", "ico", "ica", "icos", "icas", "ismo", "ismos", "able", "ables", "ible", "ibles",
			"ista", "istas", "oso", "osa", "osos", "osas", "amiento", "amientos", "imiento", "imientos":
			if w.inR2(s) {
				w.cut(s)
				done = true
			}
		case "adora", "ador", "acion", "adoras", "adores", "aciones", "ante", "antes", "ancia", "ancias":
			if w.inR2(s) {
				w.cut(s)
				done = true
				if w.hasSuffix("ic") && w.inR2("ic") {
					w.cut("ic")
				}
			}
		case "logia", "logias":
			if w.inR2(s) {
				w.replace(s, "log")
				done = true
			}
		case "ucion", "uciones":
			if w.inR2(s) {
				w.replace(s, "u")
				done = true
			}
		case "encia", "encias":
			if w.inR2(s) {
				w.replace(s, "ente")
				done = true
			}
		case "amente":
			if w.inR1(s) {
				w.cut(s)
				done = true
				switch {
				case w.hasSuffix("iv") && w.inR2("iv"):
					w.cut("iv")
					if w.hasSuffix("at") && w.inR2("at") {
						w.cut("at")
					}
				case w.hasSuffix("os") && w.inR2("os"), w.hasSuffix("ic") && w.inR2("ic"), w.hasSuffix("ad") && w.inR2("ad"):
					w.cut("os") // all three are two letters long
				}
			}
		case "mente":
			if w.inR2(s) {
				w.cut(s)
				done = true
				if t := w.longest(esMente); t != "" && w.inR2(t) {
					w.cut(t)
				}
			}
		case "idad", "idades":
			if w.inR2(s) {
				w.cut(s)
				done = true
				if t := w.longest(esIdad); t != "" && w.inR2(t) {
					w.cut(t)
				}
			}
		case "iva", "ivo", "ivas", "ivos":
			if w.inR2(s) {
				w.cut(s)
				done = true
				if w.hasSuffix("at") && w.inR2("at") {
					w.cut("at")
				}
			}
		}
	}

	if !done {
		// Step 2a: verb suffixes beginning with y, after u.
		if s := w.longest(esStep2a); s != "" && w.inRV(s) && w.at(s) > 0 && w.b[w.at(s)-1] == 'u' {
			w.cut(s)
			done = true
		}
	}
	if !done {
		// Step 2b: other verb suffixes.
		if s := w.longest(esStep2b); s != "" && w.inRV(s) {
			w.cut(s)
			switch s {
			case "en", "es", "eis", "emos":
				if w.hasSuffix("gu") {
					w.cut("u")
				}
			}
		}
	}

	// Step 3: residual suffix.
	if s := w.longest(esStep3); s != "" && w.inRV(s) {
		w.cut(s)
		if s == "e" && w.hasSuffix("gu") && w.inRV("u") {
			w.cut("u")
		}
	}
	return result(word, w.b)
}
