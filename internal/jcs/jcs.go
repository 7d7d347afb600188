// Package jcs implements the JSON Canonicalization Scheme of RFC 8785: one
// byte sequence per JSON value, so that equal arguments hash equally.
//
// Objects have their members sorted by the UTF-16 code units of their
// names; numbers are serialized as ECMAScript's Number.prototype.toString
// serializes an IEEE 754 double (shortest round-trip digits, exponent from
// 1e21 up and below 1e-6); strings escape only what RFC 8785 escapes; there
// is no whitespace. Input is parsed strictly, as I-JSON (RFC 7493) asks:
// duplicate member names, invalid UTF-8, lone surrogate escapes and numbers
// outside the double range are errors, never silently rewritten.
package jcs

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/jsonsyntax"
)

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("jcs: invalid JSON")

// SyntaxError is a parse error: where in the input it was found and what.
// It wraps [ErrSyntax].
type SyntaxError struct {
	// Offset is the byte offset in the input at which parsing stopped.
	Offset int
	// Msg says what is wrong ("duplicate member name \"a\"").
	Msg string
	// Duplicate reports a member name given twice in one object (Msg then
	// names the member, which a caller may have to keep secret: a token).
	Duplicate bool
}

// Error reads "jcs: invalid JSON: offset N: msg".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%v: offset %d: %s", ErrSyntax, e.Offset, e.Msg)
}

// Unwrap returns [ErrSyntax].
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Describe says what is wrong with the input of a failed [Parse] in words
// a client may read ("at offset 16: duplicate member name \"step\""):
// the place and the reason of a [*SyntaxError], none of this package's
// error text; "" for any other error.
func Describe(err error) string {
	var se *SyntaxError
	if !errors.As(err, &se) {
		return ""
	}
	return fmt.Sprintf("at offset %d: %s", se.Offset, se.Msg)
}

// ErrUnsupported is wrapped when a value cannot be canonicalized (NaN,
// infinities, numbers out of range, Go types outside the JSON data model).
var ErrUnsupported = errors.New("jcs: value not canonicalizable")

// MaxDepth bounds the nesting of arrays and objects [Parse] accepts.
const MaxDepth = 512

// Canonicalize parses data strictly and returns its RFC 8785 form.
func Canonicalize(data []byte) ([]byte, error) {
	v, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return Append(make([]byte, 0, len(data)), v)
}

// Parse decodes one JSON value strictly into the tree [Append] serializes:
// map[string]any, []any, string, [json.Number], bool and nil. Numbers keep
// their text as [json.Number] so a validator can still check them exactly.
func Parse(data []byte) (any, error) {
	p := parser{data: data}
	return p.parse()
}

// Check reports what [Parse] would report about data, the same
// *[SyntaxError] or nil, without building the tree: a caller that only
// needs the strict check (no duplicate member name, valid UTF-8, …) before
// decoding with encoding/json allocates little beyond the names of
// members that have escapes.
func Check(data []byte) error {
	p := parser{data: data, check: true}
	_, err := p.parse()
	return err
}

// CheckMembers reports what [Check] reports about data and, while data
// is valid so far and its value is an object, calls member with each of
// the object's members in order: the name, decoded (a slice of data, or
// of a copy where it has escapes), and the value's bytes as written (a
// slice of data, without the space around it). Both are valid only
// during the call. An error from member stops the check and is returned
// as it is. For a decoder that wants one strict pass over a JSON object
// instead of a check and a decode.
func CheckMembers(data []byte, member func(name, value []byte) error) error {
	p := parser{data: data, check: true, onMember: member}
	_, err := p.parse()
	return err
}

func (p *parser) parse() (any, error) {
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.errorf("trailing data")
	}
	return v, nil
}

// parser reads data from pos; with check set it builds no value (every
// value it returns is nil) and keeps of each object only its member names.
type parser struct {
	data  []byte
	pos   int
	check bool
	// onMember, when not nil, gets the top-level object's members
	// ([CheckMembers]); check is set.
	onMember func(name, value []byte) error
}

func (p *parser) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) skipSpace() { p.pos = jsonsyntax.Space(p.data, p.pos) }

func (p *parser) value(depth int) (any, error) {
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	case p.literal("null"):
		return nil, nil
	default:
		return nil, p.errorf("unexpected %s", jsonsyntax.Describe(p.data, p.pos))
	}
}

