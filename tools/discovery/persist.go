package discovery

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/toolgate/toolgate/internal/atomicfile"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
	"github.com/toolgate/toolgate/tools/internal/buildstamp"
)

// An index file keeps the expensive part of an index, each card's
// analysis (terms, token count, identifier acceptors, quantised vector),
// keyed by a SHA-256 of everything of the tool that analysis reads, so
// that a restart reads it instead of analysing every card again. What is
// cheap and depends on the whole catalog (posting lists with their BM25F
// weights, lexicon widening, identifier patterns) is computed again from
// it, by the same code as a build: an index from a file ranks exactly as
// one built from the catalog.
//
// Layout, little-endian: the magic "TGDSCIDX", the format version
// (uint32), the fingerprint (a string: toolgate's version and a probe of
// the analyzer and embedder), the term strings, the vector dimension,
// the cards, and a CRC-32C of all that. A string or list is a uint32
// length and its elements. A card: its key (32 bytes), its token count,
// seven field lengths, seven field term lists, the not_for and baseline
// term lists, its acceptors (kind, strength, pattern), its mentions and
// scrubbed mentions (namespace and name keys), its vector scale (float32
// bits) and row (dim bytes). After the cards, the companions
// (writeCompanions): they depend on the whole catalog, and are read only
// when the file holds exactly the snapshot's tools in its order.

const (
	indexMagic   = "TGDSCIDX"
	indexVersion = 7 // 4: acceptors of kind phone; 5: a SQL tool's implied words (sqlImplies); 6: of kind channel; 7: of kind range
	// MaxIndexFileBytes bounds the index file a Discoverer reads (1 GiB:
	// about nine times what 100,000 tools need).
	MaxIndexFileBytes = 1 << 30
	maxIndexString    = 64 << 10
	maxIndexDim       = 1 << 16
)

// ErrIndexFile is wrapped by the error that says why an index file was
// not used as it is ([IndexFileReport.Warning]): it is corrupt, truncated,
// from another toolgate version or configuration, or stale.
var ErrIndexFile = errors.New("discovery: index file not used")

// IndexFileReport says what IndexFile did with its file.
type IndexFileReport struct {
	// Reused is the number of cards whose analysis came from the file;
	// [IndexFileReport.Analysed] those analysed again (new or changed tools, or all when the
	// file could not be used).
	Reused, Analysed int
	// Warning, when not nil, wraps [ErrIndexFile] and says why the file was
	// not used as it is: missing, corrupt, truncated, of another version or
	// configuration, or stale (tools changed since it was written). The
	// index is then built from the catalog, reusing only the cards whose
	// key matches, and the file written again.
	Warning error
	// Saved reports that the file was (re)written.
	Saved bool
}

// IndexFile is Index with an index file at path (none when path is
// empty: Index with progress): cards saved there for a
// tool that has not changed are reused instead of analysed, and the file
// is written again (atomically, through a temporary file beside it) when
// any card was analysed. A file that cannot be used is never trusted:
// the index is built from the catalog and the report's Warning says why.
// progress, when not nil, is called from the building goroutines with
// the number of cards analysed so far and the number to analyse. The
// error is the build's or, for a file that cannot be written, the
// write's (the index is then still returned and kept).
func (d *Discoverer) IndexFile(ctx context.Context, snap *tools.Snapshot, path string, progress func(done, total int)) (*Index, IndexFileReport, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var rep IndexFileReport
	if path == "" {
		x, err := d.buildWith(ctx, snap, d.idx, nil, nil, nil, progress, nil)
		if err != nil {
			return nil, rep, err
		}
		d.idx = x
		rep.Reused, rep.Analysed = x.stats.Reused, x.stats.Tools-x.stats.Reused
		return x, rep, nil
	}
	file := d.readAhead(path) // beside the keys and the jobs
	var keys []toolKey
	keyed := make(chan struct{})
	jobs := d.startJobs(snap, func() (*companionIndex, bool) {
		<-keyed
		return file.companions(keys)
	})
	keys = toolKeys(snap)
	close(keyed)
	loaded, rows, saved, err := file.match(keys)
	if err != nil {
		rep.Warning = err
	}
	x, err := d.buildWith(ctx, snap, d.idx, loaded, rows, keys, progress, jobs)
	if err != nil {
		return nil, rep, err
	}
	d.idx = x
	rep.Reused = x.stats.Reused
	rep.Analysed = x.stats.Tools - x.stats.Reused
	matched := 0
	for _, dc := range loaded {
		if dc != nil {
			matched++
		}
	}
	if rep.Warning == nil && (rep.Analysed > 0 || saved != matched) {
		rep.Warning = fmt.Errorf("%w: %s is stale: %d of %d tools are new or changed, %d saved tools are gone", ErrIndexFile, path, rep.Analysed, snap.Len(), saved-matched)
	}
	if rep.Warning == nil {
		return x, rep, nil
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return x.write(w, d.fingerprint(), keys) }); err != nil {
		return x, rep, fmt.Errorf("discovery: write index file: %w", err)
	}
	rep.Saved = true
	return x, rep, nil
}

