package grammar

import (
	"container/list"
	"encoding/binary"
	"hash/maphash"
	"sync"
)

// Cache keeps compiled grammars so that compiling the same schema, or the
// envelope of the same shortlist, again costs a hash of the inputs
// instead of a compilation. Set it on [Options.Cache]; one Cache may be
// shared by any number of goroutines and [Options] values.
//
// Entries are keyed by the kind of artifact, the options that change the
// output and the input bytes (each tool's name and schema for an
// envelope; for [FromSchema] both the bytes as given and their canonical
// form, so a schema respaced hits too). A hit is confirmed against the
// stored input, so two inputs never share an entry by a hash collision.
// When the cache holds maxEntries entries the least recently used one is
// dropped. Errors are cached like results.
type Cache struct {
	mu    sync.Mutex
	max   int
	seed  maphash.Seed
	byKey map[uint64]*list.Element
	lru   list.List // of *cacheEntry, most recent first
}

// DefaultCacheEntries is the size [NewCache] uses for maxEntries <= 0: about
// a day of distinct shortlists of a busy agent, each entry holding the
// schema bytes and the grammar text.
const DefaultCacheEntries = 4096

// NewCache returns an empty cache that holds at most maxEntries compiled
// artifacts ([DefaultCacheEntries] when maxEntries <= 0).
func NewCache(maxEntries int) *Cache {
	if maxEntries <= 0 {
		maxEntries = DefaultCacheEntries
	}
	return &Cache{max: maxEntries, seed: maphash.MakeSeed(), byKey: map[uint64]*list.Element{}}
}

// Len returns the number of entries held.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

type cacheEntry struct {
	hash     uint64
	material []byte // the length-prefixed key pieces, to confirm a hit
	val      any    // *compiled or [*EnvelopeResult]
}

// cacheKey is the key of one lookup: its pieces are hashed as they are
// added and compared with an entry's material on a hit, so a lookup copies
// nothing.
type cacheKey struct {
	h      maphash.Hash
	pieces [][]byte
	size   int
}

func (c *Cache) key(kind byte, o Options) *cacheKey {
	k := &cacheKey{}
	k.h.SetSeed(c.seed)
	k.add([]byte{kind, b2b(o.Strict), b2b(o.Compact), b2b(o.OpenObjects), b2b(o.NoAnswer), b2b(o.NoFindTools)})
	var bounds [32]byte
	for i, n := range []int{o.MaxStringLength, o.MaxItems, o.MaxAnswerLength, o.MaxQueryLength} {
		binary.LittleEndian.PutUint64(bounds[8*i:], uint64(int64(n)))
	}
	k.add(bounds[:])
	return k
}

func (k *cacheKey) add(p []byte) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
	k.h.Write(n[:])
	k.h.Write(p)
	k.pieces = append(k.pieces, p)
	k.size += 8 + len(p)
}

func (k *cacheKey) matches(material []byte) bool {
	if len(material) != k.size {
		return false
	}
	off := 0
	for _, p := range k.pieces {
		if binary.LittleEndian.Uint64(material[off:]) != uint64(len(p)) {
			return false
		}
		off += 8
		if string(material[off:off+len(p)]) != string(p) {
			return false
		}
		off += len(p)
	}
	return true
}

func (k *cacheKey) material() []byte {
	out := make([]byte, 0, k.size)
	for _, p := range k.pieces {
		out = binary.LittleEndian.AppendUint64(out, uint64(len(p)))
		out = append(out, p...)
	}
	return out
}

// get returns the value stored under k, if any. A nil [Cache] holds nothing.
func (c *Cache) get(k *cacheKey) (any, bool) {
	if c == nil {
		return nil, false
	}
	h := k.h.Sum64()
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[h]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !k.matches(e.material) {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return e.val, true
}

// put stores v under k, dropping the least recently used entry when full.
// On a hash collision the newer input takes the slot.
func (c *Cache) put(k *cacheKey, v any) {
	if c == nil {
		return
	}
	h := k.h.Sum64()
	e := &cacheEntry{hash: h, material: k.material(), val: v}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[h]; ok {
		el.Value = e
		c.lru.MoveToFront(el)
		return
	}
	c.byKey[h] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.byKey, old.Value.(*cacheEntry).hash)
	}
}

func b2b(b bool) byte {
	if b {
		return 1
	}
	return 0
}
