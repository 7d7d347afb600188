package lint

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
)

// instructionRules is the table the instructions kind matches: each rule
// is a chain of word slots, each slot a set of folded words (a trailing
// "*" makes it a prefix) that must come within gap words of the previous
// slot's word. The rules are what tool poisoning writes (Invariant Labs,
// 2025; the MCP specification's security notes) and what honest tool text
// does not: of the real MCP catalogs, the held-out ones of discovery's
// tests and MetaTool, BFCL and API-Bank, only Neon's
// prepare_database_migration, which writes an <instructions> tag for the
// model, matches (TestInstructionsRealCatalogs). Honest text says
// "Always returns JSON", "Use this tool to list files" and "IMPORTANT: the
// path must be absolute"; none of those is a rule.
var instructionRules = []instructionRule{
	{"override", "tells the model to drop its instructions", []slot{
		{words: "ignore disregard forget override bypass"},
		{gap: 4, words: "previous prior above earlier preceding former original other all any"},
		{gap: 3, words: "instruction* direction* prompt* guideline*"},
	}},
	{"override", "tells the model to drop its instructions", []slot{ // Spanish: "ignora las instrucciones anteriores"
		{words: "ignora ignore ignorar ignoren olvida olvide olvidar olviden omite descarta"},
		{gap: 4, words: "instrucciones indicaciones directrices"},
	}},
	{"override", "tells the model to drop its instructions", []slot{ // Polish: "zignoruj poprzednie instrukcje"
		{words: "zignoruj ignoruj zapomnij pomin odrzuc"},
		{gap: 4, words: "instrukcj* polecen* wytyczn*"},
	}},
	{"secrecy", "asks the model to keep something from the user", []slot{
		{words: "do dont never"},
		{gap: 2, words: "tell mention inform reveal disclose notify alert show"},
		{gap: 4, words: "user users human anyone"},
	}},
	{"secrecy", "asks the model to keep something from the user", []slot{
		{words: "without"},
		{gap: 1, words: "telling mentioning informing notifying alerting asking"},
		{gap: 3, words: "user users human"},
	}},
	{"secrecy", "asks the model to keep something from the user", []slot{ // Spanish: "no le digas al usuario"
		{words: "no sin"},
		{gap: 2, words: "digas diga decir decirle decirselo menciones mencione mencionar informes informe informar reveles revele revelar cuentes avises avisar"},
		{gap: 3, words: "usuario* usuaria*"},
	}},
	{"secrecy", "asks the model to keep something from the user", []slot{ // Polish: "nie mów użytkownikowi"
		{words: "nie bez"},
		{gap: 2, words: "mow mowiac informuj informowania wspominaj ujawniaj powiadamiaj zdradzaj pokazuj"},
		{gap: 3, words: "uzytkownik*"},
	}},
	{"precedence", "claims precedence over other tools", []slot{
		{words: "always"},
		{gap: 2, words: "use call invoke prefer choose select run"},
		{gap: 2, words: "this"},
		{gap: 1, words: "tool function"},
	}},
	{"precedence", "claims precedence over other tools", []slot{
		{words: "before instead"},
		{gap: 2, words: "any every all"},
		{gap: 2, words: "tool tools function functions"},
	}},
	{"precedence", "claims precedence over other tools", []slot{
		{words: "use call invoke"},
		{gap: 1, words: "this"},
		{gap: 1, words: "tool function"},
		{gap: 6, words: "for"},
		{gap: 1, words: "any every everything anything"},
	}},
	{"secret", "asks for a secret file", []slot{
		{words: "read cat open include pass send attach upload copy provide forward access get fetch load print output"},
		{gap: 6, words: "id_rsa id_dsa id_ecdsa id_ed25519 .ssh .env .aws .netrc .npmrc .pgpass .kube .gnupg"},
	}},
	{"secret", "asks for a secret file", []slot{
		{words: "read cat open include pass send attach upload copy provide forward access get fetch load print output"},
		{gap: 6, words: "etc"},
		{gap: 1, words: "passwd shadow"},
	}},
	{"secret", "asks for a secret file", []slot{ // an MCP client's server list, with its keys: ~/.cursor/mcp.json
		{words: "read cat open include pass send attach upload copy provide forward access get fetch load print output"},
		{gap: 6, words: "mcp"},
		{gap: 1, words: "json"},
	}},
	{"secret", "asks for secrets", []slot{
		{words: "read include pass send attach upload forward provide leak exfiltrate reveal share copy"},
		{gap: 3, words: "credentials passwords secrets api_keys private_key private_keys cookies"},
		{gap: 4, words: "as to in into via with"},
	}},
	{"secret", "asks to relay data through a parameter", []slot{
		{words: "pass put include send"},
		{gap: 2, words: "its their"},
		{gap: 1, words: "content contents"},
		{gap: 2, words: "as into"},
	}},
}

