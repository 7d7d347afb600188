package local

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"math/rand/v2"
	"unicode/utf8"

	"github.com/toolgate/toolgate/grammar/mask"
	"github.com/toolgate/toolgate/llm"
)

// runner is what a generation needs of the model: llama.cpp's context
// with its KV cache of one sequence, or a fake in tests.
type runner interface {
	// truncate drops the cache from position n on; false when it cannot
	// (the caller then clears it all with truncate(0), which never fails).
	truncate(n int) bool
	// eval decodes tokens at the positions after the cache's, leaving the
	// logits of the last one.
	eval(tokens []int32) error
	// logits returns the logits after the last eval, one per token of the
	// vocabulary; valid until the next eval. An error says why there are
	// none.
	logits() ([]float32, error)
}

// kvState is a runner with the tokens its cache holds, for the reuse of
// the prompt prefix that one turn shares with the next.
type kvState struct {
	r      runner
	cached []int32 // the tokens in the cache, in order
	batch  int     // the most tokens one eval takes
}

// reusable returns how many tokens of prompt the cache already holds:
// their common prefix, less one when that is all of prompt (the last
// token is decoded again for its logits).
func reusable(cached, prompt []int32) int {
	n := 0
	for n < len(cached) && n < len(prompt) && cached[n] == prompt[n] {
		n++
	}
	if n == len(prompt) && n > 0 {
		n--
	}
	return n
}

// prefill brings the cache to prompt, decoding only what it does not
// hold, in batches with ctx checked between them; it returns the tokens
// reused.
func (k *kvState) prefill(ctx context.Context, prompt []int32) (int, error) {
	if len(prompt) == 0 {
		return 0, errors.New("the prompt has no tokens")
	}
	keep := reusable(k.cached, prompt)
	if !k.r.truncate(keep) {
		keep = 0
		k.r.truncate(0)
	}
	k.cached = k.cached[:keep]
	for start := keep; start < len(prompt); start += k.batch {
		if err := ctx.Err(); err != nil {
			return keep, err
		}
		end := min(start+k.batch, len(prompt))
		if err := k.eval(prompt[start:end]); err != nil {
			return keep, err
		}
	}
	return keep, nil
}

// eval decodes tokens after the cache and records them; after a failure
// the cache is cleared (llama_decode may leave part of a batch in it).
func (k *kvState) eval(tokens []int32) error {
	if err := k.r.eval(tokens); err != nil {
		k.r.truncate(0)
		k.cached = k.cached[:0]
		return err
	}
	k.cached = append(k.cached, tokens...)
	return nil
}

// sampling is how one generation picks its tokens.
type sampling struct {
	temperature float64 // 0: greedy
	rng         *rand.Rand
	maxTokens   int
	onDelta     func(string)
	// ids and weights are sample's scratch at temperature > 0.
	ids     []int32
	weights []float64
}

// generation is what a generation produced.
type generation struct {
	text   []byte
	tokens int // tokens sampled (the end-of-generation token included)
	finish llm.FinishReason
}

// errDeadEnd: the grammar allows no token at all, which a well-formed
// grammar never does mid-sentence.
var errDeadEnd = errors.New("the grammar allows no token here")

// generate samples after the prompt the cache holds, each token masked by
// s's grammar, until the grammar is complete and allows nothing more (the
// envelope's end: no token is decoded for it), an end-of-generation token,
// or sp.maxTokens (FinishLength). ctx is checked before every decode.
func (k *kvState) generate(ctx context.Context, s *mask.Session, vocab *mask.Vocabulary, sp sampling) (generation, error) {
	var g generation
	allowed := mask.NewBitset(vocab.Len())
	var pending []byte // bytes of OnDelta not sent yet: an unfinished code point
	last := int32(-1)  // the last token sampled, not decoded yet
	for {
		s.Fill(allowed)
		if onlyEnd(allowed, vocab) {
			if allowed.Count() == 0 {
				return g, fmt.Errorf("%w after %q", errDeadEnd, s.Output())
			}
			// The grammar is complete and takes no more text: stop here,
			// rather than decode the last token to sample the end.
			g.finish = llm.FinishStop
			break
		}
		if g.tokens >= sp.maxTokens {
			g.finish = llm.FinishLength
			break
		}
		if last >= 0 {
			if err := ctx.Err(); err != nil {
				return g, err
			}
			if err := k.eval([]int32{last}); err != nil {
				return g, err
			}
		}
		logits, err := k.r.logits()
		if err != nil {
			return g, err
		}
		id, ok := sample(logits, allowed, &sp)
		if !ok {
			return g, fmt.Errorf("%w after %q", errDeadEnd, s.Output())
		}
		g.tokens++
		if err := s.Accept(id); err != nil {
			return g, fmt.Errorf("the sampled token was refused: %w", err)
		}
		if s.Ended() {
			g.finish = llm.FinishStop
			break
		}
		piece := vocab.Piece(id)
		g.text = append(g.text, piece...)
		if sp.onDelta != nil {
			pending = append(pending, piece...)
			var out []byte
			out, pending = splitUTF8(pending)
			if len(out) > 0 {
				sp.onDelta(string(out))
			}
		}
		last = int32(id)
	}
	if sp.onDelta != nil && len(pending) > 0 {
		sp.onDelta(string(pending))
	}
	return g, nil
}

// onlyEnd reports whether allowed holds no text token: empty, or only
// end-of-generation tokens.
func onlyEnd(allowed mask.Bitset, vocab *mask.Vocabulary) bool {
	for i := range members(allowed, vocab.Len()) {
		if vocab.Kind(i) != mask.KindEnd {
			return false
		}
	}
	return true
}

// members yields the ids in b below n, in order.
func members(b mask.Bitset, n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for w, word := range b {
			for word != 0 {
				i := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				if i >= n || !yield(i) {
					return
				}
			}
		}
	}
}

// splitUTF8 splits b before an unfinished code point at its end.
func splitUTF8(b []byte) (done, rest []byte) {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i], append([]byte(nil), b[i:]...)
			}
			break
		}
	}
	return b, nil
}

// sample picks a token of allowed from logits: the most likely at
// sp.temperature 0 (the lowest id among equals), else one drawn with sp.rng
// with probability softmax(logit/temperature) over allowed, each weight
// computed once (into sp.weights, reused). false when allowed is empty.
func sample(logits []float32, allowed mask.Bitset, sp *sampling) (int, bool) {
	best, bestLogit := -1, float32(math.Inf(-1))
	for i := range members(allowed, len(logits)) {
		if best < 0 || logits[i] > bestLogit {
			best, bestLogit = i, logits[i]
		}
	}
	if best < 0 || sp.temperature <= 0 || math.IsInf(float64(bestLogit), 0) {
		return best, best >= 0
	}
	ids, weights := sp.ids[:0], sp.weights[:0]
	total := 0.0
	for i := range members(allowed, len(logits)) {
		w := math.Exp(float64(logits[i]-bestLogit) / sp.temperature)
		ids, weights = append(ids, int32(i)), append(weights, w)
		total += w
	}
	sp.ids, sp.weights = ids, weights
	r := sp.rng.Float64() * total
	for j, w := range weights {
		if r -= w; r < 0 {
			return int(ids[j]), true
		}
	}
	return best, true // rounding left r at or just above 0
}
