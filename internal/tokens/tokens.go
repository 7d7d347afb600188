// Package tokens counts tokens the way OpenAI's current models do
// (o200k_base), offline: the BPE ranks ship inside the binary through
// github.com/pkoukk/tiktoken-go-loader, so counting needs no network and no
// download. Discovery uses it for shortlist and catalog sizes, the llm
// package for per-request accounting.
//
// The encoder is loaded once, on first use (about a few hundred
// milliseconds), and is safe for concurrent use afterwards.
package tokens

import (
	"fmt"
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the name of the encoding Count uses.
const Encoding = "o200k_base"

var (
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
)

func load() {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	enc, err = tiktoken.GetEncoding(Encoding)
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

// MustCount is Count for callers that treat a broken embedded encoding as a
// programming error.
func MustCount(text string) int {
	n, err := Count(text)
	if err != nil {
		panic(err)
	}
	return n
}
