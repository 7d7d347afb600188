package gbnf

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Parse reads a GBNF grammar in llama.cpp's syntax (see the file comment of
// gbnf.go for the language) and checks it the way llama.cpp does when it
// loads a grammar: every referenced rule is defined, root exists, no left
// recursion. It also refuses the grammars llama.cpp crashes or hangs on.
// Every error is a *[ParseError] with the position of the problem.
func Parse(src string) (*Grammar, error) {
	p := &gbnfParser{src: src}
	if i := strings.IndexByte(src, 0); i >= 0 {
		return nil, p.errAt(i, ErrSyntax, "NUL byte in grammar (llama.cpp would stop reading here)")
	}
	if err := p.parse(); err != nil {
		return nil, err
	}
	g := &Grammar{}
	index := map[string]int{}
	for _, r := range p.defs {
		if i, ok := index[r.Name]; ok {
			g.Rules[i] = r // a later definition replaces an earlier one, as in llama.cpp
			continue
		}
		index[r.Name] = len(g.Rules)
		g.Rules = append(g.Rules, r)
	}
	prog, err := gbnfCompile(p.defs, p)
	if err != nil {
		return nil, err
	}
	g.prog = prog
	return g, nil
}

// gbnfParser is a recursive-descent copy of llama_grammar_parser. Its
// methods return the position after what they read, like the C++ code, and
// errors carry llama.cpp's messages.
type gbnfParser struct {
	src string
	// defs holds every rule definition in source order, including those a
	// later definition of the same name replaces: llama.cpp still checks
	// the groups and repetitions inside them.
	defs   []*Rule
	defPos []int // byte offset of each definition's name
	refPos []int // byte offset of each Ref, in source order
	depth  int   // nesting of groups
}

// gbnfMaxNesting bounds the nesting of groups and of repetition operators
// applied to one another, so that the recursive parser, compiler and
// matcher stay within a sane stack depth (llama.cpp recurses without a
// bound and overflows its stack).
const gbnfMaxNesting = 1000

// wrap applies a repetition to the last element of seq.
func (p *gbnfParser) wrap(seq Seq, pos, min, max int) error {
	depth := 0
	for e := seq[len(seq)-1]; ; depth++ {
		r, ok := e.(Repeat)
		if !ok {
			break
		}
		e = r.Expr
	}
	if depth >= gbnfMaxNesting {
		return p.syntax(pos, "repetitions applied more than "+strconv.Itoa(gbnfMaxNesting)+" times in a row")
	}
	seq[len(seq)-1] = Repeat{Expr: seq[len(seq)-1], Min: min, Max: max}
	return nil
}

