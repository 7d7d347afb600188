package grammar

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/internal/jsonsyntax"
)

// jsonKind is the kind of a decoded JSON value.
type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

// jsonValue is a decoded JSON value that keeps object keys in document
// order: property order in a schema is the order the grammar emits.
type jsonValue struct {
	kind jsonKind
	b    bool
	s    string // string value, or the number literal
	arr  []*jsonValue
	keys []string
	vals []*jsonValue
}

// get returns the member key of an object, or nil.
func (v *jsonValue) get(key string) *jsonValue {
	if v == nil || v.kind != jsonObject {
		return nil
	}
	for i := len(v.keys) - 1; i >= 0; i-- { // the last duplicate wins, as in most decoders
		if v.keys[i] == key {
			return v.vals[i]
		}
	}
	return nil
}

func (v *jsonValue) has(key string) bool { return v.get(key) != nil }

// isContainer reports whether v is an object or an array.
func (v *jsonValue) isContainer() bool { return v.kind == jsonObject || v.kind == jsonArray }

// set adds or replaces a member of an object.
func (v *jsonValue) set(key string, val *jsonValue) {
	for i := range v.keys {
		if v.keys[i] == key {
			v.vals[i] = val
			return
		}
	}
	v.keys = append(v.keys, key)
	v.vals = append(v.vals, val)
}

// del removes a member of an object.
func (v *jsonValue) del(key string) {
	for i := 0; i < len(v.keys); i++ {
		if v.keys[i] == key {
			v.keys = append(v.keys[:i:i], v.keys[i+1:]...)
			v.vals = append(v.vals[:i:i], v.vals[i+1:]...)
			i--
		}
	}
}

// clone returns a shallow copy of an object (members shared).
func (v *jsonValue) clone() *jsonValue {
	c := *v
	c.keys = append([]string(nil), v.keys...)
	c.vals = append([]*jsonValue(nil), v.vals...)
	c.arr = append([]*jsonValue(nil), v.arr...)
	return &c
}

func newObject() *jsonValue         { return &jsonValue{kind: jsonObject} }
func newString(s string) *jsonValue { return &jsonValue{kind: jsonString, s: s} }
func newBool(b bool) *jsonValue     { return &jsonValue{kind: jsonBool, b: b} }