func (p *parser) literal(word string) bool {
	if len(p.data)-p.pos >= len(word) && string(p.data[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *parser) object(depth int) (any, error) {
	if p.check {
		return nil, p.checkObject(depth)
	}
	obj := map[string]any{}
	err := p.container(depth, '}', "object", func() error {
		name, err := p.name()
		if err != nil {
			return err
		}
		if _, dup := obj[string(name)]; dup {
			return p.duplicate(name)
		}
		v, err := p.member(depth)
		if err != nil {
			return err
		}
		obj[string(name)] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return obj, nil
}

// checkObject is object for Check: the names seen are kept as slices of
// the input where they have no escape, compared one by one while there
// are few of them and through a set beyond.
func (p *parser) checkObject(depth int) error {
	var (
		names [16][]byte
		n     int
		set   map[string]struct{}
	)
	return p.container(depth, '}', "object", func() error {
		name, err := p.name()
		if err != nil {
			return err
		}
		switch {
		case set != nil:
			if _, dup := set[string(name)]; dup {
				return p.duplicate(name)
			}
			set[string(name)] = struct{}{}
		default:
			for _, seen := range names[:n] {
				if string(seen) == string(name) {
					return p.duplicate(name)
				}
			}
			if n < len(names) {
				names[n], n = name, n+1
				break
			}
			set = make(map[string]struct{}, 2*len(names))
			for _, seen := range names {
				set[string(seen)] = struct{}{}
			}
			set[string(name)] = struct{}{}
		}
		if p.onMember == nil || depth != 1 {
			_, err = p.member(depth)
			return err
		}
		start := p.pos
		if _, err = p.member(depth); err != nil {
			return err
		}
		value := p.data[start:p.pos]
		value = value[jsonsyntax.Space(value, jsonsyntax.Space(value, 0)+1):] // past ':' and the space around it
		return p.onMember(name, value)
	})
}

// name reads a member name, at p.pos, as rawString does.
func (p *parser) name() ([]byte, error) {
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return nil, p.errorf("expected a member name")
	}
	return p.rawString()
}

func (p *parser) duplicate(name []byte) error {
	return &SyntaxError{Offset: p.pos, Msg: fmt.Sprintf("duplicate member name %q", name), Duplicate: true}
}

// member reads the ':' after a member's name and the member's value.
func (p *parser) member(depth int) (any, error) {
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != ':' {
		return nil, p.errorf("expected ':'")
	}
	p.pos++
	p.skipSpace()
	return p.value(depth)
}

func (p *parser) array(depth int) (any, error) {
	if p.check {
		return nil, p.container(depth, ']', "array", func() error {
			_, err := p.value(depth)
			return err
		})
	}
	arr := []any{}
	err := p.container(depth, ']', "array", func() error {
		v, err := p.value(depth)
		if err != nil {
			return err
		}
		arr = append(arr, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return arr, nil
}

// container parses the object or array (what) whose opening bracket is
// at p.pos, at nesting depth, through its closing bracket close: element
// reads one member or element, from its first byte.
func (p *parser) container(depth int, close byte, what string, element func() error) error {
	if depth > MaxDepth {
		return p.errorf("nesting deeper than %d", MaxDepth)
	}
	p.pos++ // '{' or '['
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == close {
		p.pos++
		return nil
	}
	for {
		p.skipSpace()
		if err := element(); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return p.errorf("unterminated %s", what)
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case close:
			p.pos++
			return nil
		default:
			return p.errorf("expected ',' or '%c'", close)
		}
	}
}

func (p *parser) number() (any, error) {
	start := p.pos
	end, fault := jsonsyntax.Number(p.data, p.pos)
	p.pos = end
	switch fault {
	case jsonsyntax.NumberInt:
		return nil, p.errorf("invalid number")
	case jsonsyntax.NumberFraction:
		return nil, p.errorf("invalid number: digit expected after '.'")
	case jsonsyntax.NumberExponent:
		return nil, p.errorf("invalid number: digit expected in exponent")
	}
	if p.check {
		return nil, nil
	}
	return json.Number(p.data[start:end]), nil
}

func (p *parser) string() (any, error) {
	b, err := p.rawString()
	if err != nil || p.check {
		return nil, err
	}
	return string(b), nil
}

// rawString reads the string at p.pos and returns its value: a slice of
// the input when it has no escape, else a decoded copy.
func (p *parser) rawString() ([]byte, error) {
	p.pos++ // opening quote
	d := p.data
	start := p.pos
	// Fast path: no escapes.
	for p.pos < len(d) {
		c := d[p.pos]
		if c == '"' {
			s := d[start:p.pos]
			if !utf8.Valid(s) {
				return nil, p.errorf("invalid UTF-8 in string")
			}
			p.pos++
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.pos++
	}
	buf := append([]byte(nil), d[start:p.pos]...)
	for p.pos < len(d) {
		c := d[p.pos]
		switch {
		case c == '"':
			if !utf8.Valid(buf) {
				return nil, p.errorf("invalid UTF-8 in string")
			}
			p.pos++
			return buf, nil
		case c < 0x20:
			return nil, p.errorf("control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		p.pos++
		if p.pos >= len(d) {
			break
		}
		e := d[p.pos]
		p.pos++
		if c, ok := jsonsyntax.Escape(e); ok {
			buf = append(buf, c)
			continue
		}
		switch e {
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || len(d)-p.pos < 6 || d[p.pos] != '\\' || d[p.pos+1] != 'u' {
					return nil, p.errorf("lone surrogate \\u%04x", r)
				}
				p.pos += 2
				r2, err := p.hex4()
				if err != nil {
					return nil, err
				}
				if r2 < 0xDC00 || r2 > 0xDFFF {
					return nil, p.errorf("lone surrogate \\u%04x", r)
				}
				r = utf16.DecodeRune(r, r2)
			}
			buf = utf8.AppendRune(buf, r)
		default:
			if e > ' ' && e < 0x7f {
				return nil, p.errorf("invalid escape \\%c", e)
			}
			// A control byte or a byte of a multi-byte character
			// would break the one-line message or show as garbage.
			return nil, p.errorf("invalid escape: '\\' before byte 0x%02x", e)
		}
	}
	return nil, p.errorf("unterminated string")
}

func (p *parser) hex4() (rune, error) {
	if len(p.data)-p.pos < 4 {
		return 0, p.errorf("short \\u escape")
	}
	r, ok := jsonsyntax.Hex4(p.data, p.pos)
	if !ok {
		return 0, p.errorf("invalid \\u escape")
	}
	p.pos += 4
	return r, nil
}

// Append appends the canonical form of v to dst. v is a tree as [Parse]
// returns it; float64, float32, the integer types and [json.RawMessage]
// (canonicalized in turn) are accepted too.
func Append(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if v {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return AppendString(dst, v), nil
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return dst, fmt.Errorf("%w: number %s: %v", ErrUnsupported, v, err)
		}
		return AppendNumber(dst, f)
	case float64:
		return AppendNumber(dst, v)
	case float32:
		return AppendNumber(dst, float64(v))
	case int:
		return AppendNumber(dst, float64(v))
	case int64:
		return AppendNumber(dst, float64(v))
	case json.RawMessage:
		t, err := Parse(v)
		if err != nil {
			return dst, err
		}
		return Append(dst, t)
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = Append(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		names := make([]string, 0, len(v))
		for k := range v {
			names = append(names, k)
		}
		slices.SortFunc(names, CompareUTF16)
		dst = append(dst, '{')
		for i, k := range names {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = Append(dst, v[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	default:
		return dst, fmt.Errorf("%w: Go type %T", ErrUnsupported, v)
	}
}

// CompareUTF16 orders strings by their UTF-16 code units, as RFC 8785
// sorts member names. It differs from Go's byte order only when a
// supplementary-plane rune (UTF-16 surrogates 0xD800–0xDFFF) meets a BMP
// rune at or above U+E000.
func CompareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return cmpUnits(ra, rb)
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	default:
		return 1
	}
}

// cmpUnits compares two different runes by their first UTF-16 code unit,
// then by the second.
func cmpUnits(a, b rune) int {
	ua, ub := firstUnit(a), firstUnit(b)
	if ua != ub {
		if ua < ub {
			return -1
		}
		return 1
	}
	// Same high surrogate: compare the low surrogates, i.e. the runes.
	if a < b {
		return -1
	}
	return 1
}

func firstUnit(r rune) rune {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}

// AppendString appends s as an RFC 8785 string literal: '"' and '\\'
// escaped, \b \t \n \f \r in their short forms, the other control
// characters as \u00xx (lowercase hex), everything else as UTF-8.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendNumber appends f as ECMAScript's Number::toString does (ECMA-262
// §6.1.6.1.20): the shortest digits that round-trip, plain notation for
// 1e-6 <= |f| < 1e21, exponent notation ("1e+21", "1.5e-7") outside it, and
// "0" for both zeros. NaN and infinities are errors.
func AppendNumber(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, fmt.Errorf("%w: %v", ErrUnsupported, f)
	}
	if f == 0 {
		return append(dst, '0'), nil
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d[.ddd]e±xx
	var digits [24]byte
	k := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[k] = e[i]
			k++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	n := exp + 1 // the value is 0.digits × 10^n
	ds := digits[:k]
	switch {
	case k <= n && n <= 21:
		dst = append(dst, ds...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, ds[:n]...)
		dst = append(dst, '.')
		dst = append(dst, ds[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, ds...)
	default:
		dst = append(dst, ds[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, ds[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst, nil
}

// Loss is what canonicalization would lose of a JSON number literal: the
// answer of [ParseNumber].
type Loss uint8

// The losses, from none to a literal that is no number.
const (
	// LossNone: the literal's value is a double, kept exactly ("1.50",
	// "15e-1", "-0", "9007199254740992").
	LossNone Loss = iota
	// LossDigits: the literal has more significant digits than a double
	// holds, and canonicalization would round it ("1.00000000000000001",
	// "9007199254740993", "9.007199254740993e15", "4e-324").
	LossDigits
	// LossUnderflow: a literal that is not zero would read as zero
	// ("1e-400").
	LossUnderflow
	// LossOverflow: the literal is beyond a double's range, about
	// ±1.8e308 ("1e400").
	LossOverflow
	// LossSyntax: the text is not a JSON number literal ("0x10", "Inf",
	// "1_0", "+1", "").
	LossSyntax
)

// ParseNumber returns the double nearest to the JSON number literal num
// and what canonicalization would lose of num's value: [LossNone] when
// that double, written as RFC 8785 writes it (shortest round-trip digits),
// is the same decimal number. The double is ±Inf for [LossOverflow] and 0
// for [LossSyntax]. Its cost is linear in len(num).
func ParseNumber(num string) (float64, Loss) {
	if end, fault := jsonsyntax.Number([]byte(num), 0); fault != jsonsyntax.NumberOK || end != len(num) {
		return 0, LossSyntax
	}
	f, err := strconv.ParseFloat(num, 64)
	switch {
	case err != nil:
		// The syntax is JSON's, so the only error left is the range.
		return f, LossOverflow
	case exact(num, f):
		return f, LossNone
	case f == 0:
		return f, LossUnderflow // exact keeps every zero literal
	}
	return f, LossDigits
}

// exact reports whether f, the double ParseFloat reads from the JSON
// number literal num, is the same decimal number as num.
func exact(num string, f float64) bool {
	if len(num) <= 15 && strings.Trim(num, "-.0123456789") == "" {
		// At most 15 digits in plain notation: at most 15 significant
		// digits, at least 1e-14 unless zero.
		return true
	}
	neg, digits, exp, ok := decimal(num)
	if !ok {
		return false
	}
	if f == 0 {
		return digits == ""
	}
	if len(digits) <= 15 && exp > -290 && exp < 300 {
		// At most 15 significant digits, away from the subnormals: the
		// double keeps every such decimal (DBL_DIG is 15).
		return true
	}
	var buf [32]byte
	cneg, cdigits, cexp, _ := decimal(string(strconv.AppendFloat(buf[:0], f, 'e', -1, 64)))
	return neg == cneg && digits == cdigits && exp == cexp
}

// decimal splits a number literal into its sign, its significant digits
// (no leading or trailing zeros; "" for zero) and the exponent n of
// 0.digits × 10^n. ok is false for a malformed literal or an exponent
// beyond ±10^9 (the caller has already seen ParseFloat accept it, so such
// an exponent means an underflow or an overflow).
func decimal(s string) (neg bool, digits string, exp int, ok bool) {
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mant, e, hasExp := strings.Cut(s, "e")
	if !hasExp {
		mant, e, hasExp = strings.Cut(s, "E")
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	all := intPart + frac
	if strings.Trim(all, "0") == "" {
		return neg, "", 0, all != ""
	}
	exp = len(intPart)
	if hasExp {
		sign := ""
		if e != "" && (e[0] == '+' || e[0] == '-') {
			sign, e = e[:1], e[1:]
		}
		e = strings.TrimLeft(e, "0")
		if len(e) > 10 {
			return false, "", 0, false
		}
		if e == "" {
			e = "0"
		}
		n, err := strconv.Atoi(sign + e)
		if err != nil || n > 1e9 || n < -1e9 {
			return false, "", 0, false
		}
		exp += n
	}
	i := 0
	for i < len(all) && all[i] == '0' {
		i++
	}
	exp -= i
	return neg, strings.TrimRight(all[i:], "0"), exp, true
}
