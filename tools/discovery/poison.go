package discovery

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/discovery/lexicon"
)

// Catalog poisoning (security invariant 10: repetition never buys rank).
// A catalog's text is written by whoever runs the server that lists it, and
// a tool that every caller may use can stuff its card with another tool's
// words and name to be shortlisted for that tool's requests. The index
// takes three measures, all at build time, so that a request costs what it
// did:
//
//   - Each field's terms are saturated: a term counts at most fieldTFCap
//     times in a field, while the field's length for BM25F's
//     normalisation stays what was written, so a word written fifty times
//     weighs less than written twice. The dense side embeds the catalog's
//     text with each word at most denseTFCap times.
//   - A field counts toward the catalog's average length, against which
//     BM25F normalises every card, at most twice what it says once each
//     term is capped (a field that is mostly repeats, lint's
//     repeated-text): in a small catalog a card of 250 repeated words
//     raised the average enough to hide its own length and outranked the
//     tool it imitated. An honest field, whose words are mostly not
//     repeats, counts as written.
//   - Across the card, a term's combined BM25F term frequency is capped
//     at toolTFCap, what fieldTFCap mentions in the name earn: spreading a
//     word over the summary, description, aliases and tags buys no more.
//   - An identifier in the card's text that names a tool of another
//     namespace (its ID, bank/transfer_funds, or its name in identifier
//     form, transfer_funds, transfer-funds, transferFunds) is not indexed
//     for the card at all: naming another tool earns that tool's requests
//     nothing. A name of the card's own namespace is how a server steers
//     among its own tools ("prefer read_text_file") and is kept.
//
// Card.Examples (from the operator's overlays, learned from the log) are
// neither saturated nor scrubbed: they are not catalog text, and how often
// users asked in a word is evidence. The plain BM25 baseline
// ([MethodBM25]) is a reference for measurements and is left as it is.
//
// Not covered: another domain's words each written once, as a keyword list
// ("Also handles: payment, pay, transfer, invoice, refund") or as prose.
// They are vocabulary like any other; leaving a list's off-topic items out
// of the index stopped the list but cost a held-out test split a request
// (docs/security.md §5). [OffTopicLists] finds such lists, for lint.
const (
	// fieldTFCap is how many times a term counts in one field of a card.
	fieldTFCap = 2
	// denseTFCap is how many times a word of the catalog's text is
	// embedded; 2 cost API-Bank 0.005 MRR, 3 nothing (docs/benchmarks.md).
	denseTFCap = 3
)

// toolTFCap caps a term's combined BM25F term frequency over a card's
// fields (before BM25's k1 saturation): what fieldTFCap un-normalised
// mentions in the name earn.
var toolTFCap = fieldTFCap * fieldWeights[fieldName].w

// capTerms keeps the first n occurrences of each term of ts, in order, in
// place, and returns the kept prefix. seen is a scratch map (nil: one is
// made), cleared first.
func capTerms(ts []string, n int, seen map[string]int) []string {
	if len(ts) <= n {
		return ts
	}
	if seen == nil {
		seen = make(map[string]int, len(ts))
	}
	clear(seen)
	out := ts[:0]
	for _, t := range ts {
		if seen[t] < n {
			seen[t]++
			out = append(out, t)
		}
	}
	return out
}

// appendCapWords appends to dst the text with each word (a run of letters
// and digits, compared case-insensitively) after its n-th occurrence
// removed, with the separators before it: what the dense side embeds of a
// catalog's text. seen is a scratch map (nil: one is made), cleared first;
// its keys may then alias text.
func appendCapWords(dst []byte, text string, n int, seen map[string]int) []byte {
	if seen == nil {
		seen = map[string]int{}
	}
	clear(seen)
	last := 0 // end of the text kept so far
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		j := i + size
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r) {
				break
			}
			j += size
		}
		w := strings.ToLower(text[i:j])
		seen[w]++
		if seen[w] > n {
			dst = append(dst, text[last:i]...)
			last = j
			// Drop the separators between this word and the next one.
			for last < len(text) {
				r, size := utf8.DecodeRuneInString(text[last:])
				if isWordRune(r) {
					break
				}
				last += size
			}
		}
		i = j
	}
	return append(dst, text[last:]...)
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// A mention is an identifier in a card's text that may name a tool: its
// namespace (empty for a bare name) and its name's words joined by "_"
// (identKey), so that transfer_funds, transfer-funds, transferFunds and
// TransferFunds are one key.
type mention struct {
	ns, key string
}

// identKey is the key of a tool name or namespace: its folded words
// ([analysis.SplitIdentifier]) joined by "_".
func identKey(s string) string {
	var a [64]byte
	return string(analysis.AppendIdentifier(a[:0], s, "_"))
}

func isIdentByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '.' || c == '/' }