// decodeJSON decodes exactly one JSON value (RFC 8259), keeping member
// order and number text. Strings decode as encoding/json decodes them
// (invalid UTF-8 and lone surrogates become U+FFFD). An object with a
// repeated member name is refused (one meaning per document: the validator
// and the grammar must not read different members), and so is nesting
// deeper than maxJSONDepth; both errors name the JSON pointer. The work is
// linear in the input.
func decodeJSON(data []byte) (*jsonValue, error) {
	members := bytes.Count(data, []byte(":"))
	d := &jsonDecoder{src: data, members: members, values: maxValues(data)}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.pos < len(d.src) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// maxJSONDepth bounds the nesting of a schema document (arrays and objects).
const maxJSONDepth = 512

type jsonDecoder struct {
	src  []byte
	pos  int
	path []string // member names and array indexes down to the current value
	buf  []byte   // scratch for strings with escapes

	// The members and elements of the objects and arrays being decoded,
	// innermost last: each object or array copies its own once, at its
	// end, at their final size.
	keys []string
	vals []*jsonValue
	// slab holds values not yet handed out: decoded values are allocated
	// a block at a time.
	slab []jsonValue
	// keyBlock and valBlock hold the member names and values (or
	// elements) not yet handed out, for the same reason.
	keyBlock []string
	valBlock []*jsonValue
	members  int // at most the document's members: the size of the first keyBlock
	values   int // maxValues(src): the size of the first slab and valBlock
}

// maxValues bounds the number of values in a JSON document: every value
// but the first is a member of an object or an element of an array, and a
// non-empty object or array has one member or element more than commas.
func maxValues(src []byte) int {
	return 1 + bytes.Count(src, []byte(",")) + bytes.Count(src, []byte("{")) + bytes.Count(src, []byte("["))
}

// carve returns a copy of src taken from *block, which it refills when too
// little is left: the first block holds first elements (up to 4096), later
// ones 64, or len(src) if more. The copy's capacity is its length:
// appending to it cannot reach the block.
func carve[T any](block *[]T, src []T, first int) []T {
	if len(*block) < len(src) {
		size := 64
		if *block == nil {
			size = min(first, 4096)
		}
		*block = make([]T, max(size, len(src)))
	}
	out := (*block)[:len(src):len(src)]
	copy(out, src)
	*block = (*block)[len(src):]
	return out
}

// newValue returns a fresh value of kind k from the slab. The first slab
// holds as many values as the document can have (up to 512), so that a
// tool's schema takes one allocation and wastes little; later ones hold 32.
func (d *jsonDecoder) newValue(k jsonKind) *jsonValue {
	if len(d.slab) == 0 {
		n := 32
		if d.slab == nil {
			n = min(d.values, 512)
		}
		d.slab = make([]jsonValue, n)
	}
	v := &d.slab[0]
	d.slab = d.slab[1:]
	v.kind = k
	return v
}

// pointer is the JSON pointer of the current value, shortened in the
// middle when it is long.
func (d *jsonDecoder) pointer() string {
	p := pointerJoin("", d.path...)
	if p == "" {
		return "/"
	}
	if len(p) > 160 {
		head, tail := p[:80], p[len(p)-60:]
		if i := strings.LastIndexByte(head, '/'); i > 0 {
			head = head[:i]
		}
		if i := strings.IndexByte(tail, '/'); i >= 0 {
			tail = tail[i:]
		}
		p = head + "/…" + tail
	}
	return p
}

func (d *jsonDecoder) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at byte %d: "+format, append([]any{d.pos}, args...)...)
}

func (d *jsonDecoder) space() { d.pos = jsonsyntax.Space(d.src, d.pos) }

func (d *jsonDecoder) value(depth int) (*jsonValue, error) {
	if d.pos >= len(d.src) {
		return nil, errors.New("unexpected end of JSON input")
	}
	switch c := d.src[d.pos]; {
	case c == '{' || c == '[':
		if depth >= maxJSONDepth {
			return nil, fmt.Errorf("JSON nested more than %d levels at %s (byte %d)", maxJSONDepth, d.pointer(), d.pos)
		}
		if c == '{' {
			return d.object(depth)
		}
		return d.array(depth)
	case c == '"':
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		v := d.newValue(jsonString)
		v.s = s
		return v, nil
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 't':
		return d.literal("true", jsonTrue)
	case c == 'f':
		return d.literal("false", jsonFalse)
	case c == 'n':
		return d.literal("null", jsonNullValue)
	default:
		return nil, d.errorf("unexpected %s", jsonsyntax.Describe(d.src, d.pos))
	}
}

// The literals decode to shared values: decoded values are never modified
// (the compiler's rewrites clone).
var (
	jsonTrue      = newBool(true)
	jsonFalse     = newBool(false)
	jsonNullValue = &jsonValue{kind: jsonNull}
)

func (d *jsonDecoder) literal(word string, v *jsonValue) (*jsonValue, error) {
	if !bytes.HasPrefix(d.src[d.pos:], []byte(word)) {
		if len(d.src)-d.pos < len(word) && bytes.HasPrefix([]byte(word), d.src[d.pos:]) {
			return nil, errors.New("unexpected end of JSON input")
		}
		return nil, d.errorf("invalid literal (expecting %s)", word)
	}
	d.pos += len(word)
	return v, nil
}

