package embedcache

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/atomicfile"
)

// Bounds of a cache file; [Decode] refuses a file beyond them before it
// allocates anything, and [Cache.Save] drops the least recently used
// entries to stay within them.
const (
	// MaxDim is the longest vector kept (the widest common embedding
	// models return 4,096 dimensions).
	MaxDim = 16384
	// MaxEntries is the most vectors one file keeps.
	MaxEntries = 1 << 20
	// MaxBytes is the largest file read or written.
	MaxBytes = 1 << 30
	// MaxModelBytes bounds the model identity stored in the header.
	MaxModelBytes = 4096
)

// Version is the file format's version; a file of another is ignored.
const Version = 1

// magic opens every cache file.
var magic = [8]byte{'T', 'G', 'E', 'M', 'B', 'V', 'E', 'C'}

// ErrCorrupt is wrapped by [Decode] for a file that is not a well-formed
// cache file within the bounds; the error says what is wrong and where.
var ErrCorrupt = errors.New("embedcache: corrupt cache file")

// Key identifies one embedded text: the SHA-256 of its bytes.
type Key [32]byte

// KeyOf returns the key of text.
func KeyOf(text string) Key { return sha256.Sum256([]byte(text)) }

// Entry is one cached vector.
type Entry struct {
	Key Key
	// Used is when the vector was last looked up or added, in Unix
	// seconds; the oldest are dropped first.
	Used uint32
	Vec  []float32
}

// File is the content of one cache file.
type File struct {
	// Model is the model identity the vectors were made by.
	Model string
	// Dim is the length of every vector.
	Dim     int
	Entries []Entry
}

// headerSize is the fixed part before the model identity: magic, version,
// dim, count, model length.
const headerSize = 8 + 4*4

// Encode writes f in the format [Decode] reads: the magic "TGEMBVEC", then
// little-endian uint32 version, dimension, entry count and model length,
// the model identity, each entry as its 32-byte key, uint32 last use and
// dim float32s, and last the SHA-256 of everything before it.
func Encode(w io.Writer, f *File) error {
	if err := f.check(); err != nil {
		return err
	}
	h := sha256.New()
	mw := io.MultiWriter(w, h)
	buf := make([]byte, 0, headerSize+len(f.Model))
	buf = append(buf, magic[:]...)
	buf = binary.LittleEndian.AppendUint32(buf, Version)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(f.Dim))
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(f.Entries)))
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(f.Model)))
	buf = append(buf, f.Model...)
	if _, err := mw.Write(buf); err != nil {
		return err
	}
	row := make([]byte, 36+4*f.Dim)
	for _, e := range f.Entries {
		copy(row, e.Key[:])
		binary.LittleEndian.PutUint32(row[32:], e.Used)
		for i, x := range e.Vec {
			binary.LittleEndian.PutUint32(row[36+4*i:], math.Float32bits(x))
		}
		if _, err := mw.Write(row); err != nil {
			return err
		}
	}
	_, err := w.Write(h.Sum(nil))
	return err
}

// check reports what makes f unwritable.
func (f *File) check() error {
	switch {
	case len(f.Model) > MaxModelBytes:
		return fmt.Errorf("embedcache: model identity of %d bytes, the limit is %d", len(f.Model), MaxModelBytes)
	case f.Dim < 0 || f.Dim > MaxDim || (f.Dim == 0 && len(f.Entries) > 0):
		return fmt.Errorf("embedcache: dimension %d outside [1,%d]", f.Dim, MaxDim)
	case len(f.Entries) > MaxEntries:
		return fmt.Errorf("embedcache: %d entries, the limit is %d", len(f.Entries), MaxEntries)
	case fileSize(len(f.Model), f.Dim, len(f.Entries)) > MaxBytes:
		return fmt.Errorf("embedcache: %d entries of %d dimensions exceed %d bytes", len(f.Entries), f.Dim, MaxBytes)
	}
	for i, e := range f.Entries {
		if len(e.Vec) != f.Dim {
			return fmt.Errorf("embedcache: entry %d has %d dimensions, the file %d", i, len(e.Vec), f.Dim)
		}
	}
	return nil
}

// fileSize is the exact size of a file with these counts.
func fileSize(model, dim, n int) int64 {
	return int64(headerSize+model) + int64(n)*int64(36+4*dim) + sha256.Size
}