// fileRead is an index file's reading on a goroutine: once done is
// closed, cards holds the file's cards, or err why it cannot be used
// (wrapping [ErrIndexFile]).
type fileRead struct {
	path  string
	done  chan struct{}
	cards *fileCards
	err   error
}

// readAhead starts reading the index file at path: at a restart of
// 100,000 tools, the 0.3 s of its parse run beside the keys' hashing and
// the snapshot's jobs.
func (d *Discoverer) readAhead(path string) *fileRead {
	fr := &fileRead{path: path, done: make(chan struct{})}
	go func() {
		defer close(fr.done)
		fr.cards, fr.err = d.readIndexFile(path)
	}()
	return fr
}

// match waits for the reading and returns, by snapshot position, the
// file's cards whose key is one of keys (nil where none), the array
// their vectors are in, and the number of cards in the file; or why the
// file cannot be used.
func (fr *fileRead) match(keys []toolKey) ([]*doc, []int8, int, error) {
	<-fr.done
	if fr.err != nil {
		return nil, nil, 0, fr.err
	}
	docs, err := fr.cards.match(keys)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%w: %s: %w", ErrIndexFile, fr.path, err)
	}
	return docs, fr.cards.rows, len(fr.cards.docs), nil
}

// companions waits for the reading and returns the companions the file
// holds, when it holds them for exactly the tools of keys in their order
// (a restart): they are derived from the whole catalog, with tools named
// by their position.
func (fr *fileRead) companions(keys []toolKey) (*companionIndex, bool) {
	<-fr.done
	if fr.err != nil || !fr.cards.hasCompanions || !slices.Equal(fr.cards.keys, keys) {
		return nil, false
	}
	return fr.cards.companions, true
}

// fileCards are an index file's cards in the file's order: docs[j] is
// the card saved under keys[j], its vector in rows[j*dim:(j+1)*dim].
// hasCompanions says whether the file holds the companions of its tools
// (companions, nil when none has any).
type fileCards struct {
	keys          []toolKey
	docs          []*doc
	rows          []int8
	hasCompanions bool
	companions    *companionIndex
}

// match returns, by snapshot position, the cards whose key is one of
// keys, nil where none. When the file holds the snapshot's tools in its
// order (a restart), that is the file's own list, and rows is laid out
// as quantise adopts it.
func (fc *fileCards) match(keys []toolKey) ([]*doc, error) {
	if slices.Equal(fc.keys, keys) {
		return fc.docs, nil
	}
	want := make(map[toolKey]int, len(keys))
	for i, k := range keys {
		want[k] = i
	}
	out := make([]*doc, len(keys))
	for j, k := range fc.keys {
		if i, ok := want[k]; ok {
			if out[i] != nil {
				return nil, fmt.Errorf("%w: a tool is saved twice", errCorrupt)
			}
			out[i] = fc.docs[j]
		}
	}
	return out, nil
}

