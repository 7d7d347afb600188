// Package gguf reads the metadata of a GGUF file (the model format of
// llama.cpp): its header and key/value pairs, never the tensors. It reads
// through an [io.Reader] with every count and length checked against
// [Limits] before anything is allocated, so a hostile file costs at most
// the limits' memory, not what its header claims.
//
// Only the standard library is used. The format is llama.cpp's
// gguf-py/gguf/constants.py and ggml/src/gguf.cpp: little-endian, magic
// "GGUF", version 2 or 3, tensor count and key/value count as uint64, each
// key a uint64-length string, each value a uint32 type then the value.
package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/toolgate/toolgate/internal/textcut"
)

// Type is a GGUF value type.
type Type uint32

// The GGUF value types (gguf_type).
const (
	TypeUint8   Type = 0
	TypeInt8    Type = 1
	TypeUint16  Type = 2
	TypeInt16   Type = 3
	TypeUint32  Type = 4
	TypeInt32   Type = 5
	TypeFloat32 Type = 6
	TypeBool    Type = 7
	TypeString  Type = 8
	TypeArray   Type = 9
	TypeUint64  Type = 10
	TypeInt64   Type = 11
	TypeFloat64 Type = 12
)

// Errors a read wraps (test with [errors.Is]).
var (
	// ErrFormat: the data is not a GGUF file this reader understands.
	ErrFormat = errors.New("gguf: not a GGUF file")
	// ErrLimit: a count or length exceeds the Limits.
	ErrLimit = errors.New("gguf: over a limit")
)

// Limits bound what a read may allocate. The zero value of a field means
// its default.
type Limits struct {
	// MaxKeys bounds the number of key/value pairs (default 1<<16).
	MaxKeys int
	// MaxString bounds one string's length in bytes (default 1<<24: a
	// chat template is a few KB).
	MaxString int
	// MaxArray bounds one array's element count (default 1<<23: the
	// largest vocabularies have about 260k tokens).
	MaxArray int
	// MaxBytes bounds the memory of all kept values together, counted as
	// string bytes plus 16 per string and the element size per number
	// (default 1<<28).
	MaxBytes int
}

func (l *Limits) orDefault() Limits {
	var o Limits
	if l != nil {
		o = *l
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = 1 << 16
	}
	if o.MaxString <= 0 {
		o.MaxString = 1 << 24
	}
	if o.MaxArray <= 0 {
		o.MaxArray = 1 << 23
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 1 << 28
	}
	return o
}

// Value is one metadata value. Exactly one of the fields is set, by [Type]:
// Uint for the unsigned types and bool (0 or 1), Int for the signed ones,
// Float for the floats, Str for a string, and for an array Elem is the
// element type and one of Strs, Uints, Ints, Floats holds the elements
// (arrays of arrays are skipped: Elem is [TypeArray] and no slice is set).
type Value struct {
	Type   Type
	Uint   uint64
	Int    int64
	Float  float64
	Str    string
	Elem   Type
	Strs   []string
	Uints  []uint64
	Ints   []int64
	Floats []float64
}

// Metadata is what [Read] returns: the header and the key/value pairs kept.
type Metadata struct {
	Version uint32
	Tensors uint64
	// KV maps each kept key to its value.
	KV map[string]Value
}

// Read reads the header and metadata of a GGUF file from r, keeping the
// values of the keys keep reports true for (nil keeps all); the others are
// read past without being stored. A key given twice is refused, as
// llama.cpp's gguf.cpp refuses it. It stops after the last key/value pair:
// the tensor infos and data are not read. Errors wrap [ErrFormat], [ErrLimit],
// or the reader's error ([io.ErrUnexpectedEOF] for a file cut short), and
// say where: the header or the key, and the byte offset.
func Read(r io.Reader, keep func(key string) bool, limits *Limits) (*Metadata, error) {
	d := &decoder{r: bufio.NewReaderSize(r, 1<<16), lim: limits.orDefault()}
	var magic [4]byte
	if _, err := io.ReadFull(d.r, magic[:]); err != nil {
		return nil, fmt.Errorf("header: %w", d.fail(err))
	}
	if string(magic[:]) != "GGUF" {
		return nil, fmt.Errorf("%w: magic %q", ErrFormat, magic[:])
	}
	d.pos = len(magic)
	md := &Metadata{KV: map[string]Value{}}
	md.Version = uint32(d.u(4))
	if d.err == nil && md.Version != 2 && md.Version != 3 {
		return nil, fmt.Errorf("%w: version %d (want 2 or 3; a big-endian file reads as a huge version)", ErrFormat, md.Version)
	}
	md.Tensors = d.u(8)
	n := d.u(8)
	if d.err != nil {
		return nil, fmt.Errorf("header: %w", d.err)
	}
	if n > uint64(d.lim.MaxKeys) {
		return nil, fmt.Errorf("%w: %d key/value pairs, limit %d", ErrLimit, n, d.lim.MaxKeys)
	}
	seen := make(map[string]bool, min(n, initialCap))
	for i := uint64(0); i < n; i++ {
		start := d.pos
		key := d.str(true)
		t := Type(d.u(4))
		if d.err != nil {
			return nil, fmt.Errorf("key %d of %d: %w", i+1, n, d.err)
		}
		if seen[key] {
			return nil, fmt.Errorf("%w: key %q at byte %d is there twice", ErrFormat, textcut.Shorten(key, maxQuoted), start)
		}
		seen[key] = true
		store := keep == nil || keep(key)
		v := d.value(t, store)
		if d.err != nil {
			return nil, fmt.Errorf("key %q: %w", textcut.Shorten(key, maxQuoted), d.err)
		}
		if store {
			md.KV[key] = v
		}
	}
	return md, nil
}

