package catalog

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/toolgate/toolgate/internal/atomicfile"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/internal/buildstamp"
)

// A cache file keeps what [LoadFiles] made of a list of catalog files, so
// that loading them again while they are unchanged costs a read of the
// cache and a hash of each file instead of a parse: at 100,000 tools,
// about 0.2 s instead of 1 s of CPU. It is only ever written for a load
// without error.
//
// Layout, little-endian: the magic "TGCATCCH", the format version
// (uint32), the fingerprint (a string: toolgate's build and a probe of
// the parser), the specs (each its text, the file's size as a uint64 and
// its SHA-256), the files, and a CRC-32C of all that. A string or list is
// a uint32 length and its elements. A file: its path, namespace and
// format, its tools/list nextCursor, and its tools. A tool: its ID, title, description, card name,
// summary, not_for and group, a flags byte (the card's four risk flags,
// and whether it has an input schema), its input schema when it has one
// (a uint32: the number of a schema an earlier tool has, or 2³²−1 and the
// schema's bytes, which get the next number), its timeout (int64
// nanoseconds) and its scopes, aliases, tags, examples and tenants (each
// a uint32 count plus one, zero for none, and the strings). The file is
// written as a stream: its writer holds no copy of the catalog.

const (
	cacheMagic   = "TGCATCCH"
	cacheVersion = 2
	// MaxCacheBytes bounds the cache file [LoadFilesCached] reads.
	MaxCacheBytes = 1 << 30
)

// ErrCache is wrapped by [CacheReport.Warning].
var ErrCache = errors.New("catalog: cache not used")

// CacheReport says what [LoadFilesCached] did with its cache file.
type CacheReport struct {
	// Hit reports that the tools came from the cache: no file was parsed.
	Hit bool
	// Warning, when not nil, wraps [ErrCache] and says why a cache file
	// that exists was not used (corrupt, of another toolgate, or the files
	// changed) or why it could not be written. The files were then
	// loaded. A missing cache is no warning: it is written.
	Warning error
	// Saved reports that the cache file was (re)written.
	Saved bool
}

// LoadFilesCached is [LoadFiles] through the cache file at cache. When
// the cache holds the load of these specs, in this order, and every file
// has the size and SHA-256 it had then, under the same toolgate, the
// files are returned from it without being parsed. Otherwise the files
// are loaded and, when that loads every file without error, the cache is
// written again (atomically, through a temporary file beside it); the
// report's Warning says why the cache was not used. A cache that cannot
// be used is never trusted: it changes nothing but the time. A list with
// a path that is not a regular file (a pipe, a device, a missing file) is
// loaded without the cache, which it neither reads nor writes. The result
// is what [LoadFiles] returns for the same files. The strings and schemas
// of tools from the cache point into the cache's bytes, one block kept
// whole while any of them is used (where schemas are most of it, the
// strings and the schemas move to a block each); none of it may be
// written.
func LoadFilesCached(cache string, specs ...string) ([]File, CacheReport, error) {
	var rep CacheReport
	if err := errors.Join(checkNamespaces(specs)...); err != nil {
		files, err := LoadFiles(specs...)
		return files, rep, err
	}
	for _, spec := range specs {
		// A pipe or a device cannot be read twice (once to be hashed,
		// once to be parsed), nor its content keyed: such a list is
		// loaded as it is.
		path, _ := ParseSpec(spec)
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
			files, err := LoadFiles(specs...)
			return files, rep, err
		}
	}
	files, err := readCache(cache, specs)
	if err == nil {
		rep.Hit = true
		return files, rep, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		rep.Warning = err
	}
	sums := make([]fileSum, len(specs))
	files, err = loadFiles(specs, sums)
	if err != nil {
		return files, rep, err
	}
	if werr := writeCache(cache, specs, sums, files); werr != nil {
		rep.Warning = fmt.Errorf("%w: %s cannot be written: %w", ErrCache, cache, werr)
		return files, rep, nil
	}
	rep.Saved = true
	return files, rep, nil
}

