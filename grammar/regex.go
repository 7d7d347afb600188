package grammar

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/toolgate/toolgate/grammar/internal/charclass"
)

// This file translates the ECMA-262 regular expressions of JSON Schema's
// `pattern` keyword into grammar nodes over the characters of a JSON
// string. The translation is exact for the regular part of the language
// (literals, classes, \d \w \s and their negations, `.`, groups,
// alternation, greedy and lazy quantifiers, counted repetition, anchors at
// the ends); what a context-free grammar cannot express, lookaround,
// backreferences and word boundaries, is approximated by a superset and
// reported.

// rxKind is the kind of a parsed regular-expression node.
type rxKind uint8

const (
	rxSet     rxKind = iota // one code point from ranges
	rxCat                   // concatenation
	rxAlt                   // alternation
	rxRep                   // repetition
	rxStart                 // ^
	rxEnd                   // $
	rxEmpty                 // matches empty (also: relaxed assertions)
	rxBackref               // \N or \k<name>
)

type rxNode struct {
	kind     rxKind
	ranges   []crange
	subs     []*rxNode
	min, max int // rxRep: max < 0 is unbounded
	group    int // rxBackref: group number
}

// rxIssue is a construct the translation had to approximate.
type rxIssue struct{ construct, reason string }

// regexError is a pattern that is not a valid ECMA-262 regular expression
// as far as this translator understands it.
type regexError struct {
	pattern string
	pos     int
	msg     string
}

func (e *regexError) Error() string {
	return fmt.Sprintf("pattern %q at offset %d: %s", e.pattern, e.pos, e.msg)
}

type rxParser struct {
	src    []rune
	pos    int
	groups []*rxNode // capturing groups by number-1
	names  map[string]int
	// unnamed counts the pattern's capturing groups without a name
	// (prescanGroups).
	unnamed int
	issues  []rxIssue
	pat     string
	depth   int
}

// parseRegex parses an ECMA-262 pattern.
func parseRegex(pattern string) (*rxNode, *rxParser, error) {
	p := &rxParser{src: []rune(pattern), pat: pattern}
	p.prescanGroups()
	n, err := p.alternation()
	if err != nil {
		return nil, nil, err
	}
	if p.pos < len(p.src) {
		return nil, nil, p.fail("unmatched ')'")
	}
	return n, p, nil
}

func (p *rxParser) fail(msg string) error { return &regexError{p.pat, p.pos, msg} }

// prescanGroups records group names, so that \k<name> can refer forward,
// and counts the unnamed groups, so that \9 can.
func (p *rxParser) prescanGroups() {
	n := 0
	for i := 0; i < len(p.src); i++ {
		switch p.src[i] {
		case '\\':
			i++
		case '[':
			for i++; i < len(p.src) && p.src[i] != ']'; i++ {
				if p.src[i] == '\\' {
					i++
				}
			}
		case '(':
			if i+1 < len(p.src) && p.src[i+1] == '?' {
				if i+2 < len(p.src) && p.src[i+2] == '<' && i+3 < len(p.src) && p.src[i+3] != '=' && p.src[i+3] != '!' {
					n++
					end := i + 3
					for end < len(p.src) && p.src[end] != '>' {
						end++
					}
					if p.names == nil {
						p.names = map[string]int{}
					}
					p.names[string(p.src[i+3:end])] = n
				}
				continue
			}
			n++
			p.unnamed++
		}
	}
}

func (p *rxParser) more() bool { return p.pos < len(p.src) }
func (p *rxParser) peek() rune { return p.src[p.pos] }
func (p *rxParser) eat(r rune) bool {
	if p.more() && p.peek() == r {
		p.pos++
		return true
	}
	return false
}