func (d *jsonDecoder) array(depth int) (*jsonValue, error) {
	d.pos++ // [
	v := d.newValue(jsonArray)
	d.space()
	if d.pos < len(d.src) && d.src[d.pos] == ']' {
		d.pos++
		return v, nil
	}
	start := len(d.vals)
	defer func() { d.vals = d.vals[:start] }()
	for {
		d.space()
		e, err := d.element(strconv.Itoa(len(d.vals)-start), depth)
		if err != nil {
			return nil, err
		}
		d.vals = append(d.vals, e)
		if done, err := d.after(']', "an array element"); done || err != nil {
			v.arr = carve(&d.valBlock, d.vals[start:], d.values)
			return v, err
		}
	}
}

// element decodes the value at the member or index name.
func (d *jsonDecoder) element(name string, depth int) (*jsonValue, error) {
	d.path = append(d.path, name)
	e, err := d.value(depth + 1)
	d.path = d.path[:len(d.path)-1]
	return e, err
}

// after reads what follows an element: ',' (more to come) or the closer.
func (d *jsonDecoder) after(closer byte, what string) (done bool, err error) {
	d.space()
	if d.pos >= len(d.src) {
		return false, errors.New("unexpected end of JSON input")
	}
	switch d.src[d.pos] {
	case ',':
		d.pos++
		return false, nil
	case closer:
		d.pos++
		return true, nil
	}
	return false, d.errorf("expecting ',' or '%c' after %s", closer, what)
}

func (d *jsonDecoder) object(depth int) (*jsonValue, error) {
	d.pos++ // {
	v := d.newValue(jsonObject)
	var seen map[string]bool // built once the object is large enough to need it
	d.space()
	if d.pos < len(d.src) && d.src[d.pos] == '}' {
		d.pos++
		return v, nil
	}
	start, vstart := len(d.keys), len(d.vals)
	defer func() { d.keys, d.vals = d.keys[:start], d.vals[:vstart] }()
	for {
		d.space()
		if d.pos >= len(d.src) {
			return nil, errors.New("unexpected end of JSON input")
		}
		if d.src[d.pos] != '"' {
			return nil, d.errorf("expecting a string for a member name")
		}
		key, err := d.str()
		if err != nil {
			return nil, err
		}
		if repeated(d.keys[start:], key, &seen) {
			return nil, fmt.Errorf("member %q appears twice in the object at %s", key, d.pointer())
		}
		d.space()
		if d.pos >= len(d.src) {
			return nil, errors.New("unexpected end of JSON input")
		}
		if d.src[d.pos] != ':' {
			return nil, d.errorf("expecting ':' after a member name")
		}
		d.pos++
		d.space()
		e, err := d.element(key, depth)
		if err != nil {
			return nil, err
		}
		d.keys = append(d.keys, key)
		d.vals = append(d.vals, e)
		if done, err := d.after('}', "an object member"); done || err != nil {
			v.keys, v.vals = carve(&d.keyBlock, d.keys[start:], d.members), carve(&d.valBlock, d.vals[vstart:], d.values)
			return v, err
		}
	}
}