// instructionTags are the folded names of the tags poisoned text hides
// instructions in ("<IMPORTANT>", "</system>", "<|im_start|>"); "[INST]"
// and "[SYSTEM]" use square brackets.
var instructionTags = map[string]bool{
	"important": true, "system": true, "sys": true, "system_prompt": true, "systemprompt": true,
	"instructions": true, "instruction": true, "inst": true, "secret": true, "hidden": true,
	"admin": true, "override": true, "prompt": true, "im_start": true, "im_end": true,
}

// maxQuote is how many bytes of matched text a finding quotes.
const maxQuote = 60

type instructionRule struct {
	name, reason string
	slots        []slot
}

// slot is one step of a rule: one of words (space-separated, folded; a
// trailing "*" matches a prefix) at most gap words after the previous
// slot's word (gap 1 is the next word).
type slot struct {
	gap   int
	words string
}

// slotIndex is [instructionRules] compiled: each word, exact or prefix,
// maps to the bit set of the slots it fills (bit i for the i-th slot of
// the table, rules in order), so that a word is looked up once for every
// rule.
type slotIndex struct {
	exact    map[string]uint64
	prefixes []string
	prefixOf []uint64
	// firstSlot is the bit of each rule's first slot.
	firstSlot []int
}

var rulesIndex = func() slotIndex {
	x := slotIndex{exact: map[string]uint64{}}
	bit := 0
	for _, r := range instructionRules {
		x.firstSlot = append(x.firstSlot, bit)
		for _, sl := range r.slots {
			for _, w := range strings.Fields(sl.words) {
				if p, ok := strings.CutSuffix(w, "*"); ok {
					x.prefixes = append(x.prefixes, p)
					x.prefixOf = append(x.prefixOf, 1<<bit)
				} else {
					x.exact[w] |= 1 << bit
				}
			}
			bit++
		}
	}
	if bit > 64 {
		panic("lint: instructionRules has more than 64 slots")
	}
	return x
}()

// slots returns the bit set of the slots w fills.
func (x slotIndex) slots(w string) uint64 {
	set := x.exact[w]
	for i, p := range x.prefixes {
		if strings.HasPrefix(w, p) {
			set |= x.prefixOf[i]
		}
	}
	return set
}

// word is one word of a text, folded, with its byte span in the original.
type word struct {
	text       string
	start, end int
}

// confusables maps letters that look like ASCII ones (Cyrillic and Greek,
// lower case, as [analysis.Fold] leaves them) to those, so that "іgnоrе"
// written with Cyrillic і, о and е reads "ignore".
var confusables = map[rune]rune{
	'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't',
	'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd', 'һ': 'h', 'ӏ': 'l', 'ɡ': 'g',
	'α': 'a', 'β': 'b', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x',
}

// invisible reports runes that render as nothing and are dropped before
// matching: format characters (zero-width space and joiners, the soft
// hyphen, the byte-order mark, bidirectional controls) and apostrophes,
// so that "don't" reads "dont" and "ig\u200bnore" reads "ignore".
func invisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || r == '\'' || r == '’' || r == 'ʼ'
}

// foldRune appends r folded (case, accents, compatibility forms,
// confusables) to b.
func foldRune(b []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(b, byte(r))
	}
	for _, f := range analysis.Fold(string(r)) {
		if c, ok := confusables[f]; ok {
			f = c
		}
		b = utf8.AppendRune(b, f)
	}
	return b
}

func isWordByte(c byte) bool {
	return c >= utf8.RuneSelf || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z'
}

