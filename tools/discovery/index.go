package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/discovery/ngram"
)

// field is one indexed part of a card. BM25F weighs and length-normalises
// each separately before the term frequencies are combined.
type field uint8

const (
	fieldName field = iota
	fieldNamespace
	fieldSummary
	fieldDescription
	fieldAliases
	fieldTags
	fieldParams
	numFields
)

// fieldParams holds BM25F's per-field weight and length normalisation (b).
// The name and aliases are short and say what the tool is for, so they
// weigh most and are barely length-normalised; a long description is
// normalised fully so that verbose cards do not win by repetition.
var fieldWeights = [numFields]struct{ w, b float64 }{
	fieldName:        {3.5, 0.3},
	fieldNamespace:   {1.0, 0.0},
	fieldSummary:     {1.5, 0.5},
	fieldDescription: {0.7, 0.75},
	fieldAliases:     {2.0, 0.5},
	fieldTags:        {1.5, 0.3},
	fieldParams:      {0.5, 0.75},
}

// bm25K1 is BM25's term-frequency saturation.
var bm25K1 = 1.2

const (
	// notForPenalty scales the negative evidence of a query matching a
	// tool's not_for sentence (see Index).
	notForPenalty = 0.5
)

// posting is one document in a term's list with its precomputed BM25F
// impact, so that scoring a query is a sum of impacts.
type posting struct {
	doc    uint32
	impact float32
}

// doc is what the index keeps per tool. It is derived from the [*tools.Tool]
// and from which of the snapshot's tools its text names (scrubbed), so it
// is reused across snapshots for tools where neither changed.
type doc struct {
	// The analysed terms, as numbers of the Discoverer's termTable: the
	// numLists lists (field), notFor and baseTerms read are cut from terms,
	// list l ending at ends[l]. One slice and narrow numbers: a card
	// of a dozen slice headers and ints was 416 bytes, 40 MiB at 100,000
	// tools.
	terms []uint32
	ends  [numLists]uint32
	lens  [numFields]int32 // each field's length before saturation
	// row and scale are the card's quantised vector (see Index.rows),
	// transient: set by embedAll, moved into the index by quantise.
	row     []int8
	scale   float32
	tokens  int32 // o200k tokens of the schema as a model sees it
	accepts []acceptor
	// mentions are the identifiers of the catalog text that may name a
	// tool (poison.go); scrubbed are those that named another namespace's
	// tool in the snapshot the doc was built for, and were left out of
	// its fields and embedded text. A doc is reused only where the new
	// snapshot resolves its mentions to the same scrubbed set.
	mentions []mention
	scrubbed []mention
}

// The term lists of a doc: one per field (saturated, capTerms), then the
// not_for sentence's and the plain BM25 baseline's (name + description).
const (
	listNotFor = int(numFields) + iota
	listBase
	numLists
)

// list returns the doc's term list l.
func (dc *doc) list(l int) []uint32 {
	var lo uint32
	if l > 0 {
		lo = dc.ends[l-1]
	}
	return dc.terms[lo:dc.ends[l]:dc.ends[l]]
}

// termBytes is the memory of the doc's field terms ([BuildStats.Bytes]).
func (dc *doc) termBytes() int { return 4 * int(dc.ends[numFields-1]) }

// field returns the terms of field f, saturated.
func (dc *doc) field(f field) []uint32 { return dc.list(int(f)) }

// notFor returns the terms of the tool's not_for sentence.
func (dc *doc) notFor() []uint32 { return dc.list(listNotFor) }

// baseTerms returns the terms of the plain BM25 baseline.
func (dc *doc) baseTerms() []uint32 { return dc.list(listBase) }

// Index is an immutable search index over one snapshot's cards. It is
// built by Discoverer (or NewIndex) and is safe for concurrent use.
type Index struct {
	snap *tools.Snapshot
	docs []*doc
	// terms numbers every term of the cards' fields, not_for sentences and
	// baseline text; the three posting lists are indexed by that number
	// (the field terms first, in sorted order, so that postings[:Terms]
	// are never empty).
	terms    map[string]uint32
	postings [][]posting
	negative [][]posting // not_for postings (never positive)
	// base is the plain BM25 baseline's postings over name+description,
	// built on first use by basePostings: only [MethodBM25] reads them.
	base     [][]posting
	baseOnce sync.Once
	dim      int
	// The card vectors, L2-normalised and quantised to int8 with one scale
	// per card, one row per card (rows[i*dim+d]): a query multiplies only
	// its non-zero dimensions, within the 512 bytes of each row it scores.
	rows     []int8
	scales   []float32
	kinds    [numKinds][]acceptorRef
	patterns []*compiledPattern
	// tokens[i] is docs[i].tokens, flat so that summing an authorized
	// catalog's tokens streams through memory; total is their sum.
	tokens []int32
	total  int
	// widen maps an English stem no card uses to the terms its lexicon
	// synonyms analyse to (buildWiden).
	widen map[string][]uint32
	// unnamed maps an English stem that cards use but no tool's name has
	// to the terms its lexicon synonyms analyse to, and whether some
	// tool's summary has it (buildWiden; plan widens such a word).
	unnamed map[string]unnamedWord
	// suffixed maps a stem to the terms cards use that are it with a
	// nominal suffix added, a number plus one per suffix (buildSuffixed,
	// derivedTerm).
	suffixed map[string][len(nominalSuffixes)]uint32
	// cognates finds the terms a Spanish or Polish word spells
	// (cognate.go).
	cognates cognateIndex
	// named is a bit per term: whether some tool's name has it
	// (Index.names). Built with the postings, so that no request pays for
	// it (reading the names of a common word's cards on every request cost
	// up to a scan of the catalog).
	named    []uint64
	lastView atomic.Pointer[viewTokens]
	// keys[i] is the key of tool i (toolKey), by which a card is reused
	// across snapshots and index files; termStrings are the termTable's
	// terms when the index was built (the cards' terms are numbers in it).
	keys        []toolKey
	termStrings []string
	stats       BuildStats
	// cols are the card vectors again, column by column, for catalogs of
	// at most colsLimit cards of the default dimension (setCols): column d
	// is cols[d*colStride:], a value per card. Nil otherwise.
	cols      []int8
	colStride int

	// companions knows which tools need a handle (a token, an entity's
	// id) and which produce it (companions.go); nil when none does.
	companions *companionIndex
	// companionsBuilt is whether companions were worked out (a
	// Discoverer with NoCompanions does not): an index file says so.
	companionsBuilt bool
	// background caps the terms' IDF (background.go); nil: no cap.
	background *backgroundDF
}