// WriteIndexFile writes x to path in the index file format, for
// IndexFile to read; d must be the Discoverer that built x.
func (d *Discoverer) WriteIndexFile(x *Index, path string) error {
	return atomicfile.Write(path, func(w io.Writer) error { return x.write(w, d.fingerprint(), toolKeys(x.snap)) })
}

// toolKey is a SHA-256 of every part of a tool that its card's analysis
// reads: its ID, description, card texts and input schema.
type toolKey [32]byte

func toolKeys(snap *tools.Snapshot) []toolKey {
	keys := make([]toolKey, snap.Len())
	fillKeys(snap, keys, nil)
	return keys
}

// fillKeys sets keys[i] to the key of the snapshot's tool i for each i
// of idx (every tool when idx is nil), on a few goroutines that each
// reuse one buffer (one a tool cost 160 MB of garbage at 100,000 tools).
func fillKeys(snap *tools.Snapshot, keys []toolKey, idx []int) {
	n := len(idx)
	if idx == nil {
		n = snap.Len()
	}
	workers := min(4, runtime.GOMAXPROCS(0), max(1, n/256))
	bufs := make([][]byte, workers)
	striped(workers, n, func(k int) error {
		i := k
		if idx != nil {
			i = idx[k]
		}
		w := k % workers // striped gives worker w the k ≡ w (mod workers)
		keys[i], bufs[w] = keyOfBuf(snap.Tool(i), bufs[w])
		return nil
	})
}

func keyOf(t *tools.Tool) toolKey {
	k, _ := keyOfBuf(t, nil)
	return k
}

// keyOfBuf is keyOf that lays the hashed bytes out in buf (returned, for
// reuse) and hashes them in one call: many small writes cost a restart at
// 100,000 tools three times what the hashing does.
func keyOfBuf(t *tools.Tool, buf []byte) (toolKey, []byte) {
	buf = buf[:0]
	put := func(s string) {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	putAll := func(ss []string) {
		put(strconv.Itoa(len(ss)))
		for _, s := range ss {
			put(s)
		}
	}
	c := &t.Card
	put(t.ID)
	put(t.Description)
	put(unsafe.String(unsafe.SliceData(t.InputSchema), len(t.InputSchema))) // copied into buf
	put(c.Name)
	put(c.Summary)
	put(c.NotFor)
	put(c.Group)
	putAll(c.Aliases)
	putAll(c.Tags)
	putAll(c.Examples)
	return sha256.Sum256(buf), buf
}

// fingerprint names what a saved card's analysis depends on besides the
// tool: the file format, toolgate's build, the lexicon's
// [lexicon.Lexicon.Digest], and a probe of the analyzer and embedder (so
// that another lexicon or embedder is noticed even between two builds of
// one development version).
func (d *Discoverer) fingerprint() string {
	d.fp.once.Do(func() { d.fp.s, d.fp.dim = d.computeFingerprint() })
	return d.fp.s
}

// fingerprintDim returns the dimension of the embedder's vectors (0
// without a dense side), as the fingerprint's probe found it; -1 when
// the probe could not be embedded.
func (d *Discoverer) fingerprintDim() int {
	d.fingerprint()
	return d.fp.dim
}

func (d *Discoverer) computeFingerprint() (string, int) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "format %d", indexVersion)
	if b := buildstamp.String(); b != "" {
		fmt.Fprintf(&sb, "; %s", b)
	}
	const probe = "Create or update files, pull requests and issues in GitHub repositories; envía el correo; zamknij zgłoszenie"
	sb.WriteString("; analysis ")
	sb.WriteString(strings.Join(d.analyzer.Terms(nil, probe, ""), " "))
	sb.WriteString(" | ")
	sb.WriteString(strings.Join(d.analyzer.Terms(nil, probe, analysis.English), " "))
	// The probe cannot see every entry of the lexicon: its digest can.
	if d.lex != nil {
		fmt.Fprintf(&sb, "; lexicon %s", d.lex.Digest())
	}
	dim := 0
	if d.embedder == nil {
		sb.WriteString("; no dense side")
	} else {
		dim = -1
		fmt.Fprintf(&sb, "; embedder %T", d.embedder)
		if vs, err := d.embedder.Embed(context.Background(), []string{probe}); err == nil && len(vs) == 1 {
			row, scale := quantiseVec(vs[0])
			h := sha256.New()
			binary.Write(h, binary.LittleEndian, row)
			binary.Write(h, binary.LittleEndian, scale)
			fmt.Fprintf(&sb, " dim %d %x", len(row), h.Sum(nil)[:8])
			dim = len(row)
		}
	}
	return sb.String(), dim
}