func (p *rxParser) alternation() (*rxNode, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 200 {
		return nil, p.fail("nested too deeply")
	}
	var alts []*rxNode
	for {
		c, err := p.concat()
		if err != nil {
			return nil, err
		}
		alts = append(alts, c)
		if !p.eat('|') {
			break
		}
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &rxNode{kind: rxAlt, subs: alts}, nil
}

func (p *rxParser) concat() (*rxNode, error) {
	var items []*rxNode
	for p.more() && p.peek() != '|' && p.peek() != ')' {
		atom, err := p.atom()
		if err != nil {
			return nil, err
		}
		atom, err = p.quantifier(atom)
		if err != nil {
			return nil, err
		}
		items = append(items, atom)
	}
	if len(items) == 1 {
		return items[0], nil
	}
	return &rxNode{kind: rxCat, subs: items}, nil
}

func (p *rxParser) quantifier(atom *rxNode) (*rxNode, error) {
	for p.more() {
		min, max := -1, -1
		start := p.pos
		switch p.peek() {
		case '*':
			min, max = 0, -1
			p.pos++
		case '+':
			min, max = 1, -1
			p.pos++
		case '?':
			min, max = 0, 1
			p.pos++
		case '{':
			lo, hi, ok := p.braces()
			if !ok {
				return atom, nil // Annex B: a '{' that is no quantifier is a literal
			}
			min, max = lo, hi
		default:
			return atom, nil
		}
		if atom.kind == rxStart || atom.kind == rxEnd {
			p.pos = start
			return nil, p.fail("nothing to repeat")
		}
		p.eat('?') // lazy: same language
		if max >= 0 && max < min {
			return nil, p.fail("numbers out of order in {} quantifier")
		}
		atom = &rxNode{kind: rxRep, subs: []*rxNode{atom}, min: min, max: max}
	}
	return atom, nil
}

// braces parses {n}, {n,} or {n,m} at the current position.
func (p *rxParser) braces() (int, int, bool) {
	save := p.pos
	p.pos++
	lo, ok := p.number()
	if !ok {
		p.pos = save
		return 0, 0, false
	}
	hi := lo
	if p.eat(',') {
		if p.more() && p.peek() == '}' {
			hi = -1
		} else if hi, ok = p.number(); !ok {
			p.pos = save
			return 0, 0, false
		}
	}
	if !p.eat('}') {
		p.pos = save
		return 0, 0, false
	}
	return lo, hi, true
}

func (p *rxParser) number() (int, bool) {
	start := p.pos
	for p.more() && p.peek() >= '0' && p.peek() <= '9' {
		p.pos++
	}
	if p.pos == start {
		return 0, false
	}
	n, err := strconv.Atoi(string(p.src[start:p.pos]))
	if err != nil || n > 1<<30 {
		return 1 << 30, true
	}
	return n, true
}

func (p *rxParser) atom() (*rxNode, error) {
	r := p.peek()
	switch r {
	case '^':
		p.pos++
		return &rxNode{kind: rxStart}, nil
	case '$':
		p.pos++
		return &rxNode{kind: rxEnd}, nil
	case '.':
		p.pos++
		return setNode(charclass.Complement([]crange{{Lo: '\n', Hi: '\n'}, {Lo: '\r', Hi: '\r'}, {Lo: 0x2028, Hi: 0x2029}})), nil
	case '(':
		return p.group()
	case '[':
		return p.class()
	case '\\':
		return p.escape()
	case '*', '+', '?':
		return nil, p.fail("nothing to repeat")
	case '{':
		if _, _, ok := p.braces(); ok {
			return nil, p.fail("nothing to repeat")
		}
	}
	p.pos++
	return setNode([]crange{{Lo: r, Hi: r}}), nil
}

func setNode(rs []crange) *rxNode { return &rxNode{kind: rxSet, ranges: charclass.Normalize(rs)} }

func (p *rxParser) group() (*rxNode, error) {
	p.pos++ // (
	capture := true
	var look string
	if p.eat('?') {
		switch {
		case p.eat(':'):
			capture = false
		case p.eat('='):
			look = "(?="
		case p.eat('!'):
			look = "(?!"
		case p.more() && p.peek() == '<':
			p.pos++
			switch {
			case p.eat('='):
				look = "(?<="
			case p.eat('!'):
				look = "(?<!"
			default:
				for p.more() && p.peek() != '>' {
					p.pos++
				}
				if !p.eat('>') {
					return nil, p.fail("unterminated group name")
				}
			}
		default:
			return nil, p.fail("invalid group")
		}
	}
	var slot int
	if capture && look == "" {
		p.groups = append(p.groups, nil)
		slot = len(p.groups) - 1
	}
	n, err := p.alternation()
	if err != nil {
		return nil, err
	}
	if !p.eat(')') {
		return nil, p.fail("missing ')'")
	}
	if look != "" {
		p.issues = append(p.issues, rxIssue{look + "…)", "lookaround is not expressible in a grammar; treated as always true"})
		return &rxNode{kind: rxEmpty}, nil
	}
	if capture {
		p.groups[slot] = n
	}
	return n, nil
}

// ECMA-262 WhiteSpace and LineTerminator: the set of \s.
var rxSpace = []crange{{Lo: '\t', Hi: '\r'}, {Lo: ' ', Hi: ' '}, {Lo: 0xA0, Hi: 0xA0}, {Lo: 0x1680, Hi: 0x1680}, {Lo: 0x2000, Hi: 0x200A},
	{Lo: 0x2028, Hi: 0x2029}, {Lo: 0x202F, Hi: 0x202F}, {Lo: 0x205F, Hi: 0x205F}, {Lo: 0x3000, Hi: 0x3000}, {Lo: 0xFEFF, Hi: 0xFEFF}}

var (
	rxDigit = []crange{{Lo: '0', Hi: '9'}}
	rxWord  = []crange{{Lo: '0', Hi: '9'}, {Lo: 'A', Hi: 'Z'}, {Lo: '_', Hi: '_'}, {Lo: 'a', Hi: 'z'}}
)

func (p *rxParser) escape() (*rxNode, error) {
	p.pos++ // backslash
	if !p.more() {
		return nil, p.fail("\\ at end of pattern")
	}
	r := p.peek()
	switch r {
	case 'b', 'B':
		p.pos++
		p.issues = append(p.issues, rxIssue{`\` + string(r), "word boundaries are not expressible in a grammar; treated as always true"})
		return &rxNode{kind: rxEmpty}, nil
	case 'k':
		if p.pos+1 < len(p.src) && p.src[p.pos+1] == '<' {
			p.pos += 2
			start := p.pos
			for p.more() && p.peek() != '>' {
				p.pos++
			}
			name := string(p.src[start:p.pos])
			p.eat('>')
			if g, ok := p.names[name]; ok {
				return p.backref(g), nil
			}
			return nil, p.fail("unknown group name " + name)
		}
	}
	if r >= '1' && r <= '9' {
		start := p.pos
		n, _ := p.number()
		if n <= len(p.names)+p.unnamed {
			return p.backref(n), nil
		}
		p.pos = start // Annex B: an octal or identity escape
	}
	rs, err := p.classEscape(false)
	if err != nil {
		return nil, err
	}
	return setNode(rs), nil
}

func (p *rxParser) backref(g int) *rxNode {
	p.issues = append(p.issues, rxIssue{`\` + strconv.Itoa(g), "a backreference is not expressible in a grammar; it matches anything its group matches"})
	return &rxNode{kind: rxBackref, group: g}
}

// classEscape parses the escape after a backslash and returns its set.
func (p *rxParser) classEscape(inClass bool) ([]crange, error) {
	r := p.peek()
	p.pos++
	switch r {
	case 'd':
		return rxDigit, nil
	case 'D':
		return charclass.Complement(rxDigit), nil
	case 'w':
		return rxWord, nil
	case 'W':
		return charclass.Complement(rxWord), nil
	case 's':
		return rxSpace, nil
	case 'S':
		return charclass.Complement(rxSpace), nil
	case 'n':
		return one('\n'), nil
	case 'r':
		return one('\r'), nil
	case 't':
		return one('\t'), nil
	case 'f':
		return one('\f'), nil
	case 'v':
		return one('\v'), nil
	case 'b':
		if inClass {
			return one('\b'), nil
		}
	case '0':
		if !p.more() || p.peek() < '0' || p.peek() > '9' {
			return one(0), nil
		}
		return one(p.octal(0)), nil
	case 'c':
		if p.more() && unicode.IsLetter(p.peek()) && p.peek() < 128 {
			c := p.peek()
			p.pos++
			return one(c % 32), nil
		}
		p.pos--
		return one('\\'), nil
	case 'x':
		if v, ok := p.hex(2); ok {
			return one(v), nil
		}
		return one('x'), nil
	case 'u':
		if p.eat('{') {
			start := p.pos
			for p.more() && p.peek() != '}' {
				p.pos++
			}
			v, err := strconv.ParseUint(string(p.src[start:p.pos]), 16, 32)
			if err != nil || v > unicode.MaxRune || !p.eat('}') {
				return nil, p.fail("invalid \\u{…} escape")
			}
			return one(rune(v)), nil
		}
		if v, ok := p.hex(4); ok {
			if v >= 0xD800 && v <= 0xDBFF && p.pos+5 < len(p.src) && p.src[p.pos] == '\\' && p.src[p.pos+1] == 'u' {
				save := p.pos
				p.pos += 2
				if lo, ok := p.hex(4); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					return one((v-0xD800)<<10 + (lo - 0xDC00) + 0x10000), nil
				}
				p.pos = save
			}
			return one(v), nil
		}
		return one('u'), nil
	case 'p', 'P':
		if p.eat('{') {
			start := p.pos
			for p.more() && p.peek() != '}' {
				p.pos++
			}
			name := string(p.src[start:p.pos])
			if !p.eat('}') {
				return nil, p.fail("unterminated \\p{…}")
			}
			rs, ok := unicodeProperty(name)
			if !ok {
				return nil, p.fail("unknown Unicode property " + name)
			}
			if r == 'P' {
				return charclass.Complement(rs), nil
			}
			return rs, nil
		}
	}
	if r >= '1' && r <= '7' {
		return one(p.octal(r - '0')), nil
	}
	return one(r), nil // identity escape
}

func (p *rxParser) octal(v rune) rune {
	for i := 0; i < 2 && p.more() && p.peek() >= '0' && p.peek() <= '7' && v*8+p.peek()-'0' <= 0377; i++ {
		v = v*8 + p.peek() - '0'
		p.pos++
	}
	return v
}

func (p *rxParser) hex(n int) (rune, bool) {
	if p.pos+n > len(p.src) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.src[p.pos:p.pos+n]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += n
	return rune(v), true
}

func one(r rune) []crange { return []crange{{Lo: r, Hi: r}} }

// unicodeProperty returns the code points of a \p{…} property: a general
// category or a script, by short or long name, or Script=/sc=/gc= forms.
func unicodeProperty(name string) ([]crange, bool) {
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[i+1:]
	}
	long := map[string]string{"Letter": "L", "Lowercase_Letter": "Ll", "Uppercase_Letter": "Lu",
		"Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M",
		"Number": "N", "Decimal_Number": "Nd", "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No",
		"Punctuation": "P", "punct": "P", "Symbol": "S", "Separator": "Z", "Space_Separator": "Zs",
		"Other": "C", "Control": "Cc", "Format": "Cf", "Math_Symbol": "Sm", "Currency_Symbol": "Sc",
		"Dash_Punctuation": "Pd", "Connector_Punctuation": "Pc", "Nonspacing_Mark": "Mn"}
	if s, ok := long[name]; ok {
		name = s
	}
	t, ok := unicode.Categories[name]
	if !ok {
		t, ok = unicode.Scripts[name]
	}
	if !ok {
		switch name {
		case "Any":
			return []crange{{Lo: 0, Hi: unicode.MaxRune}}, true
		case "ASCII":
			return []crange{{Lo: 0, Hi: 0x7F}}, true
		case "Alphabetic", "Alpha":
			t = unicode.L // letters; the Alphabetic property adds some marks and numbers
			ok = true
		case "White_Space", "space":
			t, ok = unicode.White_Space, true
		}
	}
	if !ok {
		return nil, false
	}
	var rs []crange
	for _, r := range t.R16 {
		rs = appendStrided(rs, rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	for _, r := range t.R32 {
		rs = appendStrided(rs, rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	return charclass.Normalize(rs), true
}

// appendStrided appends the code points lo, lo+stride, ... up to hi (a
// [unicode.Range16] or Range32), as one range when stride is 1.
func appendStrided(rs []crange, lo, hi, stride rune) []crange {
	if stride == 1 {
		return append(rs, crange{Lo: lo, Hi: hi})
	}
	for ; lo <= hi; lo += stride {
		rs = append(rs, crange{Lo: lo, Hi: lo})
	}
	return rs
}

func (p *rxParser) class() (*rxNode, error) {
	p.pos++ // [
	neg := p.eat('^')
	var rs []crange
	for {
		if !p.more() {
			return nil, p.fail("missing ']'")
		}
		if p.peek() == ']' {
			p.pos++
			break
		}
		lo, loSet, err := p.classAtom()
		if err != nil {
			return nil, err
		}
		if loSet == nil && p.pos+1 < len(p.src) && p.peek() == '-' && p.src[p.pos+1] != ']' {
			p.pos++
			hi, hiSet, err := p.classAtom()
			if err != nil {
				return nil, err
			}
			if hiSet != nil { // [a-\d]: Annex B treats '-' literally
				rs = append(rs, crange{Lo: lo, Hi: lo}, crange{Lo: '-', Hi: '-'})
				rs = append(rs, hiSet...)
				continue
			}
			if hi < lo {
				return nil, p.fail("range out of order in character class")
			}
			rs = append(rs, crange{Lo: lo, Hi: hi})
			continue
		}
		if loSet != nil {
			rs = append(rs, loSet...)
		} else {
			rs = append(rs, crange{Lo: lo, Hi: lo})
		}
	}
	if neg {
		return setNode(charclass.Complement(rs)), nil
	}
	return setNode(rs), nil
}

// classAtom returns one code point, or a set for \d-style escapes.
func (p *rxParser) classAtom() (rune, []crange, error) {
	r := p.peek()
	if r != '\\' {
		p.pos++
		return r, nil, nil
	}
	p.pos++
	if !p.more() {
		return 0, nil, p.fail("\\ at end of pattern")
	}
	switch p.peek() {
	case 'd', 'D', 'w', 'W', 's', 'S', 'p', 'P':
		if (p.peek() == 'p' || p.peek() == 'P') && (p.pos+1 >= len(p.src) || p.src[p.pos+1] != '{') {
			break
		}
		rs, err := p.classEscape(true)
		return 0, rs, err
	case '-':
		p.pos++
		return '-', nil, nil
	}
	rs, err := p.classEscape(true)
	if err != nil {
		return 0, nil, err
	}
	if len(rs) == 1 && rs[0].Lo == rs[0].Hi {
		return rs[0].Lo, nil, nil
	}
	return 0, rs, nil
}

// regexLength returns the minimum and maximum number of code points a
// node matches (max < 0: unbounded).
func regexLength(n *rxNode, groups []*rxNode) (int, int) {
	switch n.kind {
	case rxSet:
		return 1, 1
	case rxStart, rxEnd, rxEmpty:
		return 0, 0
	case rxBackref:
		if n.group-1 < len(groups) && groups[n.group-1] != nil {
			return 0, -1
		}
		return 0, 0
	case rxCat:
		lo, hi := 0, 0
		for _, s := range n.subs {
			l, h := regexLength(s, groups)
			lo += l
			if hi >= 0 && h >= 0 {
				hi += h
			} else {
				hi = -1
			}
		}
		return lo, hi
	case rxAlt:
		lo, hi := -1, 0
		for _, s := range n.subs {
			l, h := regexLength(s, groups)
			if lo < 0 || l < lo {
				lo = l
			}
			if hi >= 0 && (h < 0 || h > hi) {
				hi = h
			}
		}
		return lo, hi
	case rxRep:
		l, h := regexLength(n.subs[0], groups)
		lo := l * n.min
		hi := -1
		if n.max >= 0 && h >= 0 {
			hi = h * n.max
		}
		return lo, hi
	}
	return 0, -1
}