// BuildStats reports what building an index cost.
type BuildStats struct {
	// Tools is the number of cards indexed.
	Tools int
	// Reused is how many cards came from the previous index unchanged.
	Reused int
	// Terms is the number of distinct terms.
	Terms int
	// Postings is the number of (term, tool) entries.
	Postings int
	// Duration is how long the build took (by the [Discoverer]'s clock).
	Duration time.Duration
	// Bytes estimates the index's memory, vectors included.
	Bytes int
}

// Snapshot returns the snapshot the index was built from.
func (x *Index) Snapshot() *tools.Snapshot { return x.snap }

// Stats returns the build statistics.
func (x *Index) Stats() BuildStats { return x.stats }

// ToolTokens returns the o200k token count of the i-th tool's schema as a
// model sees it (name, description and input schema).
func (x *Index) ToolTokens(i int) int { return int(x.docs[i].tokens) }

// parametersJSON is the "parameters" member of schemaTextWith for an input
// schema: its keys sorted, compact, HTML-escaped (as [json.Marshal] writes
// a [json.RawMessage]), or nil when that cannot be written.
func parametersJSON(params json.RawMessage) []byte {
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	b, err := json.Marshal(compactJSON(params))
	if err != nil {
		return nil
	}
	return b
}

// schemaTextWith is the tool as a model is shown it (the function
// definition of the OpenAI tools API, which is also what MCP clients
// forward), given its parametersJSON: byte for byte what [json.Marshal]
// writes for the struct {name, description (omitted when empty),
// parameters}.
func schemaTextWith(t *tools.Tool, params []byte) string {
	if params == nil {
		return t.Name() + " " + t.Description + " " + string(t.InputSchema)
	}
	b := appendSchemaHead(make([]byte, 0, len(t.Name())+len(t.Description)+len(params)+48), t)
	b = append(append(append(b, `,"parameters":`...), params...), '}')
	return string(b)
}

// appendSchemaHead appends what schemaTextWith writes before the
// parameters: the name and the description members.
func appendSchemaHead(dst []byte, t *tools.Tool) []byte {
	dst = append(dst, `{"name":`...)
	dst = appendJSONString(dst, t.Name())
	if t.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = appendJSONString(dst, t.Description)
	}
	return dst
}

// schemaInfo is what the index derives from an input schema alone: what
// schemaParams returns, parametersJSON, and the tokens of the text that
// ends every schemaTextWith written with it (see schemaTokens).
type schemaInfo struct {
	params     []param
	accepts    []acceptor
	err        error
	json       []byte
	tailTokens int
}

// paramsKey is where schemaTextWith's last member begins, after the
// quote that opens its key.
const paramsKey = `parameters":`

// schemaTokens is tokens.Count(schemaTextWith(t, si.json)), counting the
// parameters once per schema instead of once per tool. The count is the
// sum of the two halves split before paramsKey: o200k splits a text into
// pieces before it merges bytes, and the key always begins a piece (the
// run of symbols before it, the quote closing the name or the
// description, a comma and a quote, ends where its letters begin), and
// what a piece is depends only on the text from where it starts.
// TestSchemaTokensSplit and FuzzSchemaTokens hold it to the whole count.
// The head is written in *buf (nil: a buffer of its own), which is left
// holding it.
func schemaTokens(t *tools.Tool, si *schemaInfo, buf *[]byte) (int, error) {
	if si.json == nil {
		return tokens.Count(schemaTextWith(t, nil))
	}
	if buf == nil {
		buf = new([]byte)
	}
	*buf = append(appendSchemaHead((*buf)[:0], t), `,"`...)
	// Count keeps nothing of the text, which may then alias the buffer.
	n, err := tokens.Count(unsafe.String(unsafe.SliceData(*buf), len(*buf)))
	return n + si.tailTokens, err
}

// ToolTokens returns the o200k tokens of t's definition as a model is
// shown it (its name, description and parameters), counted as an index
// counts it for [Shortlist.ShortlistTokens]; an error for a schema
// discovery cannot read.
func ToolTokens(t *tools.Tool) (int, error) {
	var c schemaCache
	si := c.get(t.InputSchema)
	if si.err != nil {
		return 0, si.err
	}
	return schemaTokens(t, si, nil)
}

// schemaCache keeps one build's schemaInfo by schema bytes, so that
// tools sharing an input schema (one server's tools often do, and a
// server's tools repeat in every namespace that serves them) are walked
// and encoded once. Safe for concurrent use; the slices it hands out are
// shared and never modified. It holds at most schemaCacheMax schemas and
// starts over when full: a catalog whose schemas all differ gains nothing
// from it, and kept every schema's walk to the end of the build (90 MB
// at 100,000 tools).
type schemaCache struct {
	mu sync.Mutex
	m  map[string]*schemaInfo
}

// schemaCacheMax bounds a schemaCache. It is above the number of distinct
// schemas of the synthetic big catalogs (2,681), whose tools cycle
// through them.
const schemaCacheMax = 8192

func (c *schemaCache) get(raw json.RawMessage) *schemaInfo {
	// The key aliases the tool's schema, which a snapshot never changes.
	key := unsafe.String(unsafe.SliceData(raw), len(raw))
	c.mu.Lock()
	si, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return si
	}
	si = newSchemaInfo(raw)
	if si.json != nil {
		sc := getSchemaScratch()
		sc.buf = append(append(append(sc.buf[:0], paramsKey...), si.json...), '}')
		// Count keeps nothing of the text, which may then alias the
		// buffer. A count fails only when the tables cannot load; then
		// the head's fails too, and schemaTokens reports it.
		si.tailTokens, _ = tokens.Count(unsafe.String(unsafe.SliceData(sc.buf), len(sc.buf)))
		putSchemaScratch(sc)
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= schemaCacheMax {
		c.m = make(map[string]*schemaInfo)
	}
	c.m[key] = si
	c.mu.Unlock()
	return si
}

// schemaScratch is a schema's encoding buffers while the build derives its
// schemaInfo: the encoder's key stack and the text it writes.
type schemaScratch struct {
	enc valueEncoder
	buf []byte
}

