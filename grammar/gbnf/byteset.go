package gbnf

import "math/bits"

// ByteSet is a set of bytes, one bit each.
type ByteSet [4]uint64

// Has reports whether b is in the set.
func (s *ByteSet) Has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }

// Add puts b in the set.
func (s *ByteSet) Add(b byte) { s[b>>6] |= 1 << (b & 63) }

// Len returns the number of bytes in the set.
func (s *ByteSet) Len() int {
	return bits.OnesCount64(s[0]) + bits.OnesCount64(s[1]) + bits.OnesCount64(s[2]) + bits.OnesCount64(s[3])
}

// Bytes returns the members in increasing order.
func (s *ByteSet) Bytes() []byte {
	var out []byte
	for b := 0; b < 256; b++ {
		if s.Has(byte(b)) {
			out = append(out, byte(b))
		}
	}
	return out
}

func (s *ByteSet) union(t *ByteSet) {
	s[0] |= t[0]
	s[1] |= t[1]
	s[2] |= t[2]
	s[3] |= t[3]
}