// fileSum is what a cache checks of a catalog file: its size and SHA-256.
type fileSum struct {
	size int64
	sum  [sha256.Size]byte
}

// sumFile returns path's fileSum, reading it as a stream.
func sumFile(path string) (fileSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileSum{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return fileSum{}, err
	}
	var s fileSum
	s.size = n
	h.Sum(s.sum[:0])
	return s, nil
}

var cacheCRC = crc32.MakeTable(crc32.Castagnoli)

// cacheFingerprint names what a cache's content depends on besides the
// files: the format, toolgate's build, and a probe of the parser (the
// encoding of a small catalog's tools), so that another parser is
// noticed even between two builds of one development version.
var cacheFingerprint = sync.OnceValue(func() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "format %d", cacheVersion)
	if b := buildstamp.String(); b != "" {
		fmt.Fprintf(&sb, "; %s", b)
	}
	const probe = `{"name":"  create_issue ","description":"Create an issue. In a repo.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]},"scopes":["repo:write"],"aliases":["open a ticket"],"annotations":{"readOnlyHint":false,"destructiveHint":true}}
{"name":"push","title":"Push commits","annotations":{"readOnlyHint":false}}
{"name":"list_issues","title":"List","description":"List issues","tags":["issues"],"examples":["show my issues"],"not_for":"closing","group":"issues","tenants":["acme"],"read_only":true,"inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}}
{"type":"function","function":{"name":"close_issue","description":"Close an issue","parameters":{"type":"object"}},"scopes":["repo:write"]}
{"name":"label_issue","input_schema":{"type":"object","properties":{"label":{"type":"string"}}}}
{"name":"lock_issue","scope":["repo:admin"]}
`
	ts, err := Parse(strings.NewReader(probe), "probe.jsonl", "probe")
	h := sha256.New()
	fmt.Fprintf(h, "%v", err)
	e := &cacheEncoder{w: bufio.NewWriter(h), schemas: map[schemaAt]uint32{}}
	e.files([]File{{Path: "probe.jsonl", Namespace: "probe", Format: FormatJSONLines, Tools: ts}})
	e.w.Flush()
	fmt.Fprintf(&sb, "; probe %x", h.Sum(nil)[:8])
	return sb.String()
})

// cacheEncoder writes a cache's files to w; a write error sticks in w
// and comes out of its Flush.
type cacheEncoder struct {
	w       *bufio.Writer
	schemas map[schemaAt]uint32 // the schemas written, by where they are
}

// schemaAt is where a schema's bytes are: the tools of one schema share
// one slice (DefineAll's), which is written once.
type schemaAt struct {
	p *byte
	n int
}

// newSchema marks a schema written in full, not by its number.
const newSchema = math.MaxUint32

func (e *cacheEncoder) u32(v uint32) {
	if e.w.Available() < 4 {
		e.w.Flush() // an error stays in the writer, as Write's would
	}
	e.w.Write(binary.LittleEndian.AppendUint32(e.w.AvailableBuffer(), v))
}

func (e *cacheEncoder) str(s string) {
	e.u32(uint32(len(s)))
	e.w.WriteString(s)
}

func (e *cacheEncoder) list(ss []string) {
	if ss == nil {
		e.u32(0)
		return
	}
	e.u32(uint32(len(ss)) + 1)
	for _, s := range ss {
		e.str(s)
	}
}

func (e *cacheEncoder) files(files []File) {
	e.u32(uint32(len(files)))
	for _, f := range files {
		e.str(f.Path)
		e.str(f.Namespace)
		e.str(string(f.Format))
		e.str(f.NextCursor)
		e.u32(uint32(len(f.Tools)))
		for i := range f.Tools {
			e.tool(&f.Tools[i])
		}
	}
}

