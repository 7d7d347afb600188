// Package tokens counts tokens the way OpenAI's current models do
// (o200k_base), offline: the BPE ranks ship inside the binary through
// github.com/pkoukk/tiktoken-go-loader, so counting needs no network and no
// download. Discovery uses it for shortlist and catalog sizes, the llm
// package for per-request accounting.
//
// The ranks are loaded once, on first use (some 40 milliseconds),
// into compact tables of about 4 MiB that are safe for concurrent use;
// the counts are tiktoken-go's (the tests compare them). [Count] counts
// a text; [Estimate] is the one counter the rest of the module calls where
// a number is always needed (request accounting, context fitting): the
// same count, cached, since tool definitions and messages recur turn after
// turn and counting is far slower than building a request.
package tokens

import (
	"fmt"
	"hash/maphash"
	"sync"
)

// Encoding is the name of the encoding [Count] uses.
const Encoding = "o200k_base"

var (
	once sync.Once
	enc  *ranks
	err  error
)

func load() {
	enc, err = loadRanks(Encoding + ".tiktoken")
	if err != nil {
		err = fmt.Errorf("tokens: load %s: %w", Encoding, err)
	}
}

// Count returns the number of o200k_base tokens in text, treating special
// token text as ordinary text. It returns an error only if the embedded
// encoding cannot be loaded, which would be a build defect.
func Count(text string) (int, error) {
	once.Do(load)
	if err != nil {
		return 0, err
	}
	return countFast(text), nil
}

// MustCount is [Count] for callers that treat a broken embedded encoding as a
// programming error.
func MustCount(text string) int {
	n, err := Count(text)
	if err != nil {
		panic(err)
	}
	return n
}

// maxCached bounds the cache of [Estimate]; when full it is emptied and
// refilled.
const maxCached = 8192

var (
	seed    = maphash.MakeSeed()
	cacheMu sync.Mutex
	cached  = make(map[uint64]int)
)

// Estimate returns the o200k_base token count of text, as [Count] does,
// from a bounded cache of the texts counted before (keyed by a hash of the
// text). If the embedded encoding cannot be loaded, a build defect that
// this package's tests catch, it returns len(text): a byte per token,
// never less than the true count. It is safe for concurrent use.
func Estimate(text string) int {
	if text == "" {
		return 0
	}
	h := maphash.String(seed, text)
	cacheMu.Lock()
	n, ok := cached[h]
	cacheMu.Unlock()
	if ok {
		return n
	}
	n, err := Count(text)
	if err != nil {
		return len(text)
	}
	cacheMu.Lock()
	if len(cached) >= maxCached {
		clear(cached)
	}
	cached[h] = n
	cacheMu.Unlock()
	return n
}
