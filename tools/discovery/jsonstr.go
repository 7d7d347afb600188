package discovery

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
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