// write writes x's cards in the index file format.
func (x *Index) write(w io.Writer, fingerprint string, keys []toolKey) error {
	strs := make([]uint32, len(x.termStrings)) // term number -> 1 + number in the file
	var table []uint32
	local := func(ts []uint32) {
		for _, t := range ts {
			if strs[t] == 0 {
				table = append(table, t)
				strs[t] = uint32(len(table))
			}
		}
	}
	for _, dc := range x.docs {
		local(dc.terms)
	}
	// Streamed through a buffer with the checksum kept as it goes: the
	// file of 100,000 cards is 99 MB, which a bytes.Buffer held whole (and
	// grew by doubling) on top of the index.
	crc := crc32.New(crcTable)
	b := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	b.WriteString(indexMagic)
	e := encoder{b}
	e.u32(indexVersion)
	e.str(fingerprint)
	all := x.termStrings
	e.u32(uint32(len(table)))
	for _, t := range table {
		e.str(all[t])
	}
	e.u32(uint32(x.dim))
	e.u32(uint32(len(x.docs)))
	list := func(ts []uint32) {
		e.u32(uint32(len(ts)))
		for _, t := range ts {
			e.u32(strs[t] - 1)
		}
	}
	mentions := func(ms []mention) {
		e.u32(uint32(len(ms)))
		for _, m := range ms {
			e.str(m.ns)
			e.str(m.key)
		}
	}
	for i, dc := range x.docs {
		b.Write(keys[i][:])
		e.u32(uint32(dc.tokens))
		for f := range numFields {
			e.u32(uint32(dc.lens[f]))
		}
		for l := range numLists {
			list(dc.list(l))
		}
		e.u32(uint32(len(dc.accepts)))
		for _, a := range dc.accepts {
			b.WriteByte(byte(a.kind))
			b.WriteByte(boolByte(a.strong))
			e.str(a.pattern)
		}
		mentions(dc.mentions)
		mentions(dc.scrubbed)
		e.u32(uint32(dc.termBytes())) // derivable; kept so the format stays
		if x.dim > 0 {
			e.u32(math.Float32bits(x.scales[i]))
			row := x.rows[i*x.dim : (i+1)*x.dim]
			b.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(row))), len(row)))
		}
	}
	x.writeCompanions(e)
	if err := b.Flush(); err != nil {
		return err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

// writeCompanions writes x's companions: a byte 0 when they were not
// worked out, else 1, the number of tools that need a handle and, for
// each in snapshot order, its position and its needs (the handle's
// namespace, word, entity and qualifier, and its producers' positions).
func (x *Index) writeCompanions(e encoder) {
	if !x.companionsBuilt {
		e.b.WriteByte(0)
		return
	}
	e.b.WriteByte(1)
	var needs map[uint32][]need
	if x.companions != nil {
		needs = x.companions.needs
	}
	e.u32(uint32(len(needs)))
	for _, i := range slices.Sorted(maps.Keys(needs)) {
		e.u32(i)
		e.u32(uint32(len(needs[i])))
		for _, n := range needs[i] {
			e.str(n.h.ns)
			e.str(n.h.word)
			e.str(n.h.entity)
			e.str(n.h.qual)
			e.u32(uint32(len(n.producers)))
			for _, p := range n.producers {
				e.u32(p)
			}
		}
	}
}

// parseCompanions reads what writeCompanions wrote for a file of ndocs
// cards; str reads a string.
func (p *parser) parseCompanions(ndocs int, str func() string) (c *companionIndex, ok bool) {
	switch p.byte() {
	case 0:
		return nil, false
	case 1:
	default:
		p.fail()
		return nil, false
	}
	n := p.count(8)
	if n == 0 {
		return nil, true
	}
	c = &companionIndex{needs: make(map[uint32][]need, n)}
	valid := func(i uint32) bool {
		if int(i) >= ndocs {
			p.fail()
		}
		return p.err == nil
	}
	last := -1
	for range n {
		i := p.u32()
		if !valid(i) || int(i) <= last { // in snapshot order, each once
			p.fail()
			break
		}
		last = int(i)
		m := p.count(20)
		if m == 0 {
			p.fail()
		}
		ns := make([]need, 0, m)
		for range m {
			nd := need{h: handle{ns: str(), word: str(), entity: str(), qual: str()}}
			k := p.count(4)
			if k == 0 || k > maxProducers {
				p.fail()
			}
			for range k {
				if j := p.u32(); valid(j) {
					nd.producers = append(nd.producers, j)
				}
			}
			ns = append(ns, nd)
		}
		if p.err != nil {
			break
		}
		c.needs[i] = ns
	}
	return c, p.err == nil
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// encoder writes an index file's numbers and strings; a write error
// sticks in the [bufio.Writer] and comes out of its Flush.
type encoder struct{ b *bufio.Writer }

// u32 appends v in the writer's own buffer: a 4-byte array passed to
// Write escaped, 11 million allocations in a file of 100,000 cards.
func (e encoder) u32(v uint32) {
	if e.b.Available() < 4 {
		e.b.Flush() // an error stays in the writer, as Write's would
	}
	e.b.Write(binary.LittleEndian.AppendUint32(e.b.AvailableBuffer(), v))
}
func (e encoder) str(s string) {
	e.u32(uint32(len(s)))
	e.b.WriteString(s)
}

// readIndexFile returns the cards of the file at path, or why the file
// cannot be used (wrapping [ErrIndexFile]).
func (d *Discoverer) readIndexFile(path string) (*fileCards, error) {
	f, err := atomicfile.Open(path) // a pipe at path would block os.Open
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s does not exist yet", ErrIndexFile, path)
		}
		return nil, fmt.Errorf("%w: %w", ErrIndexFile, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrIndexFile, err)
	}
	if st.Size() > MaxIndexFileBytes {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrIndexFile, path, MaxIndexFileBytes)
	}
	// Read as a stream of the size the file has (a file that grows
	// meanwhile is cut there, and then fails its checksum): held whole,
	// the 98 MB of 100,000 cards were a third of a restart's heap peak.
	fc, err := d.parseIndexFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrIndexFile, path, err)
	}
	return fc, nil
}