// Decode reads a cache file written by [Encode]. Anything else (another
// magic or version, counts beyond the bounds or that disagree with the
// length, a wrong checksum, a vector with a NaN or infinite component)
// is an error wrapping [ErrCorrupt] that names the offset. The cost is
// linear in len(data), which the caller bounds ([MaxBytes]).
func Decode(data []byte) (*File, error) {
	bad := func(off int, format string, args ...any) error {
		return fmt.Errorf("%w: at byte %d: %s", ErrCorrupt, off, fmt.Sprintf(format, args...))
	}
	if len(data) < headerSize+sha256.Size {
		return nil, bad(0, "%d bytes, shorter than a header", len(data))
	}
	if !bytes.Equal(data[:8], magic[:]) {
		return nil, bad(0, "not a toolgate vector cache (magic %q)", data[:8])
	}
	le := binary.LittleEndian
	version, dim, n, mlen := le.Uint32(data[8:]), le.Uint32(data[12:]), le.Uint32(data[16:]), le.Uint32(data[20:])
	switch {
	case version != Version:
		return nil, bad(8, "format version %d, this build reads %d", version, Version)
	case dim > MaxDim || (dim == 0 && n > 0):
		return nil, bad(12, "dimension %d outside [1,%d]", dim, MaxDim)
	case n > MaxEntries:
		return nil, bad(16, "%d entries, the limit is %d", n, MaxEntries)
	case mlen > MaxModelBytes:
		return nil, bad(20, "model identity of %d bytes, the limit is %d", mlen, MaxModelBytes)
	}
	if want := fileSize(int(mlen), int(dim), int(n)); int64(len(data)) != want {
		return nil, bad(len(data), "file of %d bytes, its header says %d", len(data), want)
	}
	body := len(data) - sha256.Size
	if sum := sha256.Sum256(data[:body]); !bytes.Equal(sum[:], data[body:]) {
		return nil, bad(body, "checksum mismatch")
	}
	f := &File{Model: string(data[headerSize : headerSize+mlen]), Dim: int(dim), Entries: make([]Entry, n)}
	off := headerSize + int(mlen)
	flat := make([]float32, int(n)*int(dim))
	for i := range f.Entries {
		e := &f.Entries[i]
		copy(e.Key[:], data[off:])
		e.Used = le.Uint32(data[off+32:])
		e.Vec = flat[i*int(dim) : (i+1)*int(dim) : (i+1)*int(dim)]
		for j := range e.Vec {
			x := math.Float32frombits(le.Uint32(data[off+36+4*j:]))
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, bad(off+36+4*j, "entry %d has a non-finite component", i)
			}
			e.Vec[j] = x
		}
		off += 36 + 4*int(dim)
	}
	return f, nil
}

// Cache holds one model's vectors in memory, read from and saved to its
// file. It is safe for concurrent use. The vectors it returns are shared:
// callers must not modify them.
type Cache struct {
	path  string
	model string
	warn  func(string)
	now   func() time.Time

	mu     sync.Mutex
	dim    int
	vecs   map[Key]*Entry
	loaded int // entries read from the file at Open
	added  int // entries added since the last Save
}

// Path returns the file of the model's vectors under dir.
func Path(dir, model string) string {
	sum := sha256.Sum256([]byte(model))
	return filepath.Join(dir, "vectors-"+hex.EncodeToString(sum[:12])+".tgvec")
}

// Open returns the cache of model under dir, with the vectors its file
// holds. A missing file is an empty cache; a file that cannot be trusted
// (see [Decode]), or that holds another model's vectors, is reported to
// warn (nil: nowhere) and ignored. The error is only for dir: it is
// created when missing, and Open fails when it cannot be.
func Open(dir, model string, warn func(string)) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("embedcache: no directory")
	}
	if len(model) > MaxModelBytes {
		return nil, fmt.Errorf("embedcache: model identity of %d bytes, the limit is %d", len(model), MaxModelBytes)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("embedcache: %w", err)
	}
	if warn == nil {
		warn = func(string) {}
	}
	c := &Cache{path: Path(dir, model), model: model, warn: warn, now: time.Now, vecs: map[Key]*Entry{}}
	if f := c.read(); f != nil {
		c.dim = f.Dim
		for i := range f.Entries {
			c.vecs[f.Entries[i].Key] = &f.Entries[i]
		}
		c.loaded = len(f.Entries)
	}
	return c, nil
}

