package analysis

import "strings"

// The stop lists are short and standard (function words: articles,
// pronouns, auxiliaries, conjunctions, common prepositions) plus the
// politeness fillers of requests ("please", "por favor", "proszę"). They are
// stored folded, because Terms checks folded tokens.
//
// Words that change which tool a request needs are deliberately NOT stop
// words, though general-purpose lists include them:
//   - negation and absence: not, no, nor, without / no, sin / nie, bez
//     ("list files not archived", "send without attachment");
//   - quantity and selection: all, each, every, more, most, only, first,
//     last / todo(s), cada / wszystkie, każdy ("list all", "delete every").
//     "any" is a stop word: it opens questions ("are there any", "do you
//     have any") far more than it selects, and no tool is told apart by it;
//   - direction and state particles of phrasal verbs: up, down, on, off, out,
//     over, in ("look up", "turn off", "sign out", "check in");
//   - order and time: before, after, again / antes, después / przed, po;
//   - "new", which is never on standard lists but is kept here on purpose:
//     it is the main cue for create-style tools.
const (
	stopEnglish = `a an the and or but if then else than so as of at by for with about against between into
through during to from i me my myself we our ours ourselves you your yours yourself yourselves he him
his himself she her hers herself it its itself they them their theirs themselves what which who whom
whose this that these those am is are was were be been being have has had having do does did doing
would should could can will shall may might must ought im ive id youre theyre thats lets please
here there where when why how whats wheres hows whos such own same too very just also any`

	stopSpanish = `de la que el en y a los del se las por un para con una su al lo como mas pero sus le ya o
u e este esta esto estos estas ese esa eso esos esas aquel aquella porque entre cuando muy sobre tambien
me hasta hay donde quien quienes desde nos les ni ellos ellas yo tu te ti mi mis tus nosotros nosotras
vosotros vosotras os mio mia mios mias tuyo tuya suyo suya nuestro nuestra nuestros nuestras es son fue
era ser sea estar estoy esta estan he ha han haber favor puedes podrias puede quiero quisiera necesito
cual cuales que como donde`

	stopPolish = `a aby ale albo bo by byc czy dla do go i ich ja jak jaki jakie jest jego jej jestem
juz ktora ktore ktory ktorych lub ma mam mi mie mnie moj moja moje moich mu my na nam nas nasz nasza
nasze o od oraz ona oni ono pan pani prosze przez sa se sie ta tak tam te tego tej ten to tu ty twoj
twoja twoje w we wy z za ze zeby mozesz chce chcialbym chcialabym potrzebuje`
)

var stopSets = [3]map[string]struct{}{
	toSet(stopEnglish), toSet(stopSpanish), toSet(stopPolish),
}

func toSet(words string) map[string]struct{} {
	f := strings.Fields(words)
	m := make(map[string]struct{}, len(f))
	for _, w := range f {
		m[w] = struct{}{}
	}
	return m
}

func isStop(lang Lang, folded string) bool {
	i := langIndex(lang)
	if i < 0 {
		i = 0
	}
	_, ok := stopSets[i][folded]
	return ok
}

// IsStopWord reports whether the folded word is a stop word of lang
// (English for an unsupported or empty lang).
func IsStopWord(lang Lang, folded string) bool { return isStop(lang, folded) }

// StopWords returns the stop words of lang, folded, in no particular order.
// The caller owns the returned slice.
func StopWords(lang Lang) []string {
	i := langIndex(lang)
	if i < 0 {
		i = 0
	}
	out := make([]string, 0, len(stopSets[i]))
	for w := range stopSets[i] {
		out = append(out, w)
	}
	return out
}
