package discovery

import (
	"strings"
	"sync"
)

// termTable numbers every analysed term a Discoverer has seen, so that a
// card keeps its terms as 4-byte numbers rather than strings and the
// index is built from flat arrays rather than per-card maps. Numbers are
// stable for the Discoverer's life, so a card's analysis is reused across
// indexes as it is. It only grows: by the distinct terms of the cards
// indexed (a catalog's vocabulary, about one new term per card at 100,000
// synthetic tools).
type termTable struct {
	mu   sync.RWMutex
	ids  map[string]uint32
	strs []string
}

func newTermTable() *termTable { return &termTable{ids: map[string]uint32{}} }

// intern appends the numbers of ts to dst.
func (tt *termTable) intern(dst []uint32, ts []string) []uint32 {
	if len(ts) == 0 {
		return dst
	}
	n0 := len(dst)
	miss := false
	tt.mu.RLock()
	for _, t := range ts {
		id, ok := tt.ids[t]
		miss = miss || !ok
		dst = append(dst, id)
	}
	tt.mu.RUnlock()
	if !miss {
		return dst
	}
	tt.mu.Lock()
	for i, t := range ts {
		id, ok := tt.ids[t]
		if !ok {
			// A term is a piece of the text it was cut from: a copy
			// keeps that text from living as long as the table.
			t = strings.Clone(t)
			id = uint32(len(tt.strs))
			tt.strs = append(tt.strs, t)
			tt.ids[t] = id
		}
		dst[n0+i] = id
	}
	tt.mu.Unlock()
	return dst
}

// snapshot returns the terms numbered so far, by number; the slice is
// never written again at those positions.
func (tt *termTable) snapshot() []string {
	tt.mu.RLock()
	defer tt.mu.RUnlock()
	return tt.strs[:len(tt.strs):len(tt.strs)]
}