func (p *gbnfParser) errAt(off int, class error, msg string) *ParseError {
	line, col := 1, 1
	for i := 0; i < off && i < len(p.src); i++ {
		if p.src[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &ParseError{Offset: off, Line: line, Col: col, Msg: msg, Err: class}
}

func (p *gbnfParser) syntax(off int, msg string) *ParseError {
	return p.errAt(off, ErrSyntax, msg)
}

// at returns the byte at i, or 0 past the end (the C string terminator).
func (p *gbnfParser) at(i int) byte {
	if i < len(p.src) {
		return p.src[i]
	}
	return 0
}

func gbnfIsWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || '0' <= c && c <= '9'
}

func gbnfIsDigit(c byte) bool { return '0' <= c && c <= '9' }

func (p *gbnfParser) space(pos int, newlineOK bool) int {
	for pos < len(p.src) {
		c := p.src[pos]
		switch {
		case c == ' ' || c == '\t' || newlineOK && (c == '\r' || c == '\n'):
			pos++
		case c == '#':
			for pos < len(p.src) && p.src[pos] != '\r' && p.src[pos] != '\n' {
				pos++
			}
		default:
			return pos
		}
	}
	return pos
}

func (p *gbnfParser) name(pos int) (int, error) {
	end := pos
	for end < len(p.src) && gbnfIsWordChar(p.src[end]) {
		end++
	}
	if end == pos {
		if strings.HasPrefix(p.src[pos:], "\uFEFF") {
			// Invisible in an editor: "expecting name" alone points at nothing.
			return pos, p.syntax(pos, "expecting name, found a UTF-8 byte order mark (U+FEFF), which llama.cpp does not skip")
		}
		return pos, p.syntax(pos, "expecting name")
	}
	return end, nil
}

func (p *gbnfParser) parse() error {
	pos := p.space(0, true)
	for pos < len(p.src) {
		var err error
		if pos, err = p.rule(pos); err != nil {
			return err
		}
	}
	return nil
}

func (p *gbnfParser) rule(start int) (int, error) {
	nameEnd, err := p.name(start)
	if err != nil {
		return 0, err
	}
	r := &Rule{Name: p.src[start:nameEnd]}
	pos := p.space(nameEnd, false)
	if !strings.HasPrefix(p.src[pos:], "::=") {
		return 0, p.syntax(pos, "expecting ::=")
	}
	pos = p.space(pos+3, true)
	if r.Alts, pos, err = p.alternates(pos, false); err != nil {
		return 0, err
	}
	switch p.at(pos) {
	case '\r':
		pos++
		if p.at(pos) == '\n' {
			pos++
		}
	case '\n':
		pos++
	case 0:
		if pos < len(p.src) {
			return 0, p.syntax(pos, "expecting newline or end")
		}
	default:
		return 0, p.syntax(pos, "expecting newline or end")
	}
	p.defs = append(p.defs, r)
	p.defPos = append(p.defPos, start)
	return p.space(pos, true), nil
}

func (p *gbnfParser) alternates(pos int, nested bool) ([]Seq, int, error) {
	var alts []Seq
	for {
		seq, next, err := p.sequence(pos, nested)
		if err != nil {
			return nil, 0, err
		}
		alts = append(alts, seq)
		if p.at(next) != '|' {
			return alts, next, nil
		}
		pos = p.space(next+1, true)
	}
}

// sequence reads the elements of one alternative. lastEmpty mirrors
// llama.cpp's last_sym_start == rule.size(): the previous element produced
// no grammar elements ("", [], x{0}), or there is none, so a repetition
// operator has nothing to apply to.
func (p *gbnfParser) sequence(pos int, nested bool) (Seq, int, error) {
	seq := Seq{}
	lastEmpty := true
	for pos < len(p.src) {
		c := p.src[pos]
		switch {
		case c == '"':
			start := pos
			pos++
			var chars []rune
			for p.at(pos) != '"' {
				r, next, err := p.charIn(start, pos, "literal")
				if err != nil {
					return nil, 0, err
				}
				chars = append(chars, r)
				pos = next
			}
			pos = p.space(pos+1, nested)
			lastEmpty = len(chars) == 0
			if !lastEmpty {
				seq = append(seq, Literal{Chars: chars})
			}
		case c == '[':
			start := pos
			pos++
			cl := Class{}
			if p.at(pos) == '^' {
				cl.Negated = true
				pos++
			}
			for p.at(pos) != ']' {
				lo, next, err := p.charIn(start, pos, "class")
				if err != nil {
					return nil, 0, err
				}
				pos = next
				hi := lo
				if p.at(pos) == '-' && p.at(pos+1) != ']' {
					if hi, pos, err = p.charIn(start, pos+1, "class"); err != nil {
						return nil, 0, err
					}
				}
				cl.Ranges = append(cl.Ranges, CharRange{Lo: lo, Hi: hi})
			}
			pos = p.space(pos+1, nested)
			lastEmpty = len(cl.Ranges) == 0
			if !lastEmpty {
				seq = append(seq, cl)
			}
		case c == '<' || c == '!':
			tok, next, err := p.token(pos)
			if err != nil {
				return nil, 0, err
			}
			seq = append(seq, tok)
			lastEmpty = false
			pos = p.space(next, nested)
		case gbnfIsWordChar(c):
			end, err := p.name(pos)
			if err != nil {
				return nil, 0, err
			}
			seq = append(seq, Ref{Name: p.src[pos:end]})
			p.refPos = append(p.refPos, pos)
			lastEmpty = false
			pos = p.space(end, nested)
		case c == '(':
			if p.depth++; p.depth > gbnfMaxNesting {
				return nil, 0, p.syntax(pos, "groups nested more than "+strconv.Itoa(gbnfMaxNesting)+" deep")
			}
			alts, next, err := p.alternates(p.space(pos+1, true), true)
			p.depth--
			if err != nil {
				return nil, 0, err
			}
			if p.at(next) != ')' || next >= len(p.src) {
				return nil, 0, p.syntax(next, "expecting ')'")
			}
			seq = append(seq, Group{Alts: alts})
			lastEmpty = false
			pos = p.space(next+1, nested)
		case c == '.':
			seq = append(seq, Any{})
			lastEmpty = false
			pos = p.space(pos+1, nested)
		case c == '*' || c == '+' || c == '?':
			pos = p.space(pos+1, nested)
			min, max := 0, Unbounded
			switch c {
			case '+':
				min = 1
			case '?':
				max = 1
			}
			if lastEmpty {
				return nil, 0, p.syntax(pos, "expecting preceding item to */+/?/{")
			}
			if err := p.wrap(seq, pos, min, max); err != nil {
				return nil, 0, err
			}
		case c == '{':
			brace := pos
			min, max, next, err := p.counts(pos, nested)
			if err != nil {
				return nil, 0, err
			}
			pos = next
			if min > MaxRepetition || max > MaxRepetition {
				return nil, 0, p.errAt(brace, ErrRepetition, "number of repetitions exceeds sane defaults, please reduce the number of repetitions")
			}
			if lastEmpty {
				return nil, 0, p.syntax(pos, "expecting preceding item to */+/?/{")
			}
			if max != Unbounded && max < min {
				return nil, 0, p.errAt(brace, ErrRepetition, "repetition {"+strconv.Itoa(min)+","+strconv.Itoa(max)+"} has a maximum below its minimum (llama.cpp would expand it until memory runs out)")
			}
			if err := p.wrap(seq, pos, min, max); err != nil {
				return nil, 0, err
			}
			if max == 0 {
				lastEmpty = true // llama.cpp removes x{0} from the rule
			}
		default:
			return seq, pos, nil
		}
	}
	return seq, pos, nil
}

// counts reads {m}, {m,} or {m,n} starting at the '{'.
func (p *gbnfParser) counts(pos int, nested bool) (min, max, next int, err error) {
	pos = p.space(pos+1, nested)
	if !gbnfIsDigit(p.at(pos)) {
		return 0, 0, 0, p.syntax(pos, "expecting an int")
	}
	min, pos = p.integer(pos)
	pos = p.space(pos, nested)
	switch p.at(pos) {
	case '}':
		return min, min, p.space(pos+1, nested), nil
	case ',':
		pos = p.space(pos+1, nested)
		max = Unbounded
		if gbnfIsDigit(p.at(pos)) {
			max, pos = p.integer(pos)
			pos = p.space(pos, nested)
		}
		if p.at(pos) != '}' || pos >= len(p.src) {
			return 0, 0, 0, p.syntax(pos, "expecting '}'")
		}
		return min, max, p.space(pos+1, nested), nil
	default:
		return 0, 0, 0, p.syntax(pos, "expecting ','")
	}
}

// integer reads a run of digits; values past [MaxRepetition] stop growing
// there (llama.cpp refuses them either way), so no run of digits
// overflows an int, of 32 bits or 64.
func (p *gbnfParser) integer(pos int) (int, int) {
	v := 0
	for gbnfIsDigit(p.at(pos)) && pos < len(p.src) {
		if v <= MaxRepetition {
			v = v*10 + int(p.src[pos]-'0')
		}
		pos++
	}
	return v, pos
}

func (p *gbnfParser) token(pos int) (Token, int, error) {
	var t Token
	start := pos
	if p.src[pos] == '!' {
		t.Negated = true
		pos++
	}
	if p.at(pos) != '<' || pos >= len(p.src) {
		return t, 0, p.syntax(pos, "expecting '<'")
	}
	pos++
	if p.at(pos) != '[' {
		return t, 0, p.syntax(start+gbnfBoolInt(t.Negated), "no vocab to parse token")
	}
	pos++
	if !gbnfIsDigit(p.at(pos)) {
		return t, 0, p.syntax(pos, "expecting integer")
	}
	end := pos
	for gbnfIsDigit(p.at(end)) && end < len(p.src) {
		end++
	}
	id, err := strconv.ParseUint(p.src[pos:end], 10, 32)
	if err != nil {
		return t, 0, p.syntax(pos, "token id out of range")
	}
	t.ID = uint32(id)
	pos = end
	if p.at(pos) != ']' || pos >= len(p.src) {
		return t, 0, p.syntax(pos, "expecting ']'")
	}
	pos++
	if p.at(pos) != '>' || pos >= len(p.src) {
		return t, 0, p.syntax(pos, "expecting '>'")
	}
	return t, pos + 1, nil
}

func gbnfBoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// charIn is char at pos inside the literal or class (what) that opens at
// open; the input ending first is an unterminated what.
func (p *gbnfParser) charIn(open, pos int, what string) (rune, int, error) {
	if pos >= len(p.src) {
		return 0, 0, p.syntax(open, "unexpected end of input (unterminated "+what+")")
	}
	return p.char(pos)
}

// char reads one character of a literal or class: an escape or one UTF-8
// encoded code point.
func (p *gbnfParser) char(pos int) (rune, int, error) {
	if p.src[pos] == '\\' {
		switch p.at(pos + 1) {
		case 'x':
			return p.hex(pos+2, 2)
		case 'u':
			return p.hex(pos+2, 4)
		case 'U':
			return p.hex(pos+2, 8)
		case 't':
			return '\t', pos + 2, nil
		case 'r':
			return '\r', pos + 2, nil
		case 'n':
			return '\n', pos + 2, nil
		case '\\', '"', '[', ']':
			return rune(p.src[pos+1]), pos + 2, nil
		default:
			return 0, 0, p.syntax(pos, "unknown escape")
		}
	}
	r, size := utf8.DecodeRuneInString(p.src[pos:])
	if r == utf8.RuneError && size <= 1 {
		return 0, 0, p.syntax(pos, "invalid UTF-8")
	}
	return r, pos + size, nil
}

func (p *gbnfParser) hex(pos, size int) (rune, int, error) {
	var v uint64
	end := pos
	for ; end < pos+size && end < len(p.src); end++ {
		c := p.src[end]
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | uint64(c-'A'+10)
		default:
			return 0, 0, p.syntax(pos, "expecting "+strconv.Itoa(size)+" hex chars")
		}
	}
	if end != pos+size {
		return 0, 0, p.syntax(pos, "expecting "+strconv.Itoa(size)+" hex chars")
	}
	if v > utf8.MaxRune {
		return 0, 0, p.syntax(pos-2, "code point above U+10FFFF")
	}
	return rune(v), end, nil
}
