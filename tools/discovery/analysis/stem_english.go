package analysis

// This file implements the Snowball English stemmer ("Porter2") as
// published at snowballstem.org/algorithms/english/stemmer.html (the 2006–2019
// definition, with the exceptional forms and the gener/commun/arsen R1
// prefixes). Input is a folded lower-case ASCII word, so the apostrophe
// handling of step 0 only sees words that still end in "s'" or "'s" never;
// Terms joins apostrophes before stemming.

var englishExceptions1 = map[string]string{
	"skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie",
	"idly": "idl", "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli", "singly": "singl",
	"sky": "sky", "news": "news", "howe": "howe", "atlas": "atlas", "cosmos": "cosmos", "bias": "bias", "andes": "andes",
}

var englishExceptions2 = map[string]bool{
	"inning": true, "outing": true, "canning": true, "herring": true, "earring": true,
	"proceed": true, "exceed": true, "succeed": true,
}

func isVowelEn(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

type enWord struct {
	b      []byte
	r1, r2 int
}

func (w *enWord) hasSuffix(s string) bool {
	return len(w.b) >= len(s) && string(w.b[len(w.b)-len(s):]) == s
}

// longest returns the longest suffix of w in set, or "".
func (w *enWord) longest(set *suffixSet) string { return set.longest(w.b) }

var (
	enStep0  = []string{"'s'", "'s", "'"}
	enStep1a = newSuffixSet("sses", "ied", "ies", "us", "ss", "s")
	enStep1b = newSuffixSet("eed", "eedly", "ed", "edly", "ing", "ingly")
	// Steps 2 and 3 replace the longest suffix in R1 by what the table
	// says; the code checks the few whose context is also tested.
	enStep2 = newSuffixRules(map[string]string{
		"tional": "tion", "enci": "ence", "anci": "ance", "abli": "able", "entli": "ent",
		"izer": "ize", "ization": "ize", "ational": "ate", "ation": "ate", "ator": "ate",
		"alism": "al", "aliti": "al", "alli": "al", "fulness": "ful", "ousli": "ous", "ousness": "ous",
		"iveness": "ive", "iviti": "ive", "biliti": "ble", "bli": "ble", "ogi": "og",
		"fulli": "ful", "lessli": "less", "li": "",
	})
	enStep3 = newSuffixRules(map[string]string{
		"tional": "tion", "ational": "ate", "alize": "al", "icate": "ic", "iciti": "ic", "ical": "ic",
		"ful": "", "ness": "", "ative": "",
	})
	enStep4 = newSuffixSet("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ism",
		"ate", "iti", "ous", "ive", "ize", "ion")
)

func (w *enWord) replace(suf, with string) {
	w.b = append(w.b[:len(w.b)-len(suf)], with...)
}

func (w *enWord) inR1(suf string) bool { return len(w.b)-len(suf) >= w.r1 }
func (w *enWord) inR2(suf string) bool { return len(w.b)-len(suf) >= w.r2 }

// containsVowel reports whether b[:end] contains a vowel.
func (w *enWord) containsVowel(end int) bool {
	for i := 0; i < end; i++ {
		if isVowelEn(w.b[i]) {
			return true
		}
	}
	return false
}

// shortSyllableAt reports whether the word ends (at end) in a short syllable.
func (w *enWord) endsShortSyllable(end int) bool {
	b := w.b[:end]
	n := len(b)
	if n == 2 {
		return isVowelEn(b[0]) && !isVowelEn(b[1])
	}
	if n >= 3 {
		c := b[n-1]
		return !isVowelEn(b[n-3]) && isVowelEn(b[n-2]) && !isVowelEn(c) && c != 'w' && c != 'x' && c != 'Y'
	}
	return false
}

func (w *enWord) isShort() bool {
	return w.r1 >= len(w.b) && w.endsShortSyllable(len(w.b))
}

// regionAfterVC returns the index after the first non-vowel that follows a
// vowel at or after start, or len(b).
func regionAfterVC(b []byte, start int) int {
	for i := start + 1; i < len(b); i++ {
		if !isVowelEn(b[i]) && isVowelEn(b[i-1]) {
			return i + 1
		}
	}
	return len(b)
}

func (sc *scratch) stemEnglish(word string) string {
	if len(word) <= 2 {
		return word
	}
	if s, ok := englishExceptions1[word]; ok {
		return s
	}
	w := enWord{b: append(sc.stem[:0], word...)}
	s := sc.stemEnglishWord(word, &w)
	sc.stem = w.b[:0]
	return s
}

func (sc *scratch) stemEnglishWord(word string, w *enWord) string {
	// Mark consonant y as Y.
	if w.b[0] == 'y' {
		w.b[0] = 'Y'
	}
	for i := 1; i < len(w.b); i++ {
		if w.b[i] == 'y' && isVowelEn(w.b[i-1]) {
			w.b[i] = 'Y'
		}
	}
	switch {
	case w.hasPrefix("gener"), w.hasPrefix("arsen"):
		w.r1 = 5
	case w.hasPrefix("commun"):
		w.r1 = 6
	default:
		w.r1 = regionAfterVC(w.b, 0)
	}
	if w.r1 < len(w.b) {
		w.r2 = regionAfterVC(w.b, w.r1)
	} else {
		w.r2 = len(w.b)
	}
	// The regions are fixed before step 0; a region start beyond the word's
	// end after a deletion simply means "empty".

	// Step 0: apostrophe suffixes (only reachable for unfolded callers).
	for _, s := range enStep0 {
		if w.hasSuffix(s) {
			w.replace(s, "")
			break
		}
	}

	// Step 1a.
	switch s := w.longest(enStep1a); s {
	case "sses":
		w.replace(s, "ss")
	case "ied", "ies":
		if len(w.b)-len(s) > 1 {
			w.replace(s, "i")
		} else {
			w.replace(s, "ie")
		}
	case "s":
		// Delete if the part before the s contains a vowel not immediately
		// before the s.
		if w.containsVowel(len(w.b) - 2) {
			w.replace(s, "")
		}
	}
	if englishExceptions2[string(w.b)] {
		return result(word, w.b)
	}

	// Step 1b.
	switch s := w.longest(enStep1b); s {
	case "eed", "eedly":
		if w.inR1(s) {
			w.replace(s, "ee")
		}
	case "ed", "edly", "ing", "ingly":
		if w.containsVowel(len(w.b) - len(s)) {
			w.replace(s, "")
			switch {
			case w.hasSuffix("at"), w.hasSuffix("bl"), w.hasSuffix("iz"):
				w.b = append(w.b, 'e')
			case w.endsDouble():
				w.b = w.b[:len(w.b)-1]
			case w.isShort():
				w.b = append(w.b, 'e')
			}
		}
	}

	// Step 1c.
	if n := len(w.b); n > 2 && (w.b[n-1] == 'y' || w.b[n-1] == 'Y') && !isVowelEn(w.b[n-2]) {
		w.b[n-1] = 'i'
	}

	// Step 2.
	if s := w.longest(enStep2.set); s != "" && w.inR1(s) && w.step2Context(s) {
		w.replace(s, enStep2.to[s])
	}

	// Step 3: "ative" is removed only in R2.
	if s := w.longest(enStep3.set); s != "" && w.inR1(s) && (s != "ative" || w.inR2(s)) {
		w.replace(s, enStep3.to[s])
	}

	// Step 4.
	if s := w.longest(enStep4); s != "" && w.inR2(s) {
		if s == "ion" {
			if n := len(w.b) - 3; n > 0 && (w.b[n-1] == 's' || w.b[n-1] == 't') {
				w.replace(s, "")
			}
		} else {
			w.replace(s, "")
		}
	}

	// Step 5.
	if n := len(w.b); n > 0 {
		switch w.b[n-1] {
		case 'e':
			if w.inR2("e") || (w.inR1("e") && !w.endsShortSyllable(n-1)) {
				w.b = w.b[:n-1]
			}
		case 'l':
			if w.inR2("l") && n > 1 && w.b[n-2] == 'l' {
				w.b = w.b[:n-1]
			}
		}
	}

	for i, c := range w.b {
		if c == 'Y' {
			w.b[i] = 'y'
		}
	}
	return result(word, w.b)
}

// step2Context reports whether the letter before the step 2 suffix s lets
// the step replace it: an l before "ogi", a valid li-ending before "li".
func (w *enWord) step2Context(s string) bool {
	n := len(w.b) - len(s)
	switch s {
	case "ogi":
		return n > 0 && w.b[n-1] == 'l'
	case "li":
		return n > 0 && validLiEnding(w.b[n-1])
	}
	return true
}

func (w *enWord) hasPrefix(p string) bool {
	return len(w.b) >= len(p) && string(w.b[:len(p)]) == p
}

func (w *enWord) endsDouble() bool {
	n := len(w.b)
	if n < 2 || w.b[n-1] != w.b[n-2] {
		return false
	}
	switch w.b[n-1] {
	case 'b', 'd', 'f', 'g', 'm', 'n', 'p', 'r', 't':
		return true
	}
	return false
}

func validLiEnding(c byte) bool {
	switch c {
	case 'c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't':
		return true
	}
	return false
}
