package jsonschema

import (
	"errors"
	"unicode/utf8"

	sj "github.com/santhosh-tekuri/jsonschema/v6"
)

// formats replaces the library's checks where they disagree with the
// grammars package (grammar/format.go), whose grammars a model writes
// under: a value written under such a grammar must pass the gateway.
var formats = []*sj.Format{
	{Name: "uri-template", Validate: validateURITemplate},
}

// validateURITemplate checks RFC 6570 (level 4) syntax: literals and
// {expressions} with an optional operator and varspecs. The library's
// own check parses the template as a URL and refuses valid templates such
// as "{#var}", "{/var}" and "{v:1000}".
func validateURITemplate(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if !uriTemplate(s) {
		return errors.New("not a valid RFC 6570 URI template")
	}
	return nil
}

func uriTemplate(s string) bool {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '{':
			n := expression(s[i:])
			if n == 0 {
				return false
			}
			i += n
		case c == '%':
			if !pctEncoded(s[i:]) {
				return false
			}
			i += 3
		case c < utf8.RuneSelf:
			if !templateLiteral(c) {
				return false
			}
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError || !(r >= 0xA0 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000) {
				return false
			}
			i += n
		}
	}
	return true
}

// templateLiteral reports whether an ASCII byte may stand for itself in a
// template: RFC 6570's literals, %x21 / %x23-24 / %x26 / %x28-3B / %x3D /
// %x3F-5B / %x5D / %x5F / %x61-7A / %x7E, and the apostrophe (%x27), which
// JSON-Schema-Test-Suite holds valid.
func templateLiteral(c byte) bool {
	switch {
	case c == 0x21, c == 0x23, c == 0x24, c >= 0x26 && c <= 0x3B, c == 0x3D,
		c >= 0x3F && c <= 0x5B, c == 0x5D, c == 0x5F, c >= 0x61 && c <= 0x7A, c == 0x7E:
		return true
	}
	return false
}

func pctEncoded(s string) bool {
	return len(s) >= 3 && s[0] == '%' && isHex(s[1]) && isHex(s[2])
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' || c >= 'a' && c <= 'f'
}

// expression returns the length of the {expression} at the start of s,
// or 0 when there is none.
func expression(s string) int {
	i := 1
	if i < len(s) {
		switch s[i] {
		case '+', '#', '.', '/', ';', '?', '&', '=', ',', '!', '@', '|':
			i++
		}
	}
	for {
		n := varspec(s[i:])
		if n == 0 {
			return 0
		}
		i += n
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		if i < len(s) && s[i] == '}' {
			return i + 1
		}
		return 0
	}
}

// varspec returns the length of varname [ ":" max-length | "*" ] at the
// start of s, or 0.
func varspec(s string) int {
	i, prevDot := 0, true
	for i < len(s) {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_':
			i++
		case c == '%' && pctEncoded(s[i:]):
			i += 3
		case c == '.' && !prevDot:
			i++
			prevDot = true
			continue
		default:
			goto name
		}
		prevDot = false
	}
name:
	if i == 0 || prevDot {
		return 0
	}
	if i < len(s) && s[i] == '*' {
		return i + 1
	}
	if i < len(s) && s[i] == ':' {
		j := i + 1
		if j >= len(s) || s[j] < '1' || s[j] > '9' {
			return 0
		}
		j++
		for k := 0; k < 3 && j < len(s) && s[j] >= '0' && s[j] <= '9'; k++ {
			j++
		}
		return j
	}
	return i
}
