package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Rune classes for tokenization.
const (
	clSep = iota
	clLower
	clUpper
	clLetter // a letter without case (CJK, Hebrew, ...)
	clDigit
	clMark
	clApos
)

func classify(r rune) int {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z':
			return clLower
		case 'A' <= r && r <= 'Z':
			return clUpper
		case '0' <= r && r <= '9':
			return clDigit
		case r == '\'':
			return clApos
		}
		return clSep
	}
	switch {
	case r == '\u2019':
		return clApos
	case unicode.IsLower(r):
		return clLower
	case unicode.IsUpper(r), unicode.IsTitle(r):
		return clUpper
	case unicode.IsLetter(r):
		return clLetter
	case unicode.IsDigit(r):
		return clDigit
	case unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me):
		return clMark
	}
	return clSep
}

// asciiClass is classify of each ASCII rune, looked up instead of called.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range t {
		t[r] = uint8(classify(rune(r)))
	}
	return t
}()

func isLetterClass(c int) bool { return c == clLower || c == clUpper || c == clLetter }

// langCues counts characters that only one of the supported languages'
// orthographies uses.
type langCues struct {
	pl, es int
}

func (c *langCues) see(r rune) {
	switch r {
	case 'ą', 'ć', 'ę', 'ł', 'ń', 'ś', 'ź', 'ż', 'Ą', 'Ć', 'Ę', 'Ł', 'Ń', 'Ś', 'Ź', 'Ż':
		c.pl++
	case 'ñ', 'Ñ', 'á', 'é', 'í', 'ú', 'ü', 'Á', 'É', 'Í', 'Ú', '¿', '¡':
		c.es++
	}
}

// tokenize appends the folded tokens of text to dst. The tokens are
// substrings of one string: text itself when folding changed nothing,
// otherwise one new string holding the folded text, or with transient
// sc.buf itself, so that they are valid only until sc is reused (see
// sc.own).
func (sc *scratch) tokenize(dst []string, text string, transient bool) ([]string, langCues) {
	var cues langCues
	buf := sc.buf[:0]
	ends := sc.ends[:0]
	tokStart := 0   // offset in buf where the current token starts
	prevStart := -1 // offset in buf where the previous rune's fold starts
	prev, prev2 := clSep, clSep
	endToken := func() {
		if len(buf) > tokStart {
			ends = append(ends, len(buf))
			buf = append(buf, ' ')
		}
		tokStart = len(buf)
	}
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		var cl int
		if r < utf8.RuneSelf {
			cl = int(asciiClass[r])
			if cl == clLower && prev == clLower {
				// The rest of a run of lower-case ASCII letters: each
				// would only be appended, so append the run at once,
				// leaving the state its last letter would.
				j := i + 1
				for j < len(text) && 'a' <= text[j] && text[j] <= 'z' {
					j++
				}
				buf = append(buf, text[i:j]...)
				prevStart = len(buf) - 1
				prev2 = clLower
				i = j
				continue
			}
		} else {
			r, size = utf8.DecodeRuneInString(text[i:])
			cues.see(r)
			cl = classify(r)
		}
		switch cl {
		case clSep:
			endToken()
			prev2, prev = prev, clSep
			i += size
			continue
		case clApos:
			// An apostrophe between letters joins them: "user's", "don't".
			if isLetterClass(prev) && i+size < len(text) {
				nr, _ := utf8.DecodeRuneInString(text[i+size:])
				if isLetterClass(classify(nr)) {
					i += size
					continue
				}
			}
			endToken()
			prev2, prev = prev, clSep
			i += size
			continue
		case clMark:
			if prev == clSep {
				i += size
				continue
			}
			buf = appendFold(buf, r)
			i += size
			continue // a mark belongs to the previous letter's class
		}
		switch {
		case cl == clDigit && prev != clDigit && prev != clSep,
			cl != clDigit && prev == clDigit:
			endToken()
		case cl == clUpper && prev == clLower:
			endToken()
		case cl == clLower && prev == clUpper && prev2 == clUpper && prevStart > tokStart:
			// "HTTPServer": the last capital starts the next word.
			buf = append(buf, 0)
			copy(buf[prevStart+1:], buf[prevStart:len(buf)-1])
			buf[prevStart] = ' '
			ends = append(ends, prevStart)
			tokStart = prevStart + 1
		}
		prevStart = len(buf)
		if r < utf8.RuneSelf {
			// appendFold of an ASCII letter or digit, inline.
			b := byte(r)
			if cl == clUpper {
				b += 'a' - 'A'
			}
			buf = append(buf, b)
		} else {
			buf = appendFold(buf, r)
		}
		prev2, prev = prev, cl
		i += size
	}
	endToken()
	if len(buf) > 0 {
		buf = buf[:len(buf)-1] // the trailing separator
	}
	var s string
	switch {
	case string(buf) == text:
		s = text
	case transient:
		s = unsafe.String(unsafe.SliceData(buf), len(buf))
	default:
		s = string(buf)
	}
	start := 0
	for _, e := range ends {
		dst = append(dst, s[start:e])
		start = e + 1
	}
	sc.buf, sc.ends = buf, ends
	return dst, cues
}

// SplitIdentifier splits an identifier into its folded words: snake_case,
// kebab-case, dotted.names, camelCase and PascalCase, and digit runs.
// SplitIdentifier("getHTTPResponse_v2") is [get http response v 2].
func SplitIdentifier(s string) []string {
	sc := scratchPool.Get().(*scratch)
	out, _ := sc.tokenize(make([]string, 0, 4+strings.Count(s, "_")), s, false)
	scratchPool.Put(sc)
	return out
}

// AppendIdentifier appends the words [SplitIdentifier] returns for s to
// dst, sep between each two, and returns the extended slice:
// strings.Join(SplitIdentifier(s), sep) for a caller that only writes the
// words, without allocating them (nor anything but dst's growth).
func AppendIdentifier(dst []byte, s, sep string) []byte {
	sc := scratchPool.Get().(*scratch)
	toks, _ := sc.tokenize(sc.toks[:0], s, true)
	for i, t := range toks {
		if i > 0 {
			dst = append(dst, sep...)
		}
		dst = append(dst, t...)
	}
	clear(toks)
	sc.toks = toks[:0]
	scratchPool.Put(sc)
	return dst
}

// own makes the strings of ts that point into sc.buf (transient tokens, or
// stems that are prefixes of them) point into one copy of it instead, made
// only when one does: a text whose terms all come from the stem cache
// costs no allocation.
func (sc *scratch) own(ts []string) {
	if len(sc.buf) == 0 {
		return
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(sc.buf)))
	hi := lo + uintptr(len(sc.buf))
	var owned string
	for i, t := range ts {
		p := uintptr(unsafe.Pointer(unsafe.StringData(t)))
		if len(t) == 0 || p < lo || p >= hi {
			continue
		}
		if owned == "" {
			owned = string(sc.buf)
		}
		off := int(p - lo)
		ts[i] = owned[off : off+len(t)]
	}
}