var schemaScratches = sync.Pool{New: func() any { return new(schemaScratch) }}

func getSchemaScratch() *schemaScratch { return schemaScratches.Get().(*schemaScratch) }

// putSchemaScratch returns sc to the pool, unless one huge schema grew its
// buffer past what a pool should keep.
func putSchemaScratch(sc *schemaScratch) {
	if cap(sc.buf) <= 1<<20 {
		schemaScratches.Put(sc)
	}
}

// newSchemaInfo is parametersJSON and schemaParams of raw from one decode
// of it: an object schema's parameters JSON is [json.Marshal] of the decoded
// value (what parametersJSON's compact re-encoding comes to), written by a
// valueEncoder, which TestSchemaTextMatchesMarshal and FuzzSchemaInfo hold
// to [json.Marshal].
func newSchemaInfo(raw json.RawMessage) *schemaInfo {
	if v, ok := decodeAny(raw); ok {
		if root, ok := v.(map[string]any); ok {
			si := &schemaInfo{}
			si.params, si.accepts = walkParams(root)
			sc := getSchemaScratch()
			b, ok := sc.enc.append(sc.buf[:0], root)
			if ok {
				si.json = slices.Clone(b)
			}
			sc.buf = b
			putSchemaScratch(sc)
			return si
		}
	}
	si := &schemaInfo{json: parametersJSON(raw)}
	si.params, si.accepts, si.err = schemaParams(raw)
	return si
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var sb strings.Builder
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return raw
	}
	return json.RawMessage(strings.TrimSpace(sb.String()))
}

// embedText returns the text the dense side embeds for a card: what the
// tool is called and what it is for, without the long tail of the
// description. The catalog's part has each word at most denseTFCap times
// (appendCapWords) and no identifier of scrubbed; the overlay's examples
// follow as they are. The text is in the arena's buffer, valid until the
// next call.
func (ar *docArena) embedText(t *tools.Tool, params []string, scrubbed []mention) []byte {
	b := analysis.AppendIdentifier(ar.raw[:0], t.Name(), " ")
	b = append(b, ". "...)
	b = append(b, scrub(t.Card.Summary, scrubbed)...)
	if d := t.Description; d != "" && d != t.Card.Summary {
		if len(d) > 400 {
			d = d[:400]
		}
		b = append(b, ' ')
		b = append(b, scrub(d, scrubbed)...)
	}
	for _, a := range t.Card.Aliases {
		b = append(b, ". "...)
		b = append(b, scrub(a, scrubbed)...)
	}
	if len(t.Card.Tags) > 0 {
		b = append(b, ". "...)
		b = append(b, scrub(strings.Join(t.Card.Tags, " "), scrubbed)...)
	}
	if len(params) > 0 {
		b = append(b, ". "...)
		b = append(b, scrub(strings.Join(params, " "), scrubbed)...)
	}
	ar.raw = b
	ar.text = appendCapWords(ar.text[:0], unsafe.String(unsafe.SliceData(b), len(b)), denseTFCap, ar.seen)
	clear(ar.seen) // its keys may alias ar.raw
	for _, a := range t.Card.Examples {
		ar.text = append(ar.text, ". "...)
		ar.text = append(ar.text, a...)
	}
	return ar.text
}

// sqlImplies is what a tool that takes a SQL statement works on, whether
// or not its card says so ("query: Run a read-only SQL query" answers
// "what tables are in the database"): its parameters' field has these
// words too.
const sqlImplies = "database table"

// takesSQL reports whether one of accepts takes a SQL statement.
func takesSQL(accepts []acceptor) bool {
	for _, a := range accepts {
		if a.kind == idSQL {
			return true
		}
	}
	return false
}

// buildDoc analyses the tool at i of snap, leaving out the identifiers
// that name another namespace's tool (names resolves them).
func (d *Discoverer) buildDoc(snap *tools.Snapshot, i int, names *nameIndex, schemas *schemaCache, ar *docArena) (*doc, []byte, error) {
	t := snap.Tool(i)
	a := d.analyzer
	dc := ar.doc()
	var fields [numFields][]string
	si := schemas.get(t.InputSchema)
	params, accepts, err := si.params, si.accepts, si.err
	if err != nil {
		return nil, nil, err
	}
	ar.texts = appendCatalogTexts(ar.texts, t, params)
	ms := appendTextMentions(ar.found, ar.texts)
	clear(ar.texts) // of the tool's strings
	ar.found = ms
	for k, m := range ms {
		ms[k] = mention{ns: ar.intern(m.ns), key: ar.intern(m.key)}
	}
	dc.mentions = ar.mentions(ms)
	_, dc.scrubbed = names.resolve(snap, i, dc.mentions)
	sc := func(s string) string { return scrub(s, dc.scrubbed) }
	name := t.Name()
	tb := termBuf{a: a, buf: ar.termBuf[:0]}
	tb.add(name, analysis.English)
	fields[fieldName] = tb.cut()
	tb.add(t.Namespace(), analysis.English)
	fields[fieldNamespace] = tb.cut()
	tb.add(sc(t.Card.Summary), "")
	fields[fieldSummary] = tb.cut()
	if t.Description != t.Card.Summary {
		tb.add(sc(t.Description), "")
		fields[fieldDescription] = tb.cut()
	}
	for _, s := range t.Card.Aliases {
		tb.add(sc(s), "")
	}
	fields[fieldAliases] = tb.cut()
	for _, s := range t.Card.Tags {
		tb.add(sc(s), "")
	}
	if t.Card.Group != "" {
		tb.add(t.Card.Group, analysis.English)
	}
	fields[fieldTags] = tb.cut()
	var paramNames []string
	var word [64]byte
	for _, p := range params {
		tb.add(sc(p.name), analysis.English)
		tb.add(sc(p.text), "")
		paramNames = append(paramNames, string(analysis.AppendIdentifier(word[:0], sc(p.name), " ")))
	}
	if takesSQL(accepts) {
		tb.add(sqlImplies, analysis.English)
	}
	fields[fieldParams] = tb.cut()
	for f := range fields {
		dc.lens[f] = int32(len(fields[f]))
		fields[f] = capTerms(fields[f], fieldTFCap, ar.seen)
	}
	for _, s := range t.Card.Examples { // overlay examples count as aliases, unsaturated
		n := len(fields[fieldAliases])
		fields[fieldAliases] = a.Terms(fields[fieldAliases], s, "")
		dc.lens[fieldAliases] += int32(len(fields[fieldAliases]) - n)
	}
	dc.accepts = accepts
	tb.add(t.Card.NotFor, "")
	notFor := tb.cut()
	tb.add(name+" "+t.Description, "")
	if t.Description == "" {
		tb.add(t.Card.Summary, "")
	}
	base := tb.cut()
	defer func() { clear(tb.buf); ar.termBuf = tb.buf[:0] }()
	size := len(notFor) + len(base)
	for _, ts := range fields {
		size += len(ts)
	}
	all := ar.terms(size)
	lists := [numLists][]string{listNotFor: notFor, listBase: base}
	copy(lists[:], fields[:])
	for l, ts := range lists {
		all = d.terms.intern(all, ts)
		dc.ends[l] = uint32(len(all))
	}
	dc.terms = all
	n, err := schemaTokens(t, si, &ar.head)
	if err != nil {
		return nil, nil, err
	}
	dc.tokens = int32(n)
	return dc, ar.embedText(t, paramNames, dc.scrubbed), nil
}