func (e *cacheEncoder) tool(t *tools.Tool) {
	c := &t.Card
	for _, s := range [...]string{t.ID, t.Title, t.Description, c.Name, c.Summary, c.NotFor, c.Group} {
		e.str(s)
	}
	var flags byte
	for bit, on := range [...]bool{c.ReadOnly, c.Irreversible, c.Idempotent, c.OpenWorld, t.InputSchema != nil} {
		if on {
			flags |= 1 << bit
		}
	}
	e.w.WriteByte(flags)
	if t.InputSchema != nil {
		at := schemaAt{unsafe.SliceData(t.InputSchema), len(t.InputSchema)}
		if n, ok := e.schemas[at]; ok {
			e.u32(n)
		} else {
			e.schemas[at] = uint32(len(e.schemas))
			e.u32(newSchema)
			e.str(unsafe.String(unsafe.SliceData(t.InputSchema), len(t.InputSchema)))
		}
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(t.Timeout))
	e.w.Write(b[:])
	for _, l := range [...][]string{c.Scopes, c.Aliases, c.Tags, c.Examples, t.Tenants} {
		e.list(l)
	}
}

// encodeCache writes the cache of files, loaded from specs whose files
// had sums, to w, checksum and all.
func encodeCache(w io.Writer, specs []string, sums []fileSum, files []File) error {
	crc := crc32.New(cacheCRC)
	e := &cacheEncoder{w: bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16), schemas: map[schemaAt]uint32{}}
	e.w.WriteString(cacheMagic)
	e.u32(cacheVersion)
	e.str(cacheFingerprint())
	e.u32(uint32(len(specs)))
	for i, spec := range specs {
		e.str(spec)
		e.w.Write(binary.LittleEndian.AppendUint64(nil, uint64(sums[i].size)))
		e.w.Write(sums[i].sum[:])
	}
	e.files(files)
	if err := e.w.Flush(); err != nil {
		return err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

// writeCache writes the cache of files, loaded from specs whose files
// had sums, to path, whole or not at all.
func writeCache(path string, specs []string, sums []fileSum, files []File) error {
	return atomicfile.Write(path, func(w io.Writer) error { return encodeCache(w, specs, sums, files) })
}

// readCache returns the files of the cache at path when it holds the load
// of specs as their files are now, or why not (wrapping [ErrCache]).
func readCache(path string, specs []string) ([]File, error) {
	data, err := readCacheFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCache, err)
	}
	var stale error
	c, err := parseCache(data, func(c *parsedCache) error {
		stale = c.matches(specs)
		return stale
	})
	switch {
	case stale != nil:
		return nil, fmt.Errorf("%w: %s is stale: %w", ErrCache, path, stale)
	case err != nil:
		return nil, fmt.Errorf("%w: %s: %w", ErrCache, path, err)
	}
	return c.files, nil
}