// errCorrupt is a parse failure of an index file.
var errCorrupt = errors.New("corrupt or truncated")

// parseIndexFile parses an index file of size bytes read from r. Every
// length is checked against the bytes left before anything is allocated
// for it, so the work and memory are linear in size. The checksum is
// computed as the bytes stream by and checked at the end, before anything
// parsed is returned: a file that fails it is not used, whatever the
// parse found (a corrupt file is reported as such, not by the first
// field that its corruption made wrong). The cards' vectors are read
// into one array, which quantise adopts as the index's when the file
// holds the snapshot's tools in its order: the vectors (51 MB at 100,000
// tools) are then neither held twice nor copied again.
func (d *Discoverer) parseIndexFile(r io.Reader, size int64) (*fileCards, error) {
	if size < int64(len(indexMagic))+8 {
		return nil, errNotIndex
	}
	crc := crc32.New(crcTable)
	body := io.TeeReader(io.LimitReader(r, size-4), crc)
	p := &parser{r: body, buf: make([]byte, 0, parseBuffer), left: size - 4}
	if string(p.bytes(len(indexMagic))) != indexMagic {
		return nil, errNotIndex
	}
	fc, err := d.parseIndexBody(p)
	// The rest of the body through the checksum, then the checksum.
	var sum [4]byte
	if _, cerr := io.Copy(io.Discard, body); cerr != nil {
		return nil, cerr
	}
	if _, cerr := io.ReadFull(r, sum[:]); cerr != nil {
		return nil, fmt.Errorf("%w: %w", errCorrupt, cerr)
	}
	if crc.Sum32() != binary.LittleEndian.Uint32(sum[:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	if err != nil {
		return nil, err
	}
	return fc, nil
}

// errNotIndex is the error of a file that does not start as an index file.
var errNotIndex = errors.New("not a toolgate index file")

// parseIndexBody parses the index file p reads, after its magic.
func (d *Discoverer) parseIndexBody(p *parser) (*fileCards, error) {
	if v := p.u32(); v != indexVersion {
		return nil, fmt.Errorf("format version %d, this toolgate reads %d", v, indexVersion)
	}
	if fp := p.str(); p.err == nil && fp != d.fingerprint() {
		return nil, errors.New("written by another toolgate version or configuration")
	}
	nterms := p.count(4)
	ids := make([]uint32, 0, nterms)
	strs := make([]string, 1)
	for range nterms {
		strs[0] = p.str()
		ids = d.terms.intern(ids, strs)
	}
	// The fingerprint names the dimension, but the cards' rows are
	// read by this field: a file whose field says otherwise (written so
	// by hand) would fail every query's dense side.
	dim := int(p.u32())
	if want := d.fingerprintDim(); dim > maxIndexDim || (d.embedder == nil) != (dim == 0) || want >= 0 && dim != want {
		p.fail()
	}
	// The count is bounded by the bytes left, as are the arrays below.
	ndocs := p.count(32 + 4*(5+2*int(numFields)+2) + dim)
	fc := &fileCards{keys: make([]toolKey, 0, ndocs), docs: make([]*doc, 0, ndocs)}
	if dim > 0 {
		fc.rows = make([]int8, ndocs*dim)
	}
	// Cards, term lists and rows are cut from shared chunks: a few
	// hundred allocations for 100,000 cards instead of a dozen per card.
	var ar docArena
	var scratch []uint32 // a card's lists, read before their length is known
	list := func() {
		n := p.count(4)
		for range n {
			t := p.u32()
			if int(t) >= len(ids) {
				p.fail()
				return
			}
			scratch = append(scratch, ids[t])
		}
	}
	// The mentions' namespaces and keys, and the acceptors' patterns,
	// repeat across cards: one string each.
	interned := map[string]string{}
	str := func() string {
		n := int(p.u32())
		if n > maxIndexString {
			p.fail()
			return ""
		}
		b := p.bytes(n)
		s, ok := interned[string(b)]
		if !ok {
			s = string(b)
			interned[s] = s
		}
		return s
	}
	var ms []mention
	mentions := func() []mention {
		n := p.count(8)
		ms = ms[:0]
		for range n {
			ms = append(ms, mention{ns: str(), key: str()})
		}
		return ar.mentions(ms)
	}
	for range ndocs {
		if p.err != nil {
			break
		}
		var k toolKey
		copy(k[:], p.bytes(32))
		dc := ar.doc()
		dc.tokens = int32(p.u32())
		for f := range numFields {
			dc.lens[f] = int32(p.u32())
		}
		scratch = scratch[:0]
		for l := range numLists {
			list()
			dc.ends[l] = uint32(len(scratch))
		}
		dc.terms = append(ar.terms(len(scratch)), scratch...)
		na := p.count(6)
		for range na {
			kind, strong := p.byte(), p.byte()
			a := acceptor{kind: idKind(kind), strong: strong == 1, pattern: str()}
			if kind > byte(numKinds) || strong > 1 {
				p.fail()
			}
			dc.accepts = append(dc.accepts, a)
		}
		dc.mentions = mentions()
		dc.scrubbed = mentions()
		if int(p.u32()) != dc.termBytes() {
			p.fail()
		}
		if dim > 0 {
			dc.scale = math.Float32frombits(p.u32())
			raw := p.bytes(dim)
			if p.err == nil {
				j := len(fc.docs)
				dc.row = fc.rows[j*dim : (j+1)*dim : (j+1)*dim]
				copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dc.row))), dim), raw)
			}
		}
		if p.err == nil {
			fc.keys = append(fc.keys, k)
			fc.docs = append(fc.docs, dc)
		}
	}
	if p.err == nil {
		fc.companions, fc.hasCompanions = p.parseCompanions(len(fc.docs), str)
	}
	if p.err == nil && p.left != 0 {
		p.fail()
	}
	if p.err != nil {
		return nil, p.err
	}
	return fc, nil
}