// build makes the index for snap, reusing the per-tool work of prev for
// tools whose [*tools.Tool] is unchanged.
func (d *Discoverer) build(ctx context.Context, snap *tools.Snapshot, prev *Index) (*Index, error) {
	return d.buildWith(ctx, snap, prev, nil, nil, nil, nil, nil)
}

// snapJobs is the work of a build that depends on the snapshot alone,
// each on a goroutine of its own, so that it runs beside the reading of
// an index file and the analysis of the cards: the name index (at a
// restart of 100,000 tools, 0.06 s of the 0.6 s) and the companions
// (0.15 s).
type snapJobs struct {
	done       chan struct{}
	names      *nameIndex
	companions *companionIndex // nil when d finds none
}

// startJobs starts the snapshot's jobs. saved, when not nil, returns the
// companions an index file holds for snap, if it does (it may block
// until the file is read): they are then not worked out again.
func (d *Discoverer) startJobs(snap *tools.Snapshot, saved func() (*companionIndex, bool)) *snapJobs {
	j := &snapJobs{done: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Go(func() { j.names = newNameIndex(snap) })
	if d.companions {
		wg.Go(func() {
			if saved != nil {
				var ok bool
				if j.companions, ok = saved(); ok {
					return
				}
			}
			j.companions = buildCompanions(snap)
		})
	}
	go func() {
		wg.Wait()
		close(j.done)
	}()
	return j
}

// wait returns once every job is done.
func (j *snapJobs) wait() *snapJobs {
	<-j.done
	return j
}

// buildWith is build that may also reuse loaded[i] (a card read from an
// index file, with its vector in row) for the tool at i, keys are the
// snapshot's tool keys when the caller has them, and progress (when not
// nil) hears of the cards analysed and embedded. A card of prev is
// reused for a tool that is the same [*tools.Tool] or has the same key (an
// upstream's list_changed replaces its namespace's tools with new values,
// most of them unchanged), so that updating one namespace analyses only
// the tools that changed; postings and the rest are recomputed from the
// cards, which is what a full rebuild computes. jobs are the snapshot's
// jobs when the caller started them earlier (nil: buildWith starts them).
func (d *Discoverer) buildWith(ctx context.Context, snap *tools.Snapshot, prev *Index, loaded []*doc, loadedRows []int8, keys []toolKey, progress func(done, total int), jobs *snapJobs) (*Index, error) {
	if jobs == nil {
		jobs = d.startJobs(snap, nil)
	}
	defer jobs.wait() // no goroutine outlives the call
	start := d.now()
	n := snap.Len()
	x := &Index{snap: snap, docs: make([]*doc, n), keys: keys}
	old := map[*tools.Tool]int{}
	var prevByKey map[toolKey]int
	if prev != nil {
		for i, t := range prev.snap.Tools() {
			old[t] = i
		}
	}
	if x.keys == nil {
		x.keys = make([]toolKey, n)
		var need []int
		for i, t := range snap.Tools() {
			if j, ok := old[t]; ok {
				x.keys[i] = prev.keys[j]
			} else {
				need = append(need, i)
			}
		}
		if len(need) > 0 {
			fillKeys(snap, x.keys, need)
		}
	}
	if prev != nil && len(old) != n || prev != nil && len(prev.docs) != n {
		prevByKey = make(map[toolKey]int, len(prev.keys))
		for j, k := range prev.keys {
			prevByKey[k] = j
		}
	}
	from := make([]int, n) // the card of prev reused at i, or -1
	var embedIdx []int
	var embedTexts []string // one chunk's
	names := jobs.wait().names
	// A card is reused unless the tools its text names changed.
	reusable := func(i int, dc *doc) bool {
		_, hits := names.resolve(snap, i, dc.mentions)
		return slices.Equal(hits, dc.scrubbed)
	}
	for i, t := range snap.Tools() {
		from[i] = -1
		j, ok := old[t]
		if !ok && prevByKey != nil {
			j, ok = prevByKey[x.keys[i]]
		}
		if ok && reusable(i, prev.docs[j]) {
			x.docs[i], from[i] = prev.docs[j], j
			x.stats.Reused++
			continue
		}
		if loaded != nil && loaded[i] != nil && reusable(i, loaded[i]) {
			x.docs[i] = loaded[i]
			x.stats.Reused++
			continue
		}
		embedIdx = append(embedIdx, i)
	}
	var done atomic.Int64
	total := len(embedIdx)
	if d.embedder != nil {
		total *= 2
	}
	tick := func(k int) {
		if progress != nil {
			progress(int(done.Add(int64(k))), total)
		}
	}
	// The cards are analysed and embedded a chunk at a time, so that the
	// texts to embed are held for one chunk, not for every card: at
	// 100,000 tools they were 35 MiB of small strings, and the build's
	// garbage around them kept 80 MiB of the heap's spans half used.
	w := &buildWork{arenas: make([]docArena, runtime.GOMAXPROCS(0))}
	if len(embedIdx) > 0 {
		// The token counter's tables (4 MiB, loaded at its first use)
		// are loaded before the garbage of analysis begins, not spread
		// among it.
		tokens.Count("")
	}
	if len(embedIdx) == n && d.embedder != nil {
		w.rows = &rowArray{}
	}
	for lo := 0; lo < len(embedIdx); lo += buildChunk {
		idx := embedIdx[lo:min(lo+buildChunk, len(embedIdx))]
		if ng, ok := d.embedder.(*ngram.Embedder); ok && lo > 0 && len(embedIdx) >= dropCacheCards {
			// It holds one chunk's words at most, and after the build
			// the last chunk's: the common words a request shares.
			ng.DropCache()
		}
		if embedTexts == nil {
			embedTexts = make([]string, len(idx))
		}
		embedTexts = embedTexts[:len(idx)]
		if err := d.buildDocs(ctx, snap, names, x.docs, idx, embedTexts, w, tick); err != nil {
			return nil, err
		}
		if _, sparse := d.embedder.(embedderSparse); d.embedder != nil && !sparse {
			if err := d.embedAll(ctx, x.docs, idx, embedTexts, w.rows, tick); err != nil {
				return nil, err
			}
		}
		clear(embedTexts)
	}
	// The cards are done with the name index (11 MiB at 100,000 tools):
	// it goes before the posting lists are built.
	jobs.names = nil
	if d.embedder != nil {
		if w.rows != nil { // every card embedded: their rows are in one array
			loadedRows = w.rows.rows
		}
		if err := x.quantise(prev, from, loadedRows); err != nil {
			return nil, err
		}
		x.setCols()
	}
	x.tokens = make([]int32, n)
	for i, dc := range x.docs {
		x.tokens[i] = dc.tokens
		x.total += int(dc.tokens)
	}
	x.termStrings = d.terms.snapshot()
	x.background = d.background
	x.buildPostings(x.termStrings)
	x.buildCognates()
	x.buildSuffixed()
	d.buildWiden(x)
	x.buildAcceptors()
	x.companions, x.companionsBuilt = jobs.companions, d.companions
	x.stats.Tools = n
	for _, p := range x.postings {
		if len(p) > 0 {
			x.stats.Terms++
		}
		x.stats.Postings += len(p)
	}
	x.stats.Bytes = x.stats.Postings*int(unsafe.Sizeof(posting{})) + len(x.rows) + len(x.cols) + 4*len(x.scales) + len(x.terms)*48 +
		len(x.suffixed)*56
	for _, dc := range x.docs {
		x.stats.Bytes += dc.termBytes() + int(unsafe.Sizeof(*dc))
	}
	x.stats.Duration = d.now().Sub(start)
	d.warm(x)
	return x, nil
}

// warmRequest is the request a build runs against its new index (warm).
const warmRequest = "list the files"

// warm runs warmRequest against the new index x, seen by a principal that
// holds no scope, so that the first request after a build does not pay
// alone for what every request shares: the scratch memory that the
// build's garbage collections emptied the pools of, and code and tables
// that the build pushed out of the processor's caches (on the real MCP
// catalogs, the first request took about twice the next ones' CPU time;
// a build of 10,000 tools takes 0.7 s of CPU, a restart from its file
// 0.05 s, the request about 0.1 ms).
// The request goes through search alone: it is neither observed nor
// logged, and it changes only caches, which change no ranking. It runs
// only with the built-in embedder or none: a caller's embedder may be a
// model behind a network.
func (d *Discoverer) warm(x *Index) {
	if _, builtIn := d.embedder.(*ngram.Embedder); d.embedder != nil && !builtIn {
		return
	}
	view := x.snap.Authorize(tools.Principal{ID: "warm", Tenant: "warm"})
	bufs := topPool.Get().(*[2][]fusedScore)
	if res, err := d.search(context.Background(), x, view, warmRequest, nil, d.k, bufs[0]); err == nil {
		bufs[0] = res.top
	}
	topPool.Put(bufs)
}

func normalize(v []float32) []float32 {
	out := make([]float32, len(v))
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	if s == 0 {
		return out
	}
	inv := float32(1 / math.Sqrt(s))
	for i, f := range v {
		out[i] = f * inv
	}
	return out
}

// buildPostings computes BM25F impacts: per term and tool,
// tf' = Σ_f w_f·tf_f / (1 − b_f + b_f·len_f/avglen_f) and
// impact = idf · tf'·(k1+1) / (k1 + tf'). strs are the termTable's terms
// by number. Every per-term count is a flat array indexed by that number
// and the posting lists share one array each: no map per card.
func (x *Index) buildPostings(strs []string) {
	n := len(x.docs)
	g := len(strs)
	var avg [numFields]float64
	for _, dc := range x.docs {
		for f := range numFields {
			// A stuffed field counts at most twice what it says (poison.go).
			avg[f] += float64(min(dc.lens[f], 2*int32(len(dc.field(field(f))))))
		}
	}
	for f := range numFields {
		avg[f] = max(avg[f]/float64(max(n, 1)), 1)
	}
	// Two passes over the cards: the document frequencies, then each
	// card's tf' of its distinct field terms, computed again, straight
	// into the posting lists (keeping every (term, tf') of a pass, 16
	// bytes each, took 112 MB at 100,000 tools).
	var (
		df    = make([]int32, g)
		acc   = make([]float64, g)
		seen  = make([]bool, g)
		order []uint32
	)
	// distinct sets order to dc's distinct field terms, first seen first,
	// with their tf' in acc (when tf) and seen set; the caller resets both.
	distinct := func(dc *doc, tf bool) {
		order = order[:0]
		for f := range numFields {
			fw := fieldWeights[f]
			norm := 1 - fw.b + fw.b*float64(dc.lens[f])/avg[f]
			for _, t := range dc.field(field(f)) {
				if !seen[t] {
					seen[t] = true
					order = append(order, t)
				}
				if tf {
					acc[t] += fw.w / norm
				}
			}
		}
	}
	total := 0
	for _, dc := range x.docs {
		distinct(dc, false)
		for _, t := range order {
			df[t]++
			seen[t] = false
		}
		total += len(order)
	}
	// Field terms are numbered first, in sorted order; not_for and
	// baseline terms that no field has get the next numbers.
	local := make([]uint32, g) // termTable number -> 1 + the index's number
	var keys, extra []uint32
	for t := range g {
		if df[t] > 0 {
			keys = append(keys, uint32(t))
		}
	}
	for _, dc := range x.docs {
		for _, ts := range [2][]uint32{dc.notFor(), dc.baseTerms()} {
			for _, t := range ts {
				if df[t] == 0 && !seen[t] {
					seen[t] = true
					extra = append(extra, t)
				}
			}
		}
	}
	byString := func(a, b uint32) int { return strings.Compare(strs[a], strs[b]) }
	slices.SortFunc(keys, byString)
	slices.SortFunc(extra, byString)
	x.terms = make(map[string]uint32, len(keys)+len(extra))
	for id, t := range append(keys, extra...) {
		x.terms[strs[t]] = uint32(id)
		local[t] = uint32(id) + 1
		seen[t] = false
	}
	nt := len(keys) + len(extra)
	// The field postings, one shared array cut by document frequency.
	flat := make([]posting, total)
	x.postings = make([][]posting, nt)
	off := 0
	for _, t := range keys {
		id := local[t] - 1
		x.postings[id] = flat[off : off : off+int(df[t])]
		off += int(df[t])
	}
	idfs := x.background.idfs(n, df, strs) // by term: one logarithm a term, not a posting
	x.named = make([]uint64, (nt+63)/64)
	for i, dc := range x.docs {
		for _, t := range dc.field(fieldName) {
			id := local[t] - 1
			x.named[id/64] |= 1 << (id % 64)
		}
		distinct(dc, true)
		for _, t := range order {
			tf := min(acc[t], toolTFCap)
			id := local[t] - 1
			impact := idfs[t] * tf * (bm25K1 + 1) / (bm25K1 + tf)
			x.postings[id] = append(x.postings[id], posting{doc: uint32(i), impact: float32(impact)})
			acc[t], seen[t] = 0, false
		}
	}
	// not_for: plain BM25 over the sentence, kept apart and only subtracted.
	cnt := make([]int32, g)
	notFor := func(i int, dc *doc) []uint32 { return dc.notFor() }
	negDF := x.docFreq(g, notFor, cnt)
	x.negative = x.sparsePostings(nt, local, negDF, notFor,
		func(i int, t uint32, c int32) float64 {
			tf := float64(c)
			return idf(n, int(max(negDF[t], df[t]))) * tf * (bm25K1 + 1) / (bm25K1 + tf)
		}, cnt)
}

// basePostings returns the plain BM25 baseline's posting lists (k1 1.2,
// b 0.75, over name+description), by the index's term numbers. They are
// built on first use: at 100,000 tools they hold 17 MiB that an index
// searched only by the default method never reads.
func (x *Index) basePostings() [][]posting {
	x.baseOnce.Do(x.buildBase)
	return x.base
}

func (x *Index) buildBase() {
	n, g := len(x.docs), len(x.termStrings)
	local := make([]uint32, g) // termTable number -> 1 + the index's number
	for t, s := range x.termStrings {
		if id, ok := x.terms[s]; ok {
			local[t] = id + 1
		}
	}
	cnt := make([]int32, g)
	baseTxt := func(i int, dc *doc) []uint32 { return dc.baseTerms() }
	baseDF := x.docFreq(g, baseTxt, cnt)
	var baseAvg float64
	for _, dc := range x.docs {
		baseAvg += float64(len(dc.baseTerms()))
	}
	baseAvg = max(baseAvg/float64(max(n, 1)), 1)
	x.base = x.sparsePostings(len(x.postings), local, baseDF, baseTxt,
		func(i int, t uint32, c int32) float64 {
			norm := 1 - 0.75 + 0.75*float64(len(x.docs[i].baseTerms()))/baseAvg
			tf := float64(c) / norm
			return idf(n, int(baseDF[t])) * tf * (bm25K1 + 1) / (bm25K1 + tf)
		}, cnt)
}

// docFreq returns, for each of the g terms, the number of cards whose
// terms(i, doc) hold it; seen is an all-zero scratch array of g, left so.
func (x *Index) docFreq(g int, terms func(int, *doc) []uint32, seen []int32) []int32 {
	df := make([]int32, g)
	for i, dc := range x.docs {
		ts := terms(i, dc)
		for _, t := range ts {
			if seen[t] == 0 {
				df[t]++
				seen[t] = 1
			}
		}
		for _, t := range ts {
			seen[t] = 0
		}
	}
	return df
}

// sparsePostings builds posting lists (nt of them, by the index's term
// number local[t]-1) over the terms terms(i, doc) of each card, with a
// card's impact for a term it has c times given by impact. df holds each
// term's number of cards; cnt is an all-zero scratch array of the
// termTable's size, left all zero.
func (x *Index) sparsePostings(nt int, local []uint32, df []int32, terms func(int, *doc) []uint32,
	impact func(i int, t uint32, c int32) float64, cnt []int32) [][]posting {
	total := 0
	for _, d := range df {
		total += int(d)
	}
	lists := make([][]posting, nt)
	flat := make([]posting, total)
	off := 0
	for t, d := range df {
		if d > 0 {
			lists[local[t]-1] = flat[off : off : off+int(d)]
			off += int(d)
		}
	}
	for i, dc := range x.docs {
		ts := terms(i, dc)
		for _, t := range ts {
			cnt[t]++
		}
		for _, t := range ts {
			if c := cnt[t]; c > 0 {
				id := local[t] - 1
				lists[id] = append(lists[id], posting{doc: uint32(i), impact: float32(impact(i, t, c))})
				cnt[t] = 0
			}
		}
	}
	return lists
}

func idf(n, df int) float64 { return bm25IDF(float64(n), float64(df)) }

// buildChunk is how many cards a build analyses and then embeds before
// the next: a multiple of embedAll's batch, so that the batches are the
// same as one pass over every card would make.
const buildChunk = 16 * embedBatch

// dropCacheCards is the fewest cards a build embeds that leave the
// default embedder's feature cache dropped ([ngram.Embedder.DropCache]):
// what a big catalog's cards leave there is their vocabulary, not a
// request's (at 100,000 tools whose schemas all differ, 8 MiB of it, held
// through the rest of the build and after); a small build or an update
// of a few cards keeps what the requests before it put there.
const dropCacheCards = 4 * buildChunk

// buildWork is what the chunks of one build share: the schemas' analysis,
// each worker's arena, and the array of every card's row when all are
// embedded (nil otherwise).
type buildWork struct {
	schemas schemaCache
	arenas  []docArena
	rows    *rowArray
}

// buildDocs analyses the tools at idx (in parallel: the analyzer, the token
// counter and the schema walk are safe for concurrent use). A sparse
// embedder (embedderSparse) embeds each card there and then, from the
// worker's buffer: at 100,000 tools the embedding texts were 85 MB of
// garbage. For any other embedder the text is stored in texts, for
// embedAll's batches.
func (d *Discoverer) buildDocs(ctx context.Context, snap *tools.Snapshot, names *nameIndex, docs []*doc, idx []int, texts []string, w *buildWork, tick func(int)) error {
	sp, sparse := d.embedder.(embedderSparse)
	_, keepsNothing := d.embedder.(*ngram.Embedder) // of the texts it embeds
	workers := min(len(w.arenas), max(1, len(idx)/64))
	return striped(workers, len(idx), func(k int) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("discovery: index: %w", err)
		}
		t := snap.Tool(idx[k])
		ar := &w.arenas[k%workers]
		dc, text, err := d.buildDoc(snap, idx[k], names, &w.schemas, ar)
		if err != nil {
			return fmt.Errorf("discovery: index %s: %w", t.ID, err)
		}
		docs[idx[k]] = dc
		if !sparse {
			if d.embedder != nil { // else nothing embeds the text
				texts[k] = string(text)
			}
			tick(1)
			return nil
		}
		n := sp.Dim()
		if w.rows != nil {
			dc.row = w.rows.slot(idx[k], n, len(docs))
		} else {
			dc.row = make([]int8, n)
		}
		s := unsafe.String(unsafe.SliceData(text), len(text))
		if !keepsNothing {
			s = string(text)
		}
		ar.dims, ar.vals = sp.EmbedNonZero(ar.dims[:0], ar.vals[:0], s)
		if !sparseFits(ar.dims, ar.vals, n) {
			return fmt.Errorf("discovery: embed cards: %w: a sparse vector does not fit %d dimensions", ErrEmbedder, n)
		}
		dc.scale = quantiseSparseTo(dc.row, ar.dims, ar.vals)
		tick(2)
		return nil
	})
}