// repeated reports whether key is already among keys: a scan for small
// objects, a set for large ones, so that the check stays linear.
func repeated(keys []string, key string, seen *map[string]bool) bool {
	if len(keys) < 16 {
		for _, k := range keys {
			if k == key {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, 2*len(keys))
		for _, k := range keys {
			(*seen)[k] = true
		}
	}
	if (*seen)[key] {
		return true
	}
	(*seen)[key] = true
	return false
}

func (d *jsonDecoder) number() (*jsonValue, error) {
	start := d.pos
	end, fault := jsonsyntax.Number(d.src, d.pos)
	d.pos = end
	if fault != jsonsyntax.NumberOK {
		return nil, d.numberError()
	}
	v := d.newValue(jsonNumber)
	v.s = string(d.src[start:end])
	return v, nil
}

func (d *jsonDecoder) numberError() error {
	if d.pos >= len(d.src) {
		return errors.New("unexpected end of JSON input")
	}
	return d.errorf("invalid number")
}

// str reads a string starting at its opening quote.
func (d *jsonDecoder) str() (string, error) {
	d.pos++ // "
	start := d.pos
	// Fast path: no escape, ASCII or valid UTF-8.
	for d.pos < len(d.src) {
		c := d.src[d.pos]
		if c == '"' {
			s := d.src[start:d.pos]
			d.pos++
			if k, ok := internedKeys[string(s)]; ok { // no allocation for a keyword
				return k, nil
			}
			return validString(s), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		d.pos++
	}
	b := append(d.buf[:0], d.src[start:d.pos]...)
	for {
		if d.pos >= len(d.src) {
			return "", errors.New("unexpected end of JSON input")
		}
		c := d.src[d.pos]
		switch {
		case c == '"':
			d.pos++
			d.buf = b
			return validString(b), nil
		case c < 0x20:
			return "", d.errorf("control character %#x in a string", c)
		case c != '\\':
			b = append(b, c)
			d.pos++
			continue
		}
		// An escape.
		if d.pos+1 >= len(d.src) {
			return "", errors.New("unexpected end of JSON input")
		}
		e := d.src[d.pos+1]
		d.pos += 2
		if c, ok := jsonsyntax.Escape(e); ok {
			b = append(b, c)
			continue
		}
		switch e {
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", d.errorf("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A pair is one code point; a lone surrogate is U+FFFD.
				if d.pos+1 < len(d.src) && d.src[d.pos] == '\\' && d.src[d.pos+1] == 'u' {
					save := d.pos
					d.pos += 2
					if r2, ok := d.hex4(); ok {
						if c := utf16.DecodeRune(r, r2); c != utf8.RuneError {
							b = utf8.AppendRune(b, c)
							continue
						}
					}
					d.pos = save
				}
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default:
			if e > ' ' && e < 0x7f {
				return "", d.errorf("invalid escape \\%c", e)
			}
			// A control byte or a byte of a multi-byte character
			// would break the one-line message or show as garbage.
			return "", d.errorf("invalid escape: '\\' before byte 0x%02x", e)
		}
	}
}

// internedKeys are strings that occur in most schemas (the keywords, the
// type names), decoded without an allocation.
var internedKeys = func() map[string]string {
	m := map[string]string{}
	for k := range keywords {
		m[k] = k
	}
	for k := range typeBits {
		m[k] = k
	}
	return m
}()

// validString converts b, replacing each byte that is not part of valid
// UTF-8 with U+FFFD, as encoding/json does.
func validString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return string(out)
}

func (d *jsonDecoder) hex4() (rune, bool) {
	r, ok := jsonsyntax.Hex4(d.src, d.pos)
	if ok {
		d.pos += 4
	}
	return r, ok
}

// writeJSONString appends the canonical JSON form of s, RFC 8785's
// ([jcs.AppendString]): `"` and `\` and the control characters escaped
// (\b \f \n \r \t, else \u00xx), every other code point raw, and each
// byte of s that is not valid UTF-8 as U+FFFD. It is the form the string
// grammars of this package produce for literal text (enum and const
// values, property names).
func writeJSONString(b *strings.Builder, s string) {
	if !utf8.ValidString(s) {
		s = validString([]byte(s))
	}
	var buf [64]byte
	b.Write(jcs.AppendString(buf[:0], s))
}

// canonicalJSON is the compact serialization of v with object keys in v's
// own order and numbers in canonical form (see canonicalNumber).
func canonicalJSON(v *jsonValue) string {
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

func writeCanonical(b *strings.Builder, v *jsonValue) {
	switch v.kind {
	case jsonNull:
		b.WriteString("null")
	case jsonBool:
		b.WriteString(strconv.FormatBool(v.b))
	case jsonNumber:
		b.WriteString(canonicalNumber(v.s))
	case jsonString:
		writeJSONString(b, v.s)
	case jsonArray:
		b.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case jsonObject:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			writeCanonical(b, v.vals[i])
		}
		b.WriteByte('}')
	}
}

// maxCanonicalDigits bounds the plain decimal expansion of a number literal;
// a literal whose expansion would be longer keeps its exponent form.
const maxCanonicalDigits = 400

// canonicalNumber returns the form in which this package's grammars write a
// number: an integral value as plain integer digits (1.0, 1e2 and -0 become
// 1, 100 and 0), any other value as a plain decimal without exponent and
// without trailing fraction zeros (1.50e-1 becomes 0.15). A literal that is
// not a JSON number, or whose expansion would exceed maxCanonicalDigits, is
// returned unchanged.
func canonicalNumber(lit string) string {
	neg, intPart, frac, exp, ok := splitNumber(lit)
	if !ok {
		return lit
	}
	digits := intPart + frac
	point := len(intPart) + exp // position of the decimal point in digits
	if point > maxCanonicalDigits || point < -maxCanonicalDigits {
		return lit
	}
	var ip, fp string
	switch {
	case point <= 0:
		ip, fp = "0", strings.Repeat("0", -point)+digits
	case point >= len(digits):
		ip, fp = digits+strings.Repeat("0", point-len(digits)), ""
	default:
		ip, fp = digits[:point], digits[point:]
	}
	ip = strings.TrimLeft(ip, "0")
	if ip == "" {
		ip = "0"
	}
	fp = strings.TrimRight(fp, "0")
	s := ip
	if fp != "" {
		s += "." + fp
	}
	if neg && s != "0" {
		s = "-" + s
	}
	return s
}

// splitNumber splits a JSON number literal into sign, integer digits,
// fraction digits and decimal exponent.
func splitNumber(lit string) (neg bool, intPart, frac string, exp int, ok bool) {
	s := lit
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return false, "", "", 0, false
	}
	intPart, s = s[:i], s[i:]
	if strings.HasPrefix(s, ".") {
		j := 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == 1 {
			return false, "", "", 0, false
		}
		frac, s = s[1:j], s[j:]
	}
	if s != "" {
		if s[0] != 'e' && s[0] != 'E' {
			return false, "", "", 0, false
		}
		e, err := strconv.Atoi(strings.TrimPrefix(s[1:], "+"))
		if err != nil || e > 1<<20 || e < -(1<<20) {
			return false, "", "", 0, false
		}
		exp = e
	}
	return neg, intPart, frac, exp, true
}

