package gbnf

// UTF-8 helpers (strict: no overlong forms, no surrogates, nothing above
// U+10FFFF).

// gbnfUTF8Lead returns the code points whose encoding starts with b.
func gbnfUTF8Lead(b byte) (lo, hi rune, ok bool) {
	switch {
	case b < 0x80:
		return rune(b), rune(b), true
	case b < 0xC2:
		return 0, 0, false
	case b < 0xE0:
		lo = rune(b&0x1F) << 6
		return lo, lo | 0x3F, true
	case b == 0xE0:
		return 0x800, 0xFFF, true
	case b == 0xED:
		return 0xD000, 0xD7FF, true
	case b < 0xF0:
		lo = rune(b&0x0F) << 12
		return lo, lo | 0xFFF, true
	case b == 0xF0:
		return 0x10000, 0x3FFFF, true
	case b < 0xF4:
		lo = rune(b&0x07) << 18
		return lo, lo | 0x3FFFF, true
	case b == 0xF4:
		return 0x100000, 0x10FFFF, true
	}
	return 0, 0, false
}

// gbnfUTF8Cont returns the range of code points after continuation byte b
// extends a partial sequence whose possible code points are [lo, hi] with
// remain bytes still to come (including b). ok is false when b cannot come
// next.
func gbnfUTF8Cont(lo, hi rune, remain int, b byte) (rune, rune, bool) {
	if b&0xC0 != 0x80 {
		return 0, 0, false
	}
	shift := uint(6 * (remain - 1))
	nlo := lo&^(0x3F<<shift) | rune(b&0x3F)<<shift
	nhi := nlo | (1<<shift - 1)
	if nlo < lo || nhi > hi {
		return 0, 0, false
	}
	return nlo, nhi, true
}

func gbnfUTF8Len(b byte) int {
	switch {
	case b < 0x80:
		return 1
	case b < 0xE0:
		return 2
	case b < 0xF0:
		return 3
	}
	return 4
}
