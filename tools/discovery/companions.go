package discovery

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
)

// Companion (producer) tools.
//
// A tool often needs an input that no user says: an authentication token,
// a session, the id of an entity the user names only by what it is
// ("cancel my meeting with John"). Another tool of the catalog produces
// it (a get-token or log-in tool, create_session, list_meetings), and the
// model needs that tool in the same shortlist, though the request shares
// no word with it. An Index records, when it is built, which inputs each
// tool needs of this kind (a handle) and which tools produce each handle;
// Shortlist then adds, for the tools that lead its ranking, a producer of
// each handle the request does not supply, in a place a clear match never
// holds (completeCompanions).
//
// Everything is derived from the catalog's names, descriptions and input
// schemas, with two small lists of English words that name a kind of
// value (handleCredentialWords, handleIDWords) and the verbs that say a
// tool gives its object (produceVerbs); nothing names a tool or a catalog.

// Tuning of the companion step (SetTuning in export_test.go sweeps them).
var (
	// companionTriggers is how many of the ranking's first tools may
	// have their handles produced.
	companionTriggers = 2
	// companionTriggerRatio is the share of the best score a tool after
	// the first needs to count as a leading tool.
	companionTriggerRatio = 0.9
	// companionClearRatio is the share of the best score at and above
	// which a shortlisted tool clearly matched the request: a companion
	// never takes its place.
	companionClearRatio = 0.8
	// companionMax is how many companions one shortlist gets at most.
	companionMax = 1
)

// maxCompanions bounds companionMax (the marks are a fixed array, so that
// a query allocates nothing for them).
const maxCompanions = 2

// maxProducers is how many producers of one handle the index keeps.
const maxProducers = 3

// handleCredentialWords are the last words of parameter names that hold
// a credential the caller obtains from a tool and never types.
var handleCredentialWords = []string{"token", "session", "cookie", "jwt"}

// handleIDWords are the last words of parameter names that hold the id
// of an entity the preceding words name (meeting_id, calendarEventId).
var handleIDWords = []string{"id", "ids", "uuid", "guid", "identifier"}

// produceVerbs are the stems of verbs that, first in a tool's name (or
// before the handle in its description), say that it gives its object.
// The reading ones come first: an entity's id comes from a tool that
// finds an existing entity (a request to change or delete one names it
// by what it is), a credential also from one that creates it.
var produceVerbs = []string{
	"get", "list", "search", "find", "queri", "fetch", "retriev", "lookup", "look", "read", "show",
	"return", "obtain", "issu", "generat", "creat", "add", "new", "open", "start", "login", "log", "regist", "request", "make", "book",
}

// readingVerbs is how many of produceVerbs read rather than create.
const readingVerbs = 11

// handle is an input a tool needs that the request is not expected to
// carry: a credential (word set) or the id of an entity (entity set), of
// one namespace (an id or a token means something only to the server
// that issued it).
type handle struct {
	ns     string
	word   string // a credential's stem ("token", "session")
	entity string // the stem of the entity an id refers to ("meet")
	// qual is the stem before the credential word or the entity's word
	// ("access" of access_token, "calendar" of calendar_event_id): a
	// producer must name it too.
	qual string
}

// object is the stem a producer's name must end with.
func (h handle) object() string { return h.word + h.entity }

// need is a handle one tool needs, with the tools that produce it for
// that tool, best first.
type need struct {
	h         handle
	producers []uint32
}

// companionIndex is what an Index knows of handles: per tool that needs
// some, which, and who produces them.
type companionIndex struct {
	needs map[uint32][]need
}

// companionMarks records the companions added to one ranking: at[i] is
// the position in the ranking of a companion of the tool of[i].
type companionMarks struct {
	n  int
	at [maxCompanions]int
	of [maxCompanions]uint32
}

// companionOf returns the tool whose handle the tool at position i
// produces, when that tool is a companion.
func (m *companionMarks) companionOf(i int) (uint32, bool) {
	for j := range m.n {
		if m.at[j] == i {
			return m.of[j], true
		}
	}
	return 0, false
}