// numberRat returns the exact value of a JSON number literal.
func numberRat(lit string) (*big.Rat, bool) {
	neg, ip, fp, exp, ok := splitNumber(lit)
	if !ok || exp > 4096 || exp < -4096 {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(ip + "." + fp + "0")
	if !ok {
		return nil, false
	}
	if exp != 0 {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil)
		if exp > 0 {
			r.Mul(r, new(big.Rat).SetInt(p))
		} else {
			r.Quo(r, new(big.Rat).SetInt(p))
		}
	}
	if neg {
		r.Neg(r)
	}
	return r, true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// jsonEqual reports JSON Schema equality: numbers by value, objects
// regardless of key order.
func jsonEqual(a, b *jsonValue) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case jsonNull:
		return true
	case jsonBool:
		return a.b == b.b
	case jsonString:
		return a.s == b.s
	case jsonNumber:
		ra, ok1 := numberRat(a.s)
		rb, ok2 := numberRat(b.s)
		if !ok1 || !ok2 {
			return a.s == b.s
		}
		return ra.Cmp(rb) == 0
	case jsonArray:
		if len(a.arr) != len(b.arr) {
			return false
		}
		for i := range a.arr {
			if !jsonEqual(a.arr[i], b.arr[i]) {
				return false
			}
		}
		return true
	case jsonObject:
		if len(a.keys) != len(b.keys) {
			return false
		}
		for i, k := range a.keys {
			bv := b.get(k)
			if bv == nil || !jsonEqual(a.vals[i], bv) {
				return false
			}
		}
		return true
	}
	return false
}