// identifierForm reports whether s is written as an identifier of several
// words: a separator (_ - .) between two letters or digits, or a lower-case
// letter followed by an upper-case one. "transfer funds" is two words of
// English; transfer_funds and transferFunds are a name.
func identifierForm(s string) bool {
	for i := 1; i+1 < len(s); i++ {
		if (s[i] == '_' || s[i] == '-' || s[i] == '.') && isAlnum(s[i-1]) && isAlnum(s[i+1]) {
			return true
		}
	}
	for i := 0; i+1 < len(s); i++ {
		if s[i] >= 'a' && s[i] <= 'z' && s[i+1] >= 'A' && s[i+1] <= 'Z' {
			return true
		}
	}
	return false
}

// mentions calls fn for each identifier of text that may name a tool, with
// the byte range of the run of identifier characters it was found in: a
// run ns/name names a tool by its ID (name may be a single word), and each
// part of a run written in identifier form (identifierForm) may be a bare
// name.
func mentions(text string, fn func(start, end int, m mention)) {
	identRuns(text, func(i, j int, run string) {
		if strings.IndexByte(run, '/') >= 0 {
			runMentions(run, i, j, fn)
		} else if run != "" && identifierForm(run) {
			// Most runs are one word: runMentions' one part, whose ends
			// identRuns has already stripped.
			fn(i, j, mention{key: identKey(run)})
		}
	})
}