// docArena hands out the cards of one build worker and their term lists
// from shared chunks, as an index file's reader does: a card a dozen
// small allocations apart from the build's garbage left a built index of
// 100,000 cards 130 MB larger in the heap (spans kept for a few live
// objects each) than the same index read from a file. A chunk lives as
// long as one of its cards does: at most 256 cards or 64 Ki terms.
type docArena struct {
	docs  []doc
	chunk []uint32
	// termBuf holds one card's terms before they are numbered (termBuf).
	termBuf []string
	// strs holds one copy of each mention's key: the same identifiers
	// recur across cards (94,000 strings at 100,000 tools).
	strs map[string]string
	ms   []mention
	// seen is capTerms' and capWords' scratch map.
	seen map[string]int
	// head, raw and text are buildDoc's buffers: a schema head to count
	// (schemaTokens), then the text to embed before and after capWords.
	head, raw, text []byte
	// texts and found are buildDoc's scratch for a card's catalog texts
	// and the mentions found in them.
	texts []string
	found []mention
	dims  []int32
	vals  []float32
}

// mentions returns a copy of ms cut from the arena's chunk: a card's own
// slice and strings (see intern), live among the analysis garbage, kept
// 40 MiB of the heap's spans half used at 100,000 tools.
func (ar *docArena) mentions(ms []mention) []mention {
	if len(ms) == 0 {
		return nil
	}
	if len(ms) > cap(ar.ms)-len(ar.ms) {
		ar.ms = make([]mention, 0, max(len(ms), 1<<12))
	}
	start := len(ar.ms)
	ar.ms = append(ar.ms, ms...)
	return ar.ms[start:len(ar.ms):len(ar.ms)]
}