// parser reads an index file's body from r through buf, of which
// buf[pos:] is read and not yet parsed, and left bytes (in buf or still
// in r) are not parsed yet; its first failure sticks, and every read
// after it returns zero values. Its own buffer, not a bufio.Reader's
// Peek and Discard, because a restart of 100,000 tools reads 30 million
// fields: the reads were a third of the file's parse.
type parser struct {
	r    io.Reader
	buf  []byte
	pos  int
	left int64
	err  error
}

// parseBuffer is the size of a parser's buffer: it holds the longest
// string or row (fill needs it whole) and makes few reads.
const parseBuffer = 1 << 20

// fill makes buf[pos:] hold at least n bytes (n ≤ parseBuffer), reading
// more from r, and reports whether it could.
func (p *parser) fill(n int) bool {
	if len(p.buf)-p.pos >= n {
		return true
	}
	if n > cap(p.buf) {
		return false
	}
	k := copy(p.buf[:cap(p.buf)], p.buf[p.pos:])
	p.buf, p.pos = p.buf[:k], 0
	for len(p.buf) < n {
		m, err := p.r.Read(p.buf[len(p.buf):cap(p.buf)])
		p.buf = p.buf[:len(p.buf)+m]
		if err != nil && len(p.buf) < n {
			return false
		}
	}
	return true
}

