package tools

import (
	"slices"
	"unsafe"
)

// chunks hands out copies of byte strings cut from shared blocks, so that
// the many small values of a batch of tools that live as long as each
// other are a few allocations, not one each. At 100,000 tools the
// catalog's strings and schemas, a million small allocations made among
// the garbage of checking the schemas, left tens of MiB of the heap's
// spans partly used once that garbage was gone; cut from blocks they take
// their bytes alone. A block lives as long as one value cut from it does:
// a value of a quarter of a block or more gets an allocation of its own,
// so a value kept alone keeps at most a block. The zero value is ready;
// not safe for concurrent use.
type chunks struct {
	block []byte
	size  int // of a block; 0 means chunkBytes
}

// chunkBytes is the size of a block of chunks by default.
const chunkBytes = 32 << 10

// bytes returns a copy of b that nothing else writes (nil when b is
// empty), with no room to grow over its neighbours.
func (c *chunks) bytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	size := c.size
	if size == 0 {
		size = chunkBytes
	}
	if len(b) >= size/4 {
		return slices.Clone(b)
	}
	if len(b) > cap(c.block)-len(c.block) {
		c.block = make([]byte, 0, size)
	}
	n := len(c.block)
	c.block = append(c.block, b...)
	return c.block[n:len(c.block):len(c.block)]
}

// string returns a copy of the concatenation of parts.
func (c *chunks) string(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 {
		return ""
	}
	var b []byte
	if n < 256 {
		var a [256]byte
		b = a[:0]
	}
	for _, p := range parts {
		b = append(b, p...)
	}
	b = c.bytes(b)
	return unsafe.String(unsafe.SliceData(b), len(b))
}