// maxQuoted bounds the bytes of a key an error quotes.
const maxQuoted = 64

type decoder struct {
	r    *bufio.Reader
	lim  Limits
	pos  int // bytes read: the offset of what is read next
	used int
	err  error
	buf  [8]byte
}

// fail records err, said to be at the offset of what could not be read,
// as the read's error unless one is recorded already.
func (d *decoder) fail(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if d.err == nil {
		d.err = fmt.Errorf("at byte %d: %w", d.pos, err)
	}
	return d.err
}

// skip reads past n bytes.
func (d *decoder) skip(n int) {
	if _, err := d.r.Discard(n); err != nil {
		d.fail(err)
		return
	}
	d.pos += n
}

// charge counts n bytes of kept memory against MaxBytes.
func (d *decoder) charge(n int) bool {
	if d.used += n; d.used > d.lim.MaxBytes {
		d.fail(fmt.Errorf("%w: more than %d bytes of metadata", ErrLimit, d.lim.MaxBytes))
		return false
	}
	return true
}

func (d *decoder) u(size int) uint64 {
	if d.err != nil {
		return 0
	}
	if _, err := io.ReadFull(d.r, d.buf[:size]); err != nil {
		d.fail(err)
		return 0
	}
	d.pos += size
	switch size {
	case 1:
		return uint64(d.buf[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(d.buf[:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(d.buf[:]))
	}
	return binary.LittleEndian.Uint64(d.buf[:])
}

// str reads a string; when keep is false it is skipped and "" returned.
func (d *decoder) str(keep bool) string {
	n := d.u(8)
	if d.err != nil {
		return ""
	}
	if n > uint64(d.lim.MaxString) {
		d.fail(fmt.Errorf("%w: a string of %d bytes, limit %d", ErrLimit, n, d.lim.MaxString))
		return ""
	}
	if !keep {
		d.skip(int(n))
		return ""
	}
	if !d.charge(int(n) + 16) {
		return ""
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.fail(err)
		return ""
	}
	d.pos += len(b)
	return string(b)
}

func scalarSize(t Type) int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// scalar reads one number or bool into v.
func (d *decoder) scalar(t Type, v *Value) {
	raw := d.u(scalarSize(t))
	switch t {
	case TypeUint8, TypeUint16, TypeUint32, TypeUint64:
		v.Uint = raw
	case TypeBool:
		if raw > 1 {
			d.fail(fmt.Errorf("%w: bool value %d", ErrFormat, raw))
		}
		v.Uint = raw
	case TypeInt8:
		v.Int = int64(int8(raw))
	case TypeInt16:
		v.Int = int64(int16(raw))
	case TypeInt32:
		v.Int = int64(int32(raw))
	case TypeInt64:
		v.Int = int64(raw)
	case TypeFloat32:
		v.Float = float64(math.Float32frombits(uint32(raw)))
	case TypeFloat64:
		v.Float = math.Float64frombits(raw)
	}
}

func (d *decoder) value(t Type, keep bool) Value {
	v := Value{Type: t}
	switch {
	case t == TypeString:
		v.Str = d.str(keep)
	case scalarSize(t) > 0:
		d.scalar(t, &v)
	case t == TypeArray:
		d.array(&v, keep, 0)
	default:
		d.fail(fmt.Errorf("%w: value type %d", ErrFormat, t))
	}
	return v
}

// initialCap bounds the room made for an array before its elements are
// read: a count in the header is a claim, the elements are the proof.
const initialCap = 1 << 12

// maxArrayDepth bounds arrays of arrays (none of the keys read here has
// them; gguf.cpp itself refuses nesting).
const maxArrayDepth = 1

func (d *decoder) array(v *Value, keep bool, depth int) {
	v.Elem = Type(d.u(4))
	n := d.u(8)
	if d.err != nil {
		return
	}
	if n > uint64(d.lim.MaxArray) {
		d.fail(fmt.Errorf("%w: an array of %d elements, limit %d", ErrLimit, n, d.lim.MaxArray))
		return
	}
	size := scalarSize(v.Elem)
	switch {
	case v.Elem == TypeString:
		if keep {
			if !d.charge(int(n) * 16) {
				return
			}
			v.Strs = make([]string, 0, min(n, initialCap))
		}
		for i := uint64(0); i < n && d.err == nil; i++ {
			s := d.str(keep)
			if keep {
				v.Strs = append(v.Strs, s)
			}
		}
	case size > 0:
		if !keep {
			d.skip(int(n) * size)
			return
		}
		if !d.charge(int(n) * 8) {
			return
		}
		var e Value
		switch v.Elem {
		case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
			v.Ints = make([]int64, 0, min(n, initialCap))
		case TypeFloat32, TypeFloat64:
			v.Floats = make([]float64, 0, min(n, initialCap))
		default:
			v.Uints = make([]uint64, 0, min(n, initialCap))
		}
		for i := uint64(0); i < n && d.err == nil; i++ {
			d.scalar(v.Elem, &e)
			switch {
			case v.Ints != nil:
				v.Ints = append(v.Ints, e.Int)
			case v.Floats != nil:
				v.Floats = append(v.Floats, e.Float)
			default:
				v.Uints = append(v.Uints, e.Uint)
			}
		}
	case v.Elem == TypeArray && depth < maxArrayDepth:
		for i := uint64(0); i < n && d.err == nil; i++ {
			var inner Value
			d.array(&inner, false, depth+1)
		}
	default:
		d.fail(fmt.Errorf("%w: array element type %d", ErrFormat, v.Elem))
	}
}