// identRuns calls fn for each run of identifier characters in text, with
// its byte range and the run without the separators at its ends.
func identRuns(text string, fn func(i, j int, run string)) {
	for i := 0; i < len(text); {
		if !isIdentByte(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isIdentByte(text[j]) {
			j++
		}
		fn(i, j, strings.Trim(text[i:j], "_-./"))
		i = j
	}
}

// runMentions calls fn for the mentions of one run (text[i:j], its ends
// stripped): each ns/name pair, and each part in identifier form.
func runMentions(run string, i, j int, fn func(start, end int, m mention)) {
	parts := strings.Split(run, "/")
	for k, p := range parts {
		p = strings.Trim(p, "_-.")
		if p == "" {
			continue
		}
		if k > 0 {
			if ns := strings.Trim(parts[k-1], "_-."); ns != "" {
				fn(i, j, mention{ns: identKey(ns), key: identKey(p)})
			}
		}
		if identifierForm(p) {
			fn(i, j, mention{key: identKey(p)})
		}
	}
}

// catalogTexts returns the texts of t that come from its catalog and may
// name other tools: the summary, the description, each alias and tag, and
// each parameter's name and text.
func catalogTexts(t *tools.Tool, params []param) []string {
	return appendCatalogTexts(nil, t, params)
}

// appendCatalogTexts is catalogTexts appending to out[:0].
func appendCatalogTexts(out []string, t *tools.Tool, params []param) []string {
	out = append(out[:0], t.Card.Summary, t.Description)
	out = append(out, t.Card.Aliases...)
	out = append(out, t.Card.Tags...)
	for _, p := range params {
		out = append(out, p.name, p.text)
	}
	return out
}

// nameIndex finds a snapshot's tools by the keys of their names and IDs.
// Its tables hold numbers, not a string, slice or pair of strings per
// tool: those were 15 MB of small objects at 100,000 tools, alive through
// the whole build.
type nameIndex struct {
	names map[string]int32   // name key -> its number
	nss   map[string]int32   // namespace key -> its number
	byID  map[[2]int32]int32 // (namespace number, name number) -> tool
	first []int32            // name number -> its first tool
	next  []int32            // tool -> the next tool of its name key, or -1
	name  []int32            // tool -> its name key's number
}

func newNameIndex(snap *tools.Snapshot) *nameIndex {
	n := snap.Len()
	x := &nameIndex{
		names: make(map[string]int32, n), nss: map[string]int32{}, byID: make(map[[2]int32]int32, n),
		next: make([]int32, n), name: make([]int32, n),
	}
	var last []int32            // name number -> its last tool so far
	nsNum := map[string]int32{} // namespace -> its key's number (a snapshot has few)
	for i, t := range snap.Tools() {
		k := identKey(t.Name())
		num, ok := x.names[k]
		if ok {
			x.next[last[num]] = int32(i)
			last[num] = int32(i)
		} else {
			num = int32(len(x.first))
			x.names[k] = num
			x.first = append(x.first, int32(i))
			last = append(last, int32(i))
		}
		x.next[i], x.name[i] = -1, num
		ns := t.Namespace()
		nn, ok := nsNum[ns]
		if !ok {
			nk := identKey(ns)
			if nn, ok = x.nss[nk]; !ok {
				nn = int32(len(x.nss))
				x.nss[nk] = nn
			}
			nsNum[ns] = nn
		}
		x.byID[[2]int32{nn, num}] = int32(i)
	}
	return x
}

// named returns the tools (indices into the snapshot, ascending) of
// another namespace than self's that m names: by ID, or by a bare name
// that neither self nor any tool of its namespace has.
func (x *nameIndex) named(snap *tools.Snapshot, self int, m mention, dst []int) []int {
	num, ok := x.names[m.key]
	if !ok {
		return dst
	}
	ns := snap.Tool(self).Namespace()
	if m.ns != "" {
		if nn, ok := x.nss[m.ns]; ok {
			if j, ok := x.byID[[2]int32{nn, num}]; ok && int(j) != self && snap.Tool(int(j)).Namespace() != ns {
				dst = append(dst, int(j))
			}
		}
		return dst
	}
	if num == x.name[self] {
		return dst
	}
	for j := x.first[num]; j >= 0; j = x.next[j] {
		if snap.Tool(int(j)).Namespace() == ns {
			return dst
		}
	}
	for j := x.first[num]; j >= 0; j = x.next[j] {
		dst = append(dst, int(j))
	}
	return dst
}

// textMentions returns the mentions of texts, sorted, each once.
func textMentions(texts []string) []mention {
	return appendTextMentions(nil, texts)
}

// appendTextMentions is textMentions appending to ms[:0].
func appendTextMentions(ms []mention, texts []string) []mention {
	ms = ms[:0]
	for _, s := range texts {
		mentions(s, func(_, _ int, m mention) { ms = append(ms, m) })
	}
	slices.SortFunc(ms, compareMentions)
	return slices.Compact(ms)
}

func compareMentions(a, b mention) int {
	if c := strings.Compare(a.ns, b.ns); c != 0 {
		return c
	}
	return strings.Compare(a.key, b.key)
}

// resolve returns, for the tool at self with the mentions ms (sorted), the
// other namespaces' tools they name (indices, ascending, each once) and
// the mentions that name one (sorted).
func (x *nameIndex) resolve(snap *tools.Snapshot, self int, ms []mention) ([]int, []mention) {
	var named []int
	var hits []mention
	for _, m := range ms {
		n := len(named)
		named = x.named(snap, self, m, named)
		if len(named) > n {
			hits = append(hits, m)
		}
	}
	slices.Sort(named)
	return slices.Compact(named), hits
}

// scrub returns text with every run of identifier characters that holds
// one of ms blanked out.
func scrub(text string, ms []mention) string {
	if len(ms) == 0 {
		return text
	}
	var b []byte
	mentions(text, func(start, end int, m mention) {
		if !slices.Contains(ms, m) {
			return
		}
		if b == nil {
			b = []byte(text)
		}
		for i := start; i < end; i++ {
			b[i] = ' '
		}
	})
	if b == nil {
		return text
	}
	return string(b)
}

// NamedTools returns, for each tool of snap in order, the IDs of the tools
// of other namespaces that its catalog text names as identifiers (sorted,
// each once; nil when none): its summary, description, aliases, tags or
// parameters hold another tool's ID (bank/transfer_funds) or its name
// written as an identifier (transfer_funds, transfer-funds,
// transferFunds), a name that no tool of its own namespace has. Plain
// words ("transfer funds") name nothing, nor does a single-word name
// without its namespace ("query"). Discovery does not index such an
// identifier for the tool that wrote it (see docs/security.md), and lint
// reports it (lint.NamesOtherTool).
func NamedTools(snap *tools.Snapshot) [][]string {
	x := newNameIndex(snap)
	out := make([][]string, snap.Len())
	for i, t := range snap.Tools() {
		params, _, _ := schemaParams(t.InputSchema)
		named, _ := x.resolve(snap, i, textMentions(catalogTexts(t, params)))
		for _, j := range named {
			out[i] = append(out[i], snap.Tool(j).ID)
		}
		slices.Sort(out[i])
	}
	return out
}

const (
	// listMinItems is how many items a run of short comma-, slash-, pipe-
	// or semicolon-separated items needs to be a keyword list.
	listMinItems = 5
	// listItemWords is the most words an item of a keyword list has.
	listItemWords = 3
)

// keywordLists calls fn with the byte range of each item of each keyword
// list in text: a run of at least listMinItems items separated by ",",
// ";", "/" or "|", each of one to listItemWords words ("and" or "or"
// before the last one aside), without sentence structure between them.
// A sentence end (". ", "!", "?"), a colon, a bracket or a line break
// ends a run, as does a longer piece of text.
func keywordLists(text string, fn func(start, end int)) {
	var run [][2]int
	flush := func() {
		if len(run) >= listMinItems {
			for _, r := range run {
				fn(r[0], r[1])
			}
		}
		run = run[:0]
	}
	start := 0
	for i := 0; i <= len(text); i++ {
		end, sep := i == len(text), false
		if !end {
			switch c := text[i]; c {
			case ',', ';', '|':
				sep = true
			case '/':
				// A slash between words is a path, a URL or "read/write".
				sep = i > 0 && text[i-1] == ' ' || i+1 < len(text) && text[i+1] == ' '
			case ':', '!', '?', '\n', '(', ')', '[', ']', '{', '}':
				end = true
			case '.':
				end = i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n'
			}
		}
		if !end && !sep {
			continue
		}
		if lo, hi, ok := listItem(text, start, i); ok {
			run = append(run, [2]int{lo, hi})
		} else {
			flush()
		}
		if end {
			flush()
		}
		start = i + 1
	}
}

// listItem reports whether text[start:end] is an item of a keyword list,
// with the range of its words (a leading "and", "or" or "&" left out).
func listItem(text string, start, end int) (lo, hi int, ok bool) {
	s := text[start:end]
	words := strings.Fields(s)
	if len(words) > 0 && (words[0] == "and" || words[0] == "or" || words[0] == "&") {
		words = words[1:]
	}
	if len(words) == 0 || len(words) > listItemWords {
		return 0, 0, false
	}
	for _, w := range words {
		if !strings.ContainsFunc(w, unicode.IsLetter) || strings.ContainsFunc(w, notItemRune) {
			return 0, 0, false
		}
	}
	lo = start + strings.Index(s, words[0])
	last := words[len(words)-1]
	hi = start + strings.LastIndex(s, last) + len(last)
	return lo, hi, true
}

// notItemRune reports whether r has no place in a word of a keyword
// list's item: an item is words, not a URL, a path or code.
func notItemRune(r rune) bool {
	return !isWordRune(r) && r != '-' && r != '\''
}

// offTopicItems appends to dst the items of text's keyword lists
// (keywordLists) that share no term with topic() (the card's own terms:
// see cardTopic), analysed in text's language. topic is called only when
// text has a keyword list.
func offTopicItems(a *analysis.Analyzer, text string, topic func() map[string]bool, dst []string) []string {
	var lang analysis.Lang
	var terms []string
	keywordLists(text, func(start, end int) {
		if lang == "" {
			lang = a.DetectLang(text)
		}
		terms = a.Terms(terms[:0], text[start:end], lang)
		on := topic()
		for _, t := range terms {
			if on[t] {
				return
			}
		}
		dst = append(dst, text[start:end])
	})
	return dst
}

// OffTopicLists returns, for each tool of snap in order, the items of
// the keyword lists in its summary and description that share no term
// with what its card says it is about (nil when none). A keyword list is
// a run of at least five items of one to three words (no code, path or
// URL) separated by commas, semicolons, pipes or spaced slashes; what a
// card is about is its name, its summary's (or else its description's)
// first sentence and its parameters' names, with the lexicon's synonyms
// of each. a analyses the text (nil: analysis.New(nil)). A weather tool
// whose description ends "Also handles: payment, pay, transfer, invoice,
// refund" has five. Discovery indexes such words as written (see
// docs/security.md §5); lint reports them (lint.KeywordList).
func OffTopicLists(snap *tools.Snapshot, a *analysis.Analyzer) [][]string {
	if a == nil {
		a = analysis.New(nil)
	}
	lex := lexicon.Default().WithStemmer(a)
	out := make([][]string, snap.Len())
	for i, t := range snap.Tools() {
		var topic map[string]bool
		topicOf := func() map[string]bool {
			if topic == nil {
				params, _, _ := schemaParams(t.InputSchema)
				topic = cardTopic(a, lex, t, params)
			}
			return topic
		}
		out[i] = offTopicItems(a, t.Card.Summary, topicOf, nil)
		if t.Description != t.Card.Summary {
			out[i] = offTopicItems(a, t.Description, topicOf, out[i])
		}
	}
	return out
}

// cardTopic returns the terms of what a card says it is about: its name,
// its summary's (or else its description's) first sentence and its
// parameters' names, with the lexicon's synonyms of each (as discovery
// widens a request: widenTool, widenWordNet).
func cardTopic(a *analysis.Analyzer, lex *lexicon.Lexicon, t *tools.Tool, params []param) map[string]bool {
	first := t.Card.Summary
	if first == "" {
		first = t.Description
	}
	if i := strings.Index(first, ". "); i >= 0 {
		first = first[:i]
	}
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	terms := a.Terms(nil, t.Name(), analysis.English)
	terms = a.Terms(terms, first, "")
	for _, p := range params {
		terms = a.Terms(terms, p.name, analysis.English)
	}
	topic := make(map[string]bool, len(terms))
	var words []string
	for _, s := range terms {
		topic[s] = true
		if lex != nil {
			words = lex.StemSynonyms(words, s, widenTool, widenWordNet)
		}
	}
	for _, s := range a.Terms(nil, strings.Join(words, " "), analysis.English) {
		topic[s] = true
	}
	return topic
}