func (p *parser) fail() {
	if p.err == nil {
		p.err = errCorrupt
	}
	p.left = 0
}

// bytes returns the next n bytes, valid until the next read.
func (p *parser) bytes(n int) []byte {
	if p.err != nil || n < 0 || int64(n) > p.left {
		p.fail()
		return nil
	}
	if !p.fill(n) {
		p.fail()
		return nil
	}
	out := p.buf[p.pos : p.pos+n : p.pos+n]
	p.pos += n
	p.left -= int64(n)
	return out
}

func (p *parser) u32() uint32 {
	if p.err == nil && p.left >= 4 && len(p.buf)-p.pos >= 4 { // most reads
		v := binary.LittleEndian.Uint32(p.buf[p.pos:])
		p.pos += 4
		p.left -= 4
		return v
	}
	b := p.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (p *parser) byte() byte {
	b := p.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

// count reads a length of elements of at least size bytes each: one the
// bytes left cannot hold is a failure (and 0).
func (p *parser) count(size int) int {
	n := int(p.u32())
	if p.err != nil || int64(n) > p.left/int64(size) {
		p.fail()
		return 0
	}
	return n
}

func (p *parser) str() string {
	n := int(p.u32())
	if n > maxIndexString {
		p.fail()
		return ""
	}
	return string(p.bytes(n))
}