// intern returns the arena's copy of s, taking s as that copy the first
// time.
func (ar *docArena) intern(s string) string {
	if c, ok := ar.strs[s]; ok {
		return c
	}
	if ar.strs == nil {
		ar.strs = make(map[string]string)
	}
	ar.strs[s] = s
	return s
}

// termBuf lays a card's fields' terms out in one array, field after
// field, so that analysing a card allocates that array once rather than a
// slice per field (at 100,000 tools those slices were 0.4 GB of garbage).
type termBuf struct {
	a   *analysis.Analyzer
	buf []string
	lo  int
}

// add appends the terms of text to the field being laid out.
func (b *termBuf) add(text string, lang analysis.Lang) { b.buf = b.a.Terms(b.buf, text, lang) }

// cut ends the field being laid out and returns its terms, capped so that
// appending to them copies them rather than writing over the next field.
func (b *termBuf) cut() []string {
	f := b.buf[b.lo:len(b.buf):len(b.buf)]
	b.lo = len(b.buf)
	return f
}

func (ar *docArena) doc() *doc {
	if ar.seen == nil {
		ar.seen = make(map[string]int)
	}
	if len(ar.docs) == 0 {
		ar.docs = make([]doc, 256)
	}
	dc := &ar.docs[0]
	ar.docs = ar.docs[1:]
	return dc
}