func readCacheFile(path string) ([]byte, error) {
	f, err := atomicfile.Open(path) // a pipe at path would block os.Open
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxCacheBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, MaxCacheBytes)
	}
	// The header first: a file that is not this toolgate's cache (a
	// file of zeros, another version) is told so before its size is
	// allocated and read (1 GiB of garbage cost 1.2 GB and 6 to 12 s).
	head := make([]byte, min(st.Size(), cacheHeadBytes))
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, err
	}
	if int64(len(head)) < st.Size() {
		if err := (&cacheDecoder{b: head}).header(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	data := make([]byte, st.Size())
	copy(data, head)
	if _, err := io.ReadFull(f, data[len(head):]); err != nil {
		return nil, err
	}
	return data, nil
}

// cacheHeadBytes is how much of a cache file is read to check its
// header before the rest: more than a fingerprint needs.
const cacheHeadBytes = 4 << 10

// header checks the magic, version and fingerprint at the start of d's
// bytes: those of a cache this toolgate wrote.
func (d *cacheDecoder) header() error {
	if string(d.bytes(len(cacheMagic))) != cacheMagic || d.err != nil {
		return errNotCache
	}
	if v := d.u32(); d.err == nil && v != cacheVersion {
		return fmt.Errorf("format version %d, this toolgate reads %d", v, cacheVersion)
	}
	if fp := d.str(); d.err != nil || fp != cacheFingerprint() {
		return errors.New("written by another toolgate version")
	}
	return nil
}

// errNotCache is the error of a file that does not start as a cache.
var errNotCache = errors.New("not a toolgate catalog cache")

// parsedCache is a cache file's content.
type parsedCache struct {
	specs []string
	sums  []fileSum
	files []File
}

// matches reports why c is not the load of specs as their files are now.
// It hashes the files on at most one goroutine per CPU.
func (c *parsedCache) matches(specs []string) error {
	if !slices.Equal(c.specs, specs) {
		return errors.New("it holds other catalog files")
	}
	errs := make([]error, len(specs))
	next := make(chan int, len(specs))
	for i := range specs {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(len(specs), runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				path, _ := ParseSpec(specs[i])
				s, err := sumFile(path)
				switch {
				case err != nil:
					errs[i] = err
				case s != c.sums[i]:
					errs[i] = fmt.Errorf("%s changed", path)
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// errCacheCorrupt is a parse failure of a cache file.
var errCacheCorrupt = errors.New("corrupt or truncated")

// parseCache parses a cache file. The checksum is checked first; then
// check, when not nil, is given the specs and sums (of a cache not yet
// decoded further), and its error stops the parse: a stale cache costs
// no decoding. Every count and piece is checked against the bytes there
// are before anything is allocated for it, so the work and memory are
// linear in len(data). The tools' strings and schemas point into data.
func parseCache(data []byte, check func(*parsedCache) error) (*parsedCache, error) {
	if len(data) < len(cacheMagic)+8 || string(data[:len(cacheMagic)]) != cacheMagic {
		return nil, errNotCache
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, cacheCRC) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", errCacheCorrupt)
	}
	d := &cacheDecoder{b: body}
	if err := d.header(); err != nil {
		if d.err != nil {
			return nil, d.err
		}
		return nil, err
	}
	c := &parsedCache{}
	n := d.count(4 + 8 + sha256.Size)
	for range n {
		c.specs = append(c.specs, d.str())
		var s fileSum
		s.size = int64(d.u64())
		copy(s.sum[:], d.bytes(sha256.Size))
		c.sums = append(c.sums, s)
	}
	if d.err != nil {
		return nil, d.err
	}
	if check != nil {
		if err := check(c); err != nil {
			return nil, err
		}
	}
	nfiles := d.count(4*4 + 4)
	for range nfiles {
		f := File{Path: d.piece(), Namespace: d.piece(), Format: Format(d.piece()), NextCursor: d.piece()}
		nt := d.count(7*4 + 1 + 8 + 5*4)
		if nt > 0 {
			f.Tools = make([]tools.Tool, nt)
		}
		for i := range f.Tools {
			d.tool(&f.Tools[i])
		}
		c.files = append(c.files, f)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errCacheCorrupt
	}
	if d.err != nil {
		return nil, d.err
	}
	if d.schemaBytes > len(data)/4 {
		c.ownStrings()
		c.ownSchemas(d.schemas, d.schemaBytes)
	}
	return c, nil
}

// ownStrings moves the strings of c's tools out of the cache's bytes to
// a block of their own. They point into those bytes, which also hold the
// input schemas; the registry copies the schemas but keeps the strings,
// so where schemas are a big part of the cache (every tool its own: 50 of
// 89 MB at 100,000 tools), the strings alone are kept, not the whole.
func (c *parsedCache) ownStrings() {
	n := 0
	c.eachString(func(s *string) { n += len(*s) })
	block := make([]byte, 0, n) // never grown: the strings point into it
	c.eachString(func(s *string) {
		if len(*s) > 0 {
			off := len(block)
			block = append(block, *s...)
			*s = unsafe.String(&block[off], len(*s))
		}
	})
}

// ownSchemas moves the input schemas of c's tools, schemas (n bytes in
// all), out of the cache's bytes to a block of their own, as ownStrings
// does the strings: then nothing points into those bytes, which go. A
// registry that adopts the schemas (as toolgate does at a restart) kept
// the whole cache for them, strings and all: at 100,000 tools whose
// schemas all differ, 89 MB instead of the schemas' 50, which the restart
// lifted the CLI's memory limit over (internal/heapcap).
func (c *parsedCache) ownSchemas(schemas []json.RawMessage, n int) {
	block := make([]byte, 0, n) // never grown: the schemas point into it
	moved := make(map[*byte]json.RawMessage, len(schemas))
	for _, s := range schemas {
		if len(s) > 0 {
			off := len(block)
			block = append(block, s...)
			moved[&s[0]] = block[off:len(block):len(block)]
		}
	}
	for i := range c.files {
		for j := range c.files[i].Tools {
			if t := &c.files[i].Tools[j]; len(t.InputSchema) > 0 {
				t.InputSchema = moved[&t.InputSchema[0]]
			}
		}
	}
}

// eachString calls f with each string of c's files and tools.
func (c *parsedCache) eachString(f func(*string)) {
	for i := range c.files {
		file := &c.files[i]
		f(&file.Path)
		f(&file.Namespace)
		f((*string)(&file.Format))
		for j := range file.Tools {
			t := &file.Tools[j]
			card := &t.Card
			for _, s := range [...]*string{&t.ID, &t.Title, &t.Description, &card.Name, &card.Summary, &card.NotFor, &card.Group} {
				f(s)
			}
			for _, l := range [...][]string{card.Scopes, card.Aliases, card.Tags, card.Examples, t.Tenants} {
				for k := range l {
					f(&l[k])
				}
			}
		}
	}
}

// cacheDecoder reads a cache's body; its first failure sticks, and every
// read after it returns zero values.
type cacheDecoder struct {
	b           []byte
	schemas     []json.RawMessage // by number
	schemaBytes int               // their length, all together
	err         error
}

func (d *cacheDecoder) fail() {
	if d.err == nil {
		d.err = errCacheCorrupt
	}
	d.b = nil
}

func (d *cacheDecoder) bytes(n int) []byte {
	if n < 0 || n > len(d.b) {
		d.fail()
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}

func (d *cacheDecoder) u32() uint32 {
	if b := d.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *cacheDecoder) u64() uint64 {
	if b := d.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// count reads a count of elements of at least size bytes each.
func (d *cacheDecoder) count(size int) int {
	n := uint64(d.u32())
	if d.err != nil || n > uint64(len(d.b)/size) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *cacheDecoder) str() string {
	n := d.u32()
	return string(d.bytes(int(n)))
}

// piece reads a string, which shares the cache's memory.
func (d *cacheDecoder) piece() string {
	b := d.bytes(int(d.u32()))
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (d *cacheDecoder) list() []string {
	n := d.u32()
	if n == 0 || d.err != nil {
		return nil
	}
	if uint64(n-1) > uint64(len(d.b)/4) {
		d.fail()
		return nil
	}
	ss := make([]string, n-1)
	for i := range ss {
		ss[i] = d.piece()
	}
	return ss
}

func (d *cacheDecoder) tool(t *tools.Tool) {
	c := &t.Card
	for _, s := range [...]*string{&t.ID, &t.Title, &t.Description, &c.Name, &c.Summary, &c.NotFor, &c.Group} {
		*s = d.piece()
	}
	var flags byte
	if b := d.bytes(1); b != nil {
		flags = b[0]
	}
	if flags >= 1<<5 {
		d.fail()
	}
	c.ReadOnly, c.Irreversible, c.Idempotent, c.OpenWorld = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
	if flags&16 != 0 {
		t.InputSchema = d.schema()
	}
	t.Timeout = time.Duration(d.u64())
	for _, l := range [...]*[]string{&c.Scopes, &c.Aliases, &c.Tags, &c.Examples, &t.Tenants} {
		*l = d.list()
	}
}

// schema reads a tool's input schema: a number, or a new schema's bytes.
func (d *cacheDecoder) schema() json.RawMessage {
	n := d.u32()
	if n == newSchema {
		s := d.bytes(int(d.u32()))
		if s == nil && d.err == nil {
			s = []byte{}
		}
		d.schemas = append(d.schemas, s)
		d.schemaBytes += len(s)
		return s
	}
	if int64(n) >= int64(len(d.schemas)) {
		d.fail()
		return nil
	}
	return d.schemas[n]
}
