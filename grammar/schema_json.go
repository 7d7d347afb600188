package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
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

// decodeJSON decodes exactly one JSON value, keeping key order. An object
// with a repeated member name is refused (one meaning per document: the
// validator and the grammar must not read different members), and so is
// nesting deeper than maxJSONDepth; both errors name the JSON pointer.
func decodeJSON(data []byte) (*jsonValue, error) {
	d := &jsonDecoder{dec: json.NewDecoder(bytes.NewReader(data))}
	d.dec.UseNumber()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// maxJSONDepth bounds the nesting of a schema document (arrays and objects).
const maxJSONDepth = 512

type jsonDecoder struct {
	dec  *json.Decoder
	path []string // member names and array indexes down to the current value
}

// pointer is the JSON pointer of the current value, shortened in the
// middle when it is long.
func (d *jsonDecoder) pointer() string {
	p := pointerJoin("", d.path...)
	if p == "" {
		return "/"
	}
	if len(p) > 160 {
		p = p[:80] + "/…/" + p[len(p)-60:]
	}
	return p
}

func (d *jsonDecoder) value(depth int) (*jsonValue, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("JSON nested more than %d levels at %s (byte %d)", maxJSONDepth, d.pointer(), d.dec.InputOffset())
	}
	tok, err := d.dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("unexpected end of JSON input")
		}
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &jsonValue{kind: jsonNull}, nil
	case bool:
		return newBool(t), nil
	case json.Number:
		return &jsonValue{kind: jsonNumber, s: string(t)}, nil
	case string:
		return newString(t), nil
	case json.Delim:
		switch t {
		case '[':
			v := &jsonValue{kind: jsonArray}
			for d.dec.More() {
				d.path = append(d.path, strconv.Itoa(len(v.arr)))
				e, err := d.value(depth + 1)
				if err != nil {
					return nil, err
				}
				d.path = d.path[:len(d.path)-1]
				v.arr = append(v.arr, e)
			}
			if _, err := d.dec.Token(); err != nil {
				return nil, err
			}
			return v, nil
		case '{':
			v := newObject()
			var seen map[string]bool // built once the object is large enough to need it
			for d.dec.More() {
				kt, err := d.dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is %v, not a string", kt)
				}
				d.path = append(d.path, key)
				if dup := d.repeated(v, key, &seen); dup {
					return nil, fmt.Errorf("member %q appears twice in the object at %s", key, d.pointerOfParent())
				}
				e, err := d.value(depth + 1)
				if err != nil {
					return nil, err
				}
				d.path = d.path[:len(d.path)-1]
				v.keys = append(v.keys, key)
				v.vals = append(v.vals, e)
			}
			if _, err := d.dec.Token(); err != nil {
				return nil, err
			}
			return v, nil
		}
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// repeated reports whether key is already a member of v: a scan for small
// objects, a set for large ones, so that the check stays linear.
func (d *jsonDecoder) repeated(v *jsonValue, key string, seen *map[string]bool) bool {
	if len(v.keys) < 16 {
		for _, k := range v.keys {
			if k == key {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, 2*len(v.keys))
		for _, k := range v.keys {
			(*seen)[k] = true
		}
	}
	if (*seen)[key] {
		return true
	}
	(*seen)[key] = true
	return false
}

func (d *jsonDecoder) pointerOfParent() string {
	d.path = d.path[:len(d.path)-1]
	p := d.pointer()
	return p
}

// writeJSONString appends the canonical JSON form of s: `"` and `\` and
// the control characters escaped (\b \f \n \r \t, else \u00xx), every other
// code point raw. It is the form the string grammars of this package
// produce for literal text (enum and const values, property names).
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
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