// terms returns an empty slice with room for n terms.
func (ar *docArena) terms(n int) []uint32 {
	if n > cap(ar.chunk)-len(ar.chunk) {
		ar.chunk = make([]uint32, 0, max(n, 1<<16))
	}
	out := ar.chunk[len(ar.chunk) : len(ar.chunk) : len(ar.chunk)+n]
	ar.chunk = ar.chunk[:len(ar.chunk)+n]
	return out
}

// striped runs do(k) for every k in [0, n) on workers goroutines, worker w
// taking k = w, w+workers, w+2*workers, ...; a worker stops at its first
// error. It returns when all are done, with their errors joined.
func striped(workers, n int, do func(k int) error) error {
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for k := w; k < n; k += workers {
				if err := do(k); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// quantise moves the cards' quantised vectors into the index's rows;
// cards reused from prev are copied from its rows. When every card's row
// is its slot of loadedRows (all came from an index file), that array
// becomes the rows as it is.
func (x *Index) quantise(prev *Index, from []int, loadedRows []int8) error {
	n := len(x.docs)
	for _, dc := range x.docs {
		if dc.row == nil {
			continue
		}
		if x.dim == 0 {
			x.dim = len(dc.row)
		}
		if len(dc.row) != x.dim {
			return fmt.Errorf("discovery: embed cards: %w: vectors of %d and %d dimensions", ErrEmbedder, x.dim, len(dc.row))
		}
	}
	if x.dim == 0 && prev != nil {
		x.dim = prev.dim
	}
	if prev != nil && prev.dim != 0 && prev.dim != x.dim {
		return fmt.Errorf("discovery: embed cards: %w: vectors of %d and %d dimensions", ErrEmbedder, x.dim, prev.dim)
	}
	x.scales = make([]float32, n)
	if x.dim > 0 && len(loadedRows) == n*x.dim && n > 0 {
		adopt := true
		for i, dc := range x.docs {
			adopt = adopt && len(dc.row) == x.dim && unsafe.SliceData(dc.row) == &loadedRows[i*x.dim]
		}
		if adopt {
			x.rows = loadedRows
			for i, dc := range x.docs {
				x.scales[i] = dc.scale
				dc.row = nil
			}
			return nil
		}
	}
	x.rows = make([]int8, n*x.dim)
	for i, dc := range x.docs {
		if dc.row == nil { // reused: copy from prev
			j := from[i]
			copy(x.rows[i*x.dim:(i+1)*x.dim], prev.rows[j*prev.dim:(j+1)*prev.dim])
			x.scales[i] = prev.scales[j]
			continue
		}
		copy(x.rows[i*x.dim:(i+1)*x.dim], dc.row)
		x.scales[i] = dc.scale
		dc.row = nil
	}
	return nil
}

// quantiseVec returns v, L2-normalised, as int8 with one scale (the
// largest magnitude over 127); a zero vector is all zero with scale 0.
func quantiseVec(v []float32) ([]int8, float32) {
	row := make([]int8, len(v))
	return row, quantiseVecTo(row, v)
}

// quantiseVecTo is quantiseVec into row (of len(v), all zero). The
// normalised values are computed twice rather than kept (normalize would
// allocate a copy of every vector of a build).
func quantiseVecTo(row []int8, v []float32) float32 { return quantiseTo(row, nil, v) }

// quantiseTo quantises into row (all zero) the vector whose dimension k
// has the value vals[k], or, when dims is not nil, whose dimension
// dims[k] does (the others are zero).
func quantiseTo(row []int8, dims []int32, vals []float32) float32 {
	var s float64
	for _, f := range vals {
		s += float64(f) * float64(f)
	}
	if s == 0 {
		return 0
	}
	inv := float32(1 / math.Sqrt(s))
	var mx float32
	for _, f := range vals {
		f *= inv
		mx = max(mx, f, -f)
	}
	if mx == 0 {
		return 0
	}
	scale := mx / 127
	for k, f := range vals {
		f *= inv
		d := k
		if dims != nil {
			d = int(dims[k])
		}
		row[d] = int8(math.Round(float64(f / scale)))
	}
	return scale
}

// embedderSparse is an Embedder that can give the non-zero dimensions of
// the vector Embed returns for a text, ascending, and their values:
// [ngram.Embedder] is one. The build embeds cards that way, without a dense
// vector per card to allocate, normalise and scan.
type embedderSparse interface {
	Dim() int
	EmbedNonZero(dims []int32, vals []float32, text string) ([]int32, []float32)
}

// sparseFits reports whether dims and vals are a sparse vector of n
// dimensions: as many of each, every dimension in [0, n).
func sparseFits(dims []int32, vals []float32, n int) bool {
	if len(dims) != len(vals) {
		return false
	}
	for _, d := range dims {
		if d < 0 || int(d) >= n {
			return false
		}
	}
	return true
}

// quantiseSparseTo is quantiseVecTo for the vector whose non-zero
// dimensions are dims, ascending, with values vals: the same row and
// scale, the sums taken in the same order (a zero adds nothing to them).
func quantiseSparseTo(row []int8, dims []int32, vals []float32) float32 {
	clear(row)
	return quantiseTo(row, dims, vals)
}

// embedBatch is how many texts embedAll gives the embedder at a time.
const embedBatch = 256

// rowArray is one array of every card's quantised row, row i at
// rows[i*dim:], which embedAll fills as the cards are embedded and
// quantise takes whole. Safe for concurrent use.
type rowArray struct {
	mu   sync.Mutex
	rows []int8
	dim  int
}

// slot returns card i's row of n values among the n cards of docs: its
// slot of the array, or a row of its own when n is not the first
// vector's length (quantise then reports the mismatch).
func (ra *rowArray) slot(i, n, cards int) []int8 {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if ra.rows == nil {
		ra.dim, ra.rows = n, make([]int8, cards*n)
	}
	if n != ra.dim || n == 0 {
		return make([]int8, n)
	}
	return ra.rows[i*ra.dim : (i+1)*ra.dim : (i+1)*ra.dim]
}

// embedAll embeds texts in batches, in parallel (for an embedder that is
// not embedderSparse: buildDocs embeds with those), and stores each
// quantised vector in docs[idx[k]]: in its slot of rows when rows is not
// nil (every card of docs is embedded), else in a row of its own.
func (d *Discoverer) embedAll(ctx context.Context, docs []*doc, idx []int, texts []string, rows *rowArray, tick func(int)) error {
	nb := (len(texts) + embedBatch - 1) / embedBatch
	workers := min(runtime.GOMAXPROCS(0), nb)
	return striped(workers, nb, func(bi int) error {
		lo, hi := bi*embedBatch, min((bi+1)*embedBatch, len(texts))
		vecs, err := d.embedder.Embed(ctx, texts[lo:hi])
		if err != nil {
			return fmt.Errorf("discovery: embed cards: %w", err)
		}
		if len(vecs) != hi-lo {
			return fmt.Errorf("discovery: embed cards: %w: got %d vectors for %d texts", ErrEmbedder, len(vecs), hi-lo)
		}
		for j, v := range vecs {
			i := idx[lo+j]
			dc := docs[i]
			if rows != nil {
				dc.row = rows.slot(i, len(v), len(docs))
			} else {
				dc.row = make([]int8, len(v))
			}
			dc.scale = quantiseVecTo(dc.row, v)
		}
		tick(hi - lo)
		return nil
	})
}
