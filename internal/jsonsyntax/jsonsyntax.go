// Package jsonsyntax is the lexical grammar of JSON (RFC 8259) that the
// module's two JSON parsers share: internal/jcs (strict, I-JSON, for
// canonical arguments) and grammar's schema decoder (one pass, member
// order kept). Each parser keeps its own policy (what an invalid string
// becomes, how errors read); what is written once here is the syntax:
// whitespace, the number grammar and the escapes of a string. [Valid] is
// encoding/json.Valid's answer, for the places that check bytes they keep
// as they are (the registry's schemas, a tool's result, an MCP frame).
//
// The functions take the input and an offset and return offsets; they
// never allocate.
package jsonsyntax

import (
	"fmt"
	"unicode/utf8"
)

// Space returns the offset of the first byte at or after pos that is not
// JSON whitespace (space, tab, line feed, carriage return), or len(data).
func Space(data []byte, pos int) int {
	for pos < len(data) {
		switch data[pos] {
		case ' ', '\t', '\n', '\r':
			pos++
		default:
			return pos
		}
	}
	return pos
}

// NumberFault says which part of a number is missing its digits.
type NumberFault uint8

const (
	// NumberOK: the number is complete.
	NumberOK NumberFault = iota
	// NumberInt: no digit where the integer part starts (after an
	// optional minus).
	NumberInt
	// NumberFraction: no digit after the decimal point.
	NumberFraction
	// NumberExponent: no digit in the exponent (after e or E and an
	// optional sign).
	NumberExponent
)

// Number scans the number that starts at data[pos] ('-' or a digit):
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? . It returns the offset
// just after it and [NumberOK], or the offset where a digit was expected and
// the part that lacks it. The scan stops at the first byte that cannot
// continue the number; what follows is the caller's to judge.
func Number(data []byte, pos int) (end int, fault NumberFault) {
	if pos < len(data) && data[pos] == '-' {
		pos++
	}
	switch {
	case pos < len(data) && data[pos] == '0':
		pos++
	case pos < len(data) && data[pos] >= '1' && data[pos] <= '9':
		pos = skipDigits(data, pos)
	default:
		return pos, NumberInt
	}
	if pos < len(data) && data[pos] == '.' {
		if pos = skipDigits(data, pos+1); data[pos-1] == '.' {
			return pos, NumberFraction
		}
	}
	if pos < len(data) && (data[pos] == 'e' || data[pos] == 'E') {
		pos++
		if pos < len(data) && (data[pos] == '+' || data[pos] == '-') {
			pos++
		}
		if q := skipDigits(data, pos); q > pos {
			return q, NumberOK
		}
		return pos, NumberExponent
	}
	return pos, NumberOK
}

// skipDigits returns the offset of the first byte at or after pos that is
// not a decimal digit.
func skipDigits(data []byte, pos int) int {
	for pos < len(data) && data[pos] >= '0' && data[pos] <= '9' {
		pos++
	}
	return pos
}

// Hex4 decodes the four hexadecimal digits of a \u escape at data[pos:]
// (upper or lower case). ok is false when there are fewer than four bytes
// or one is not a hexadecimal digit.
func Hex4(data []byte, pos int) (r rune, ok bool) {
	if len(data)-pos < 4 {
		return 0, false
	}
	for _, c := range data[pos : pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Escape returns the byte that the one-character escape \e stands for
// (\" \\ \/ \b \f \n \r \t); ok is false for any other e (\u is Hex4's).
func Escape(e byte) (b byte, ok bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// Describe words the character at data[pos] for a parser's "unexpected
// ..." message: the character, not its first byte read as Latin-1 (a
// UTF-8 byte order mark read "unexpected character 'ï'", an "é" read
// 'Ã'); the byte order mark by name, since it is invisible; and a byte
// that starts no UTF-8 character as a byte. Unlike the rest of the
// package it allocates: it is for errors.
func Describe(data []byte, pos int) string {
	r, n := utf8.DecodeRune(data[pos:])
	switch {
	case r == utf8.RuneError && n <= 1:
		return fmt.Sprintf("byte 0x%02x, not UTF-8", data[pos])
	case r == '\uFEFF':
		return "byte order mark (U+FEFF)"
	}
	return fmt.Sprintf("character %q", r)
}