// words splits s into folded words: runs of letters, digits and "_"
// (after folding, invisible runes dropped). A word right after a "." that
// does not follow a word character keeps the dot (".env", "~/.ssh").
func words(s string) []word {
	var out []word
	var cur []byte
	start := -1
	flush := func(end int) {
		if start >= 0 && len(cur) > 0 {
			text := string(cur)
			if start > 0 && s[start-1] == '.' && (start < 2 || !isWordByte(s[start-2]) && s[start-2] != '.') {
				text, start = "."+text, start-1
			}
			out = append(out, word{text, start, end})
		}
		cur, start = cur[:0], -1
	}
	for i, r := range s {
		if invisible(r) {
			continue
		}
		n := len(cur)
		f := foldRune(cur, r)
		letter := true
		for _, c := range string(f[n:]) {
			if !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '_' {
				letter = false
			}
		}
		if !letter || len(f) == n {
			flush(i)
			continue
		}
		cur = f
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return out
}

// instructionMatch is where a text addresses the model: the rule's reason
// and the byte span of the match in the text.
type instructionMatch struct {
	reason     string
	start, end int
}

// matchInstructions returns the earliest match in s of a hidden-instruction
// tag or of a rule of [instructionRules], or ok false. Its cost is linear in
// len(s): one pass over the words per rule, and at most 40 bytes read
// after each "<" or "[".
func matchInstructions(s string) (m instructionMatch, ok bool) {
	if t, found := matchTag(s); found {
		m, ok = t, true
	}
	ws := words(s)
	sets := make([]uint64, len(ws))
	for i, w := range ws {
		sets[i] = rulesIndex.slots(w.text)
	}
	for r, rule := range instructionRules {
		base := rulesIndex.firstSlot[r]
		last := make([]int, len(rule.slots))
		first := make([]int, len(rule.slots))
		for k := range last {
			last[k] = -1
		}
		for i, w := range ws {
			if ok && w.start >= m.start {
				break
			}
			for k := len(rule.slots) - 1; k >= 0; k-- {
				if sets[i]&(1<<(base+k)) == 0 {
					continue
				}
				switch {
				case k == 0:
					last[0], first[0] = i, i
				case last[k-1] >= 0 && last[k-1] < i && i-last[k-1] <= rule.slots[k].gap:
					last[k], first[k] = i, first[k-1]
				default:
					continue
				}
				if k == len(rule.slots)-1 {
					if st := ws[first[k]].start; !ok || st < m.start {
						m, ok = instructionMatch{rule.reason, st, w.end}, true
					}
				}
			}
		}
	}
	return m, ok
}

// matchTag finds the first tag of [instructionTags] in s: "<NAME>",
// "</NAME>", "<|NAME|>", "[NAME]" (inst, sys and system only), the name
// folded and its spaces and punctuation but "_" dropped.
func matchTag(s string) (instructionMatch, bool) {
	for i := 0; i < len(s); i++ {
		open := s[i]
		if open != '<' && open != '[' {
			continue
		}
		closer := byte('>')
		if open == '[' {
			closer = ']'
		}
		end := strings.IndexByte(s[i+1:min(len(s), i+41)], closer)
		if end < 0 {
			continue
		}
		inner := s[i+1 : i+1+end]
		var name []byte
		for _, r := range inner {
			if invisible(r) {
				continue
			}
			n := len(name)
			name = foldRune(name, r)
			if f := name[n:]; len(f) == 1 && !isWordByte(f[0]) {
				name = name[:n]
			}
		}
		key := string(name)
		if instructionTags[key] && (open == '<' || key == "inst" || key == "sys" || key == "system") {
			return instructionMatch{"hides instructions in a tag", i, i + 2 + end}, true
		}
	}
	return instructionMatch{}, false
}

// toolText is one field of a tool's text, named as a finding names it.
type toolText struct{ field, text string }

// texts lists every text of t a model or the catalog's reader sees: the
// title, the description, the summary (unless the description holds it),
// not_for, aliases, tags and examples, and every string of the input
// schema (descriptions, titles, enum values, defaults), named by their
// JSON Pointer under "inputSchema".
func texts(t *tools.Tool) []toolText {
	out := []toolText{{"title", t.Title}, {"description", t.Description}}
	if !strings.Contains(t.Description, t.Card.Summary) {
		out = append(out, toolText{"summary", t.Card.Summary})
	}
	out = append(out, toolText{"not_for", t.Card.NotFor})
	for _, list := range []struct {
		name  string
		items []string
	}{{"aliases", t.Card.Aliases}, {"tags", t.Card.Tags}, {"examples", t.Card.Examples}} {
		for i, s := range list.items {
			out = append(out, toolText{list.name + "/" + strconv.Itoa(i), s})
		}
	}
	var schema any
	if len(t.InputSchema) > 0 && json.Unmarshal(t.InputSchema, &schema) == nil {
		out = schemaTexts(out, "inputSchema", schema)
	}
	return out
}

var pointerEscape = strings.NewReplacer("~", "~0", "/", "~1")

func schemaTexts(out []toolText, path string, v any) []toolText {
	switch v := v.(type) {
	case string:
		out = append(out, toolText{path, v})
	case []any:
		for i, x := range v {
			out = schemaTexts(out, path+"/"+strconv.Itoa(i), x)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = schemaTexts(out, path+"/"+pointerEscape.Replace(k), v[k])
		}
	}
	return out
}

// instructions returns one finding per text of t that addresses the model.
func instructions(t *tools.Tool) []Finding {
	var out []Finding
	for _, f := range texts(t) {
		m, ok := matchInstructions(f.text)
		if !ok {
			continue
		}
		out = append(out, Finding{Tool: t.ID, Kind: Instructions,
			Message: fmt.Sprintf("%s %s (%q): text addressed to the model rather than describing the tool, as tool poisoning writes; read what it asks before trusting the server", f.field, m.reason, textcut.Shorten(f.text[m.start:m.end], maxQuote))})
	}
	return out
}
