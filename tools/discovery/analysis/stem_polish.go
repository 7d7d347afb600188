package analysis

// This file implements a light Polish stemmer in the style of the published
// light, rule-based stemmers for Polish: one pass that removes the longest
// matching inflectional ending (noun and adjective case endings, verb
// infinitive, person, past-tense and imperative endings, verbal-noun and
// -ość/-acja derivations) from a folded word, keeping a stem of at least
// three letters. It conflates the forms a user types for one lexeme in a
// request (plik, pliku, pliki, plików, plikami → plik; usunąć, usuń,
// usunięcie → usun; faktura, faktury, fakturę → faktur) and leaves aspect
// pairs (wysłać / wysyłać) and stem alternations (konto / koncie) apart.
//
// Quality, honestly: it is not Stempel (the statistical stemmer Lucene
// ships) nor a morphological analyser such as Morfologik; it has not been
// measured on a Polish gold standard, it over-stems some short words and
// English loanwords ("email" → "ema" when the text is detected as Polish),
// and it under-stems alternations. Discovery relies on the lexicon's
// Polish → English word list for cross-language matching, not on this
// stemmer.

var plSuffixes = newSuffixSet(
	// verbal nouns and derivations
	"owaniami", "owaniach", "owaniem", "owanie", "owania", "owaniu",
	"aniami", "aniach", "aniem", "anie", "ania", "aniu",
	"eniami", "eniach", "eniem", "enie", "enia", "eniu",
	"eciami", "eciach", "eciem", "ecie", "ecia", "eciu",
	"ieciami", "ieciach", "ieciem", "iecie", "iecia", "ieciu",
	"ieniami", "ieniach", "ieniem", "ienie", "ienia", "ieniu",
	"osciami", "osciach", "oscia", "osci", "osc",
	"acjami", "acjach", "acja", "acji", "acje", "acje",
	// adjectives
	"owego", "owemu", "owych", "owymi", "owym", "owej", "owy", "owa", "owe",
	"iego", "iemu", "iej", "ego", "emu", "ych", "ymi", "ym", "ich", "imi", "im", "ej",
	// verbs
	"owac", "owal", "owala", "owalo", "owali", "owaly",
	"ujecie", "ujemy", "ujesz", "ujac", "uje", "uja",
	"ac", "ec", "ic", "yc", "al", "ala", "alo", "ali", "aly", "il", "ila", "ilo", "ili", "ily",
	"esz", "isz", "ysz", "emy", "imy", "ymy", "amy", "ij", "aj", "ujcie", "uj",
	// nouns
	"ami", "ach", "om", "ow", "iem", "em", "ie",
	"a", "e", "i", "y", "u", "o",
)

func (sc *scratch) stemPolish(word string) string {
	if len(word) <= 3 {
		return word
	}
	// The stem keeps at least three letters: the suffix is sought in what
	// follows them.
	if s := plSuffixes.longest([]byte(word[3:])); s != "" {
		return word[:len(word)-len(s)]
	}
	return word
}
