// Package tokcount counts o200k_base tokens (internal/tokens) with a
// bounded cache. Tool definitions recur turn after turn (the same tools,
// the same compiled envelope for the same shortlist) and counting is far
// slower than building a request, so each distinct text is counted once.
package tokcount

import (
	"hash/maphash"
	"sync"

	"github.com/toolgate/toolgate/internal/tokens"
)

// maxEntries bounds the cache; when full it is emptied and refilled.
const maxEntries = 8192

var (
	seed   = maphash.MakeSeed()
	mu     sync.Mutex
	counts = make(map[uint64]int)
)

// Count returns the o200k_base token count of s (0 if the embedded
// encoding cannot load, a build defect that internal/tokens' tests catch).
// It is safe for concurrent use.
func Count(s string) int {
	if s == "" {
		return 0
	}
	h := maphash.String(seed, s)
	mu.Lock()
	n, ok := counts[h]
	mu.Unlock()
	if ok {
		return n
	}
	n, err := tokens.Count(s)
	if err != nil {
		return 0
	}
	mu.Lock()
	if len(counts) >= maxEntries {
		clear(counts)
	}
	counts[h] = n
	mu.Unlock()
	return n
}