// paramNeed is a handle read from one parameter, with the stems of the
// parameter's name and description.
type paramNeed struct {
	h    handle
	text []string
}

// buildCompanions derives the handles of snap's tools and their
// producers. It returns nil when no tool needs a handle that another
// tool produces, so that such catalogs pay nothing at query time.
func buildCompanions(snap *tools.Snapshot) *companionIndex {
	ts := snap.Tools()
	raw := map[uint32][]paramNeed{}
	// The wanted handles by namespace and object, and each namespace's
	// credential objects (the only ones a description can produce).
	type nsObject struct{ ns, object string }
	wanted := map[nsObject][]handle{}
	credentials := map[string][]string{}
	// A schema's handles, but for their namespace, by schema: tools
	// repeat their servers' schemas, whose parse was 50 MB of garbage
	// at 100,000 tools.
	bySchema := map[string][]paramNeed{}
	for i, t := range ts {
		if !mayNeedHandle(t.InputSchema) {
			continue
		}
		ps, ok := bySchema[string(t.InputSchema)]
		if !ok {
			ps = schemaHandles("", t.InputSchema)
			bySchema[string(t.InputSchema)] = ps
		}
		if len(ps) == 0 {
			continue
		}
		ps = slices.Clone(ps)
		for k := range ps {
			ps[k].h.ns = t.Namespace()
		}
		raw[uint32(i)] = ps
		for _, p := range ps {
			key := nsObject{p.h.ns, p.h.object()}
			if hs := wanted[key]; !slices.Contains(hs, p.h) {
				wanted[key] = append(hs, p.h)
			}
			if p.h.word != "" && !slices.Contains(credentials[p.h.ns], p.h.word) {
				credentials[p.h.ns] = append(credentials[p.h.ns], p.h.word)
			}
		}
	}
	if len(raw) == 0 {
		return nil
	}
	wantsNS := map[string]bool{}
	for key, hs := range wanted {
		wantsNS[key.ns] = true
		slices.SortFunc(hs, func(a, b handle) int { return strings.Compare(a.word+" "+a.qual, b.word+" "+b.qual) })
	}
	for _, ws := range credentials {
		slices.Sort(ws)
	}
	type cand struct {
		doc  uint32
		rank int
		text []string // its name's and description's stems
	}
	found := map[handle][]cand{}
	needsOf := func(i uint32, h handle) bool {
		return slices.ContainsFunc(raw[i], func(p paramNeed) bool { return p.h == h })
	}
	var nameBuf []byte
	for i, t := range ts {
		ns := t.Namespace()
		if !wantsNS[ns] {
			continue
		}
		var obj string
		obj, nameBuf = toolNameObject(nameBuf, t.Name())
		var words, stems, desc, text []string
		consider := func(o string, named bool) {
			hs := wanted[nsObject{ns, o}]
			if len(hs) == 0 {
				return
			}
			if stems == nil {
				words = functionWords(t.Name())
				stems = stemAll(slices.Clone(words))
				desc = stemAll(analysis.SplitIdentifier(t.Description))
				text = append(slices.Clone(stems), desc...)
			}
			verb := -1
			if named {
				verb = slices.Index(produceVerbs, stems[0])
			}
			said := !named && descriptionProduces(desc, o)
			for _, h := range hs {
				rank := 0
				switch {
				case named && verb >= 0 && verb < readingVerbs:
				case named && verb >= 0 && h.word != "":
					rank = 1 // creates a credential (create_session, login)
				case named && h.word != "" && len(stems) > 1:
					rank = 2 // a credential's tool ("user_token")
				case said && h.word != "":
					rank = 3 // "returns an access token"
				default:
					continue // an entity's tool that neither reads nor creates it
				}
				if needsOf(uint32(i), h) {
					continue // a tool never produces what it needs
				}
				if h.qual != "" && !slices.Contains(text, h.qual) {
					continue
				}
				found[h] = append(found[h], cand{uint32(i), rank, text})
			}
		}
		if obj != "" {
			consider(obj, true)
		}
		for _, w := range credentials[ns] {
			if w != obj && containsFold(t.Description, w) {
				consider(w, false)
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	for _, cs := range found {
		slices.SortStableFunc(cs, func(a, b cand) int { return a.rank - b.rank }) // ties: catalog order
	}
	c := &companionIndex{needs: map[uint32][]need{}}
	for i, ps := range raw {
		for _, p := range ps {
			n := need{h: p.h}
			for _, f := range found[p.h] {
				if p.h.word == "" || agrees(p.text, f.text, p.h.word) {
					n.producers = append(n.producers, f.doc)
					if len(n.producers) == maxProducers {
						break
					}
				}
			}
			if len(n.producers) > 0 {
				c.needs[i] = append(c.needs[i], n)
			}
		}
	}
	if len(c.needs) == 0 {
		return nil
	}
	return c
}

// agrees reports whether a credential's parameter text and a producer's
// text share a stem besides the credential's word: a token "of the user"
// comes from a tool about users, not from any tool that lists tokens.
func agrees(param, producer []string, word string) bool {
	for _, s := range param {
		if s != word && slices.Contains(producer, s) {
			return true
		}
	}
	return false
}

// mayNeedHandle is a cheap test on a raw input schema, one pass over
// its bytes: false when no member name ends in a handle word, so that
// most schemas are not parsed.
func mayNeedHandle(s json.RawMessage) bool {
	for i := 0; ; {
		j := bytes.IndexByte(s[i:], '"')
		if j < 0 {
			return false
		}
		end := i + j // a quote: the end of a member name when a colon follows
		i = end + 1
		k := i
		for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r') {
			k++
		}
		if k == len(s) || s[k] != ':' {
			continue
		}
		for _, w := range handleCredentialWords {
			if hasSuffixFold(s[:end], w) {
				return true
			}
		}
		for _, w := range handleIDWords {
			if hasSuffixFold(s[:end], w) {
				return true
			}
		}
	}
}

// hasSuffixFold reports whether s ends with the lower-case ASCII word w,
// ignoring ASCII case.
func hasSuffixFold(s []byte, w string) bool {
	if len(s) < len(w) {
		return false
	}
	s = s[len(s)-len(w):]
	for i := range len(w) {
		if lower(s[i]) != w[i] {
			return false
		}
	}
	return true
}

// schemaHandles returns the handles among the top-level properties an
// input schema requires: those listed in "required", or every property
// when the schema has no "required" at all (catalogs converted from API
// descriptions often leave it out though the API needs them).
func schemaHandles(ns string, schema json.RawMessage) []paramNeed {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   json.RawMessage            `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	if len(s.Required) > 0 {
		var req []string
		if json.Unmarshal(s.Required, &req) != nil {
			return nil
		}
		for _, n := range req {
			if _, ok := s.Properties[n]; ok {
				names = append(names, n)
			}
		}
	} else {
		for n := range s.Properties {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []paramNeed
	for _, n := range names {
		h, ok := paramHandle(n)
		if !ok {
			continue
		}
		h.ns = ns
		if slices.ContainsFunc(out, func(p paramNeed) bool { return p.h == h }) {
			continue
		}
		var p struct {
			Description string `json:"description"`
		}
		_ = json.Unmarshal(s.Properties[n], &p)
		words := analysis.SplitIdentifier(n + " " + p.Description)
		words = slices.DeleteFunc(words, func(w string) bool { return analysis.IsStopWord(analysis.English, w) })
		out = append(out, paramNeed{h, stemAll(words)})
	}
	return out
}

// paramHandle reads a parameter's name as a handle: a credential word
// last (token, access_token, sessionToken), or an id word after the
// entity's words (meeting_id, calendarEventId). A bare "id" names no
// entity and is no handle.
func paramHandle(name string) (handle, bool) {
	words := analysis.SplitIdentifier(name)
	if len(words) == 0 || len(words) > 4 {
		return handle{}, false
	}
	last := words[len(words)-1]
	rest := words[:len(words)-1]
	var h handle
	switch {
	case slices.Contains(handleCredentialWords, last):
		h.word = analysis.Stem(analysis.English, last)
	case slices.Contains(handleIDWords, last) && len(rest) > 0:
		h.entity = analysis.Stem(analysis.English, rest[len(rest)-1])
		rest = rest[:len(rest)-1]
	default:
		return handle{}, false
	}
	for i := len(rest) - 1; i >= 0; i-- { // the nearest word that is not a stop word qualifies
		if !analysis.IsStopWord(analysis.English, rest[i]) {
			h.qual = analysis.Stem(analysis.English, rest[i])
			break
		}
	}
	return h, true
}

// functionWords returns the folded words of a tool's name; of a dotted
// module.function name, the function's, which say what it does.
func functionWords(name string) []string {
	if dot := strings.LastIndexByte(name, '.'); dot >= 0 {
		name = name[dot+1:]
	}
	return analysis.SplitIdentifier(name)
}

// nameObject is the object of a tool's name (its folded words), stemmed:
// the last word after those that say how it is given ("list", an id
// word), so that list_events, get_province_id and QueryMeeting name
// events, provinces and meetings.
func nameObject(words []string) string {
	for i := len(words) - 1; i > 0; i-- {
		if w := words[i]; w != "list" && !slices.Contains(handleIDWords, w) {
			return analysis.Stem(analysis.English, w)
		}
	}
	return ""
}

// toolNameObject is nameObject(functionWords(name)), the words written
// into buf (returned for reuse) instead of a slice of new strings: at
// 100,000 tools those were 13 MB of garbage at the very end of a build.
func toolNameObject(buf []byte, name string) (string, []byte) {
	if dot := strings.LastIndexByte(name, '.'); dot >= 0 {
		name = name[dot+1:]
	}
	buf = analysis.AppendIdentifier(buf[:0], name, " ")
	for end := len(buf); ; {
		start := bytes.LastIndexByte(buf[:end], ' ') + 1
		if start == 0 { // the first word is never the object
			return "", buf
		}
		if w := buf[start:end]; string(w) != "list" && !isHandleIDWord(w) {
			return analysis.Stem(analysis.English, string(w)), buf
		}
		end = start - 1
	}
}

func isHandleIDWord(w []byte) bool {
	for _, h := range handleIDWords {
		if string(w) == h {
			return true
		}
	}
	return false
}

// descriptionProduces reports whether a description (its stems) says
// that the tool gives o: a produce verb at most three words before it
// ("returns an access token").
func descriptionProduces(desc []string, o string) bool {
	for i, w := range desc {
		if w != o {
			continue
		}
		for j := max(0, i-3); j < i; j++ {
			if slices.Contains(produceVerbs, desc[j]) {
				return true
			}
		}
	}
	return false
}

func stemAll(words []string) []string {
	for i, w := range words {
		words[i] = analysis.Stem(analysis.English, w)
	}
	return words
}

// containsFold reports whether s contains the lower-case ASCII word w,
// ignoring ASCII case, without allocating.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		j := 0
		for ; j < len(w); j++ {
			if lower(s[i+j]) != w[j] {
				break
			}
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// completeCompanions adds to top (a ranking, best first, of which the
// shortlist shows the first k) a producer of each handle that a leading
// tool needs and the request does not supply, and returns the ranking
// and where the companions went. A producer must be authorized by b (the
// view's bits) and not already shortlisted; it takes the place of the
// last tool that did not clearly match (score under companionClearRatio
// of the best), or an empty place when fewer than k tools ranked, and
// never displaces a leading tool. Companions follow every tool the
// request ranked. query is read only when a handle could be added, and
// nothing is allocated.
func (c *companionIndex) completeCompanions(b []uint64, query string, top []fusedScore, k int) ([]fusedScore, companionMarks) {
	var m companionMarks
	if c == nil || len(top) == 0 || k <= 0 {
		return top, m
	}
	limit := min(companionMax, maxCompanions)
	shown := min(k, len(top))
	req := requestWords{query: query}
	best := top[0].score
	lead := 0 // the leading tools: never displaced
	for i := 0; i < min(shown, companionTriggers); i++ {
		if i > 0 && top[i].score < companionTriggerRatio*best {
			break
		}
		lead = i + 1
	}
	for i := 0; i < lead && m.n < limit; i++ {
		for j := range c.needs[top[i].doc] {
			n := &c.needs[top[i].doc][j]
			if m.n == limit {
				break
			}
			p, ok := n.producer(b, top[:shown])
			if !ok {
				continue
			}
			if req.supplies(n.h) {
				continue
			}
			// The slot: an empty place, else the last tool the request
			// ranked that is neither leading nor a clear match.
			slot := -1
			switch {
			case shown < k:
				top = append(top[:shown], fusedScore{doc: p, score: top[shown-1].score})
				slot = shown
				shown++
			default:
				free := shown - 1 - m.n // companions fill the tail
				if free >= lead && top[free].score < companionClearRatio*best {
					slot = free
					top[free] = fusedScore{doc: p, score: top[free].score}
				}
			}
			if slot < 0 {
				return top, m
			}
			m.at[m.n], m.of[m.n] = slot, top[i].doc
			m.n++
		}
	}
	return top, m
}

// producer returns the first producer of n that b authorizes, unless one
// is already among shown (then the need is met).
func (n *need) producer(b []uint64, shown []fusedScore) (uint32, bool) {
	ps := n.producers
	for _, f := range shown {
		if slices.Contains(ps, f.doc) {
			return 0, false
		}
	}
	for _, p := range ps {
		if allowed(b, p) {
			return p, true
		}
	}
	return 0, false
}

// requestWords is a request, for telling whether it supplies a handle
// itself; what it says of ids is read once, on demand. Nothing is
// allocated: the request is scanned as bytes.
type requestWords struct {
	query string
	ids   int8 // 0 not read yet, 1 it carries an id, -1 it does not
}

// idLike reports whether a folded token looks like an id: letters and
// digits mixed ("rl50", "6e123"), but not a number with a short unit
// ("16th", "2pm", "5km"), or a number of three digits or more that is
// not a year ("#4521", "PROJ-123", "order 1234", not "2023").
func idLike(t string) bool {
	digits, letters, lead := 0, 0, 0 // lead: the digits before the first letter
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case '0' <= c && c <= '9':
			digits++
		case 'a' <= c && c <= 'z':
			if letters == 0 {
				lead = digits
			}
			letters++
		}
	}
	unit := letters <= 2 && lead == digits && lead > 0 // 16th, 2pm
	year := len(t) == 4 && (t[:2] == "19" || t[:2] == "20")
	return digits > 0 && letters > 0 && !unit || letters == 0 && digits >= 3 && !year
}

// supplies reports whether the request carries h: it names the
// credential ("my token is …", any case), or carries an id for an entity:
// a word of ASCII letters and digits that is an id word or looks like an
// id (idLike).
func (r *requestWords) supplies(h handle) bool {
	if h.word != "" {
		return containsFold(r.query, h.word)
	}
	if r.ids == 0 {
		r.ids = -1
		q := r.query
		var low [16]byte // the word, lower-cased (longer words are no ids)
		for i := 0; i < len(q); {
			j := i
			for j < len(q) && isAlnum(q[j]) {
				j++
			}
			if n := j - i; n > 0 && n <= len(low) {
				w := low[:n]
				for k := range n {
					w[k] = lower(q[i+k])
				}
				if slices.Contains(handleIDWords, string(w)) || idLike(string(w)) {
					r.ids = 1
					break
				}
			}
			i = j + 1
		}
	}
	return r.ids > 0
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