// read returns the trusted content of c's file, nil when there is none.
func (c *Cache) read() *File {
	fh, err := atomicfile.Open(c.path) // a pipe at the path would block os.Open
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		c.warn(fmt.Sprintf("embedcache: %v; the vectors will be embedded again", err))
		return nil
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxBytes+1))
	if err == nil && len(data) > MaxBytes {
		err = fmt.Errorf("%w: over %d bytes", ErrCorrupt, MaxBytes)
	}
	var f *File
	if err == nil {
		f, err = Decode(data)
	}
	if err == nil && f.Model != c.model {
		err = fmt.Errorf("it holds the vectors of %q, not %q", f.Model, c.model)
	}
	if err != nil {
		c.warn(fmt.Sprintf("embedcache: ignoring %s: %v; the vectors will be embedded again", c.path, err))
		return nil
	}
	return f
}

// Path returns the file the cache reads and saves.
func (c *Cache) Path() string { return c.path }

// Len returns the number of vectors held.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.vecs)
}

// Loaded returns how many vectors Open read from the file.
func (c *Cache) Loaded() int { return c.loaded }

// Dim returns the length of the vectors held, 0 when there are none.
func (c *Cache) Dim() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dim
}

// Lookup returns the vector of k and marks it used.
func (c *Cache) Lookup(k Key) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.vecs[k]
	if !ok {
		return nil, false
	}
	e.Used = c.stamp()
	return e.Vec, true
}

func (c *Cache) stamp() uint32 { return uint32(min(max(c.now().Unix(), 0), math.MaxUint32)) }

// Add keeps vecs[i] as the vector of keys[i], copying them. Vectors of
// another length than those held replace all of them (the model behind
// the identity changed), reported to the warn function. A vector of no
// dimensions, more than [MaxDim] or with a non-finite component is an error,
// and nothing is added.
func (c *Cache) Add(keys []Key, vecs [][]float32) error {
	if len(keys) != len(vecs) {
		return fmt.Errorf("embedcache: %d keys for %d vectors", len(keys), len(vecs))
	}
	for i, v := range vecs {
		if len(v) == 0 || len(v) > MaxDim || len(v) != len(vecs[0]) {
			return fmt.Errorf("embedcache: vector %d has %d dimensions", i, len(v))
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("embedcache: vector %d has a non-finite component", i)
			}
		}
	}
	if len(vecs) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dim != 0 && c.dim != len(vecs[0]) {
		c.warn(fmt.Sprintf("embedcache: %s: the model now returns %d dimensions, the cache held %d: its %d vectors are dropped",
			c.path, len(vecs[0]), c.dim, len(c.vecs)))
		clear(c.vecs)
	}
	c.dim = len(vecs[0])
	now := c.stamp()
	for i, k := range keys {
		c.vecs[k] = &Entry{Key: k, Used: now, Vec: slices.Clone(vecs[i])}
	}
	c.added += len(keys)
	return nil
}

// Save writes the vectors held to the file, merged with those another
// process saved there since (same model and dimension), keeping the most
// recently used within [MaxEntries] and [MaxBytes]. It writes a temporary
// file in the same directory and renames it over the old one. With nothing
// added since the last Save it writes nothing.
func (c *Cache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.added == 0 {
		return nil
	}
	f := &File{Model: c.model, Dim: c.dim}
	newer := map[Key]bool{} // entries whose file copy is used more recently
	if disk := c.read(); disk != nil && disk.Dim == c.dim {
		for _, e := range disk.Entries {
			if mine, ok := c.vecs[e.Key]; !ok || mine.Used < e.Used {
				f.Entries = append(f.Entries, e)
				newer[e.Key] = true
			}
		}
	}
	for k, e := range c.vecs {
		if !newer[k] {
			f.Entries = append(f.Entries, *e)
		}
	}
	// Newest first, then by key, so that the file is deterministic.
	slices.SortFunc(f.Entries, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(b.Used, a.Used), bytes.Compare(a.Key[:], b.Key[:]))
	})
	keep := MaxEntries
	if f.Dim > 0 {
		keep = min(keep, int((MaxBytes-fileSize(len(f.Model), f.Dim, 0))/int64(36+4*f.Dim)))
	}
	if len(f.Entries) > keep {
		f.Entries = f.Entries[:keep]
	}
	if err := atomicfile.Write(c.path, func(w io.Writer) error { return Encode(w, f) }); err != nil {
		return fmt.Errorf("embedcache: write %s: %w", c.path, err)
	}
	c.added = 0
	return nil
}
