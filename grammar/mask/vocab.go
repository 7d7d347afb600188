package mask

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"sync"
)

// Kind says how a token takes part in a mask.
type Kind uint8

const (
	// KindText is a token matched by its bytes (its piece).
	KindText Kind = iota
	// KindControl is a token never allowed: control, unknown and unused
	// tokens, whose text is not what they mean.
	KindControl
	// KindEnd is an end-of-generation token: allowed exactly when the
	// output so far is a complete sentence of the grammar.
	KindEnd
)

// String returns "text", "control" or "end".
func (k Kind) String() string {
	switch k {
	case KindText:
		return "text"
	case KindControl:
		return "control"
	case KindEnd:
		return "end"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ErrVocabulary is wrapped by the errors of [NewVocabulary] and [ReadGGUF] for
// a vocabulary they refuse.
var ErrVocabulary = errors.New("mask: bad vocabulary")

// MaxTokens bounds the size of a [Vocabulary] (the largest vocabularies in
// use have about 260k tokens).
const MaxTokens = 1 << 22

// MaxPieceLen bounds the bytes of one token's piece (the longest of
// cl100k's and o200k's have 128): a mask walks a piece byte by byte, a stack
// frame a byte, so an unbounded one could overflow the goroutine's stack.
const MaxPieceLen = 1 << 16

// MaxPieceBytes bounds the bytes of all the pieces of a [Vocabulary]
// (o200k's 200k tokens have 1.4 MB): its trie costs about 25 bytes a
// byte of pieces that shares no prefix, more while it is built.
const MaxPieceBytes = 1 << 24

// Vocabulary is a model's tokens as the bytes each one stands for (its
// piece, as llama.cpp's token_to_piece returns it) and their kinds, by
// token id. It is immutable and safe for concurrent use; the byte trie an
// [Engine] walks is built once, by the first [NewEngine] over it, and shared,
// and so are the tokens of each character class a grammar's free text
// uses (at most 64 classes are kept).
type Vocabulary struct {
	data   []byte
	off    []uint32 // piece i is data[off[i]:off[i+1]]
	kinds  []Kind
	nEnd   int
	once   sync.Once
	trie   *trie
	maxLen int // longest piece, in bytes

	mu     sync.Mutex
	slices map[string]*slice // by class (gbnf.AppendClass)
}

// NewVocabulary returns the vocabulary whose token id i has the bytes
// pieces[i] and the kind kinds[i]. It copies both. At least one token is
// needed, at most [MaxTokens], each of at most [MaxPieceLen] bytes and
// [MaxPieceBytes] in all, and kinds must be as long as pieces.
func NewVocabulary(pieces [][]byte, kinds []Kind) (*Vocabulary, error) {
	if len(pieces) == 0 || len(pieces) > MaxTokens {
		return nil, fmt.Errorf("%w: %d tokens (want 1 to %d)", ErrVocabulary, len(pieces), MaxTokens)
	}
	if len(kinds) != len(pieces) {
		return nil, fmt.Errorf("%w: %d kinds for %d pieces", ErrVocabulary, len(kinds), len(pieces))
	}
	v := &Vocabulary{off: make([]uint32, 1, len(pieces)+1), kinds: make([]Kind, len(kinds))}
	total := 0
	for i, p := range pieces {
		if len(p) > MaxPieceLen {
			return nil, fmt.Errorf("%w: token %d is %d bytes long (at most %d)", ErrVocabulary, i, len(p), MaxPieceLen)
		}
		total += len(p)
	}
	if total > MaxPieceBytes {
		return nil, fmt.Errorf("%w: %d bytes of pieces (at most %d)", ErrVocabulary, total, MaxPieceBytes)
	}
	v.data = make([]byte, 0, total)
	for i, p := range pieces {
		if kinds[i] > KindEnd {
			return nil, fmt.Errorf("%w: token %d has kind %d", ErrVocabulary, i, kinds[i])
		}
		v.kinds[i] = kinds[i]
		if kinds[i] == KindEnd {
			v.nEnd++
		}
		v.data = append(v.data, p...)
		v.off = append(v.off, uint32(len(v.data)))
		v.maxLen = max(v.maxLen, len(p))
	}
	return v, nil
}

// Len returns the number of tokens.
func (v *Vocabulary) Len() int { return len(v.kinds) }

// Piece returns the bytes of token id. The caller must not modify them.
func (v *Vocabulary) Piece(id int) []byte { return v.data[v.off[id]:v.off[id+1]:v.off[id+1]] }

// Kind returns the kind of token id.
func (v *Vocabulary) Kind(id int) Kind { return v.kinds[id] }

// textual reports whether token id can be matched as text: a [KindText]
// token with a non-empty piece holding no NUL byte.
func (v *Vocabulary) textual(id int) bool {
	p := v.Piece(id)
	return v.kinds[id] == KindText && len(p) > 0 && bytes.IndexByte(p, 0) < 0
}

// trie is the vocabulary's textual tokens as a byte trie, nodes in
// depth-first preorder (node 0 is the root, the empty prefix), so a walk
// reads memory mostly forward.
type trie struct {
	edge    []byte  // the byte leading into each node
	first   []int32 // first child, -1 if none
	next    []int32 // next sibling (in byte order), -1 if none
	tokLo   []int32 // tokens ending at a node: ids[tokLo[n]:tokHi[n]]
	tokHi   []int32
	subtree []int32 // the end of each node's subtree in preorder
	ids     []int32 // textual token ids sorted by piece
	// tokAt[n] is the first index into ids of a token at node n or after
	// it in preorder (one more entry, len(ids), for the end), so the
	// tokens of n's subtree are ids[tokAt[n]:tokAt[subtree[n]]].
	tokAt []int32
}

// buildTrie builds the trie from the pieces in sorted order: each piece
// shares its common prefix with the previous one, so nodes come out in
// preorder and siblings in byte order.
func (v *Vocabulary) buildTrie() *trie {
	ids := make([]int32, 0, len(v.kinds))
	for id := range v.kinds {
		if v.textual(id) {
			ids = append(ids, int32(id))
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		if c := bytes.Compare(v.Piece(int(ids[i])), v.Piece(int(ids[j]))); c != 0 {
			return c < 0
		}
		return ids[i] < ids[j]
	})
	t := &trie{ids: ids}
	t.newNode(0)
	path := []int32{0}       // path[d]: the node of the current prefix of length d
	lastChild := []int32{-1} // per path depth: the last child created
	var prev []byte
	for k, id := range ids {
		p := v.Piece(int(id))
		common := 0
		for common < len(p) && common < len(prev) && p[common] == prev[common] {
			common++
		}
		path, lastChild = path[:common+1], lastChild[:common+1]
		for d := common; d < len(p); d++ {
			n := t.newNode(p[d])
			if lc := lastChild[d]; lc >= 0 {
				t.next[lc] = n
			} else {
				t.first[path[d]] = n
			}
			lastChild[d] = n
			path = append(path, n)
			lastChild = append(lastChild, -1)
		}
		end := path[len(p)]
		if t.tokHi[end] == t.tokLo[end] {
			t.tokLo[end] = int32(k)
		}
		t.tokHi[end] = int32(k) + 1
		prev = p
	}
	t.tokAt = make([]int32, len(t.edge)+1)
	t.tokAt[len(t.edge)] = int32(len(ids))
	for n := len(t.edge) - 1; n >= 0; n-- {
		end := int32(n) + 1
		for c := t.first[n]; c >= 0; c = t.next[c] {
			end = t.subtree[c]
		}
		t.subtree[n] = end
		t.tokAt[n] = t.tokAt[n+1]
		if t.tokHi[n] > t.tokLo[n] {
			t.tokAt[n] = t.tokLo[n]
		}
	}
	return t
}

func (t *trie) newNode(b byte) int32 {
	n := int32(len(t.edge))
	t.edge = append(t.edge, b)
	t.first = append(t.first, -1)
	t.next = append(t.next, -1)
	t.tokLo = append(t.tokLo, 0)
	t.tokHi = append(t.tokHi, 0)
	t.subtree = append(t.subtree, 0)
	return n
}

func (v *Vocabulary) theTrie() *trie {
	v.once.Do(func() { v.trie = v.buildTrie() })
	return v.trie
}
