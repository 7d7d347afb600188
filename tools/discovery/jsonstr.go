package discovery

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/toolgate/toolgate/internal/jsonsyntax"
)

// appendJSONString appends s to dst as json.Marshal encodes a string: HTML
// characters, control characters, U+2028 and U+2029 escaped, and each byte
// of invalid UTF-8 as \ufffd. FuzzAppendJSONString holds it to
// json.Marshal; the build counts every card's schema head with it instead
// of allocating two encodings per card.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0 // s[start:i] is still to copy
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, `\b`...)
			case '\f':
				dst = append(dst, `\f`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			case '\t':
				dst = append(dst, `\t`...)
			default: // other control characters, and < > &
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(dst, s[start:]...), '"')
}

// valueEncoder appends what encoding/json decodes into an any (maps with
// string keys, slices, strings, float64s, bools and nil) as json.Marshal
// encodes it: map keys sorted bytewise, numbers as Marshal formats a
// float64, strings as appendJSONString. keys is its scratch for map keys,
// a stack that nested maps share. FuzzSchemaInfo holds it to json.Marshal;
// the build encodes every distinct input schema with it (Marshal's
// reflection and buffers were a third of a schema's cost).
type valueEncoder struct {
	keys []string
}

// append appends v to dst, or reports false for a value Marshal would
// refuse or that no decode into an any yields (then dst is garbage).
func (e *valueEncoder) append(dst []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case float64:
		return appendJSONFloat(dst, v)
	case string:
		return appendJSONString(dst, v), true
	case []any:
		if v == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, x := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = e.append(dst, x); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), true
		}
		start := len(e.keys)
		for k := range v {
			e.keys = append(e.keys, k)
		}
		// A nested map may grow e.keys into a new array; keys still reads
		// the old one, whose strings it does not change.
		keys := e.keys[start:]
		slices.Sort(keys)
		dst = append(dst, '{')
		ok := true
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendJSONString(dst, k), ':')
			if dst, ok = e.append(dst, v[k]); !ok {
				break
			}
		}
		clear(e.keys[start:])
		e.keys = e.keys[:start]
		return append(dst, '}'), ok
	}
	return dst, false
}

// appendJSONFloat appends f as json.Marshal encodes a float64: like
// strconv's shortest 'f' form, but 'e' (with no zero padding of the
// exponent) under 1e-6 and from 1e21 on. NaN and infinities are refused.
func appendJSONFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if n := len(dst); format == 'e' && n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1] // e-07 → e-7
		dst = dst[:n-1]
	}
	return dst, true
}

// decodeAny decodes data as json.Unmarshal decodes into an any: objects
// as map[string]any (a repeated name keeps its last value), arrays as
// []any, numbers as float64, strings with invalid UTF-8 and lone
// surrogates each made U+FFFD. ok is false exactly where Unmarshal fails:
// invalid JSON ([jsonsyntax.Valid], nesting bound included) or a number
// out of float64's range. FuzzDecodeAny holds it to json.Unmarshal; the
// build decodes every distinct input schema with it, at two thirds of
// Unmarshal's time (BenchmarkDecodeSchemas).
func decodeAny(data []byte) (v any, ok bool) {
	if !jsonsyntax.Valid(data) {
		return nil, false
	}
	d := anyDecoder{data: data, ok: true}
	v = d.value()
	return v, d.ok
}

// anyDecoder decodes JSON that [jsonsyntax.Valid] has accepted, so it
// checks no syntax.
type anyDecoder struct {
	data []byte
	pos  int
	ok   bool // false once a number is out of range
}

func (d *anyDecoder) value() any {
	d.pos = jsonsyntax.Space(d.data, d.pos)
	switch d.data[d.pos] {
	case '{':
		m := make(map[string]any)
		d.pos = jsonsyntax.Space(d.data, d.pos+1)
		for d.data[d.pos] != '}' {
			k := d.string()
			d.pos = jsonsyntax.Space(d.data, d.pos) + 1 // the colon
			m[k] = d.value()
			if d.pos = jsonsyntax.Space(d.data, d.pos); d.data[d.pos] == ',' {
				d.pos = jsonsyntax.Space(d.data, d.pos+1)
			}
		}
		d.pos++
		return m
	case '[':
		a := make([]any, 0)
		d.pos = jsonsyntax.Space(d.data, d.pos+1)
		for d.data[d.pos] != ']' {
			a = append(a, d.value())
			if d.pos = jsonsyntax.Space(d.data, d.pos); d.data[d.pos] == ',' {
				d.pos++
			}
		}
		d.pos++
		return a
	case '"':
		return d.string()
	case 't':
		d.pos += len("true")
		return true
	case 'f':
		d.pos += len("false")
		return false
	case 'n':
		d.pos += len("null")
		return nil
	}
	end, _ := jsonsyntax.Number(d.data, d.pos)
	// ParseFloat keeps its argument only in an error, which is dropped.
	f, err := strconv.ParseFloat(unsafe.String(&d.data[d.pos], end-d.pos), 64)
	if err != nil {
		d.ok = false
	}
	d.pos = end
	return f
}

// string decodes the string whose quote is at d.pos, as encoding/json's
// unquote does.
func (d *anyDecoder) string() string {
	start := d.pos + 1
	i := start
	ascii := true
	for d.data[i] != '"' && d.data[i] != '\\' {
		ascii = ascii && d.data[i] < utf8.RuneSelf
		i++
	}
	if d.data[i] == '"' && (ascii || utf8.Valid(d.data[start:i])) {
		d.pos = i + 1
		return string(d.data[start:i])
	}
	b := make([]byte, 0, i-start+16)
	for r := start; ; {
		switch c := d.data[r]; {
		case c == '"':
			d.pos = r + 1
			return string(b)
		case c == '\\' && d.data[r+1] == 'u':
			rr, _ := jsonsyntax.Hex4(d.data, r+2)
			r += 6
			if utf16.IsSurrogate(rr) {
				rr1 := rune(-1)
				if d.data[r] == '\\' && d.data[r+1] == 'u' {
					rr1, _ = jsonsyntax.Hex4(d.data, r+2)
				}
				if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
					b = utf8.AppendRune(b, dec) // a pair: both consumed
					r += 6
					continue
				}
				rr = utf8.RuneError
			}
			b = utf8.AppendRune(b, rr)
		case c == '\\':
			e, _ := jsonsyntax.Escape(d.data[r+1])
			b = append(b, e)
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(d.data[r:])
			b = utf8.AppendRune(b, rr) // invalid UTF-8: U+FFFD a byte
			r += size
		}
	}
}
