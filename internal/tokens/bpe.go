package tokens

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/maphash"
	"math"
	"strconv"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// ranks is the o200k_base vocabulary, compact: the bytes of every token
// one after another in rank order (token r is blob[ends[r-1]:ends[r]]),
// and an open-addressed hash table of rank+1 by the token's bytes (0: an
// empty slot). About 4 MiB for 200,000 tokens, where tiktoken-go's maps
// (encoder, decoder, sorted bytes) took 25.
type ranks struct {
	blob  []byte
	ends  []uint32
	table []uint32
	mask  uint64
	seed  maphash.Seed
}

// loadRanks reads the named .tiktoken file (a base64 token and its rank a
// line, ranks 0, 1, 2, …) from the loader's embedded assets.
func loadRanks(name string) (*ranks, error) {
	f, err := assets.Assets.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &ranks{seed: maphash.MakeSeed()}
	sc := bufio.NewScanner(f)
	var tok [256]byte
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("line %d: no rank", len(r.ends)+1)
		}
		if base64.StdEncoding.DecodedLen(sp) > len(tok) {
			return nil, fmt.Errorf("line %d: token too long", len(r.ends)+1)
		}
		n, err := base64.StdEncoding.Decode(tok[:], line[:sp])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", len(r.ends)+1, err)
		}
		rank, err := strconv.Atoi(string(line[sp+1:]))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", len(r.ends)+1, err)
		}
		if rank != len(r.ends) {
			return nil, fmt.Errorf("line %d: rank %d out of order", len(r.ends)+1, rank)
		}
		r.blob = append(r.blob, tok[:n]...)
		r.ends = append(r.ends, uint32(len(r.blob)))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	size := 1
	for size < 2*len(r.ends) {
		size <<= 1
	}
	r.table, r.mask = make([]uint32, size), uint64(size-1)
	for rank := range r.ends {
		i := maphash.Bytes(r.seed, r.token(rank)) & r.mask
		for r.table[i] != 0 {
			i = (i + 1) & r.mask
		}
		r.table[i] = uint32(rank) + 1
	}
	r.blob = bytes.Clone(r.blob) // drop the spare capacity appending left
	return r, nil
}

func (r *ranks) token(rank int) []byte {
	start := uint32(0)
	if rank > 0 {
		start = r.ends[rank-1]
	}
	return r.blob[start:r.ends[rank]]
}

// rank returns the rank of the token b, or -1 when b is no token.
func (r *ranks) rank(b string) int {
	i := maphash.String(r.seed, b) & r.mask
	for {
		v := r.table[i]
		if v == 0 {
			return -1
		}
		if string(r.token(int(v-1))) == b {
			return int(v - 1)
		}
		i = (i + 1) & r.mask
	}
}

// count is the number of tokens o200k_base encodes piece into: one when
// piece is a token, else as many as tiktoken's byte-pair merge leaves,
// which repeatedly joins the adjacent pair whose union has the lowest
// rank (the leftmost of equal ones) until no union is a token.
func (r *ranks) count(piece string) int {
	if len(piece) <= 1 || r.rank(piece) >= 0 {
		return min(len(piece), 1) // every byte is a token
	}
	if len(piece) >= longPiece {
		return r.countLong(piece)
	}
	return r.countShort(piece)
}

// countShort is count for a piece that is no token, by the pairs' scan:
// quadratic, and the fastest below longPiece bytes.
func (r *ranks) countShort(piece string) int {
	// parts[i] is a part's start and the rank of its union with the next
	// part ([math.MaxInt32]: none).
	var buf [64][2]int32 // no allocation for a piece under 64 bytes
	var parts [][2]int32
	if len(piece) < len(buf) {
		parts = buf[:len(piece)+1]
	} else {
		parts = make([][2]int32, len(piece)+1)
	}
	for i := range parts {
		parts[i] = [2]int32{int32(i), math.MaxInt32}
	}
	// union is the rank of the parts i to i+skip+1 joined, or MaxInt32.
	union := func(i, skip int) int32 {
		if i+skip+2 < len(parts) {
			if rk := r.rank(piece[parts[i][0]:parts[i+skip+2][0]]); rk >= 0 {
				return int32(rk)
			}
		}
		return math.MaxInt32
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i][1] = union(i, 0)
	}
	for len(parts) > 1 {
		least, at := int32(math.MaxInt32), -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i][1] < least {
				least, at = parts[i][1], i
			}
		}
		if at < 0 {
			break
		}
		parts[at][1] = union(at, 1)
		if at > 0 {
			parts[at-1][1] = union(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return len(parts) - 1
}

// longPiece is the length from which count merges with a heap: the scan
// of every pair at each merge is quadratic in the piece, and one piece
// can be a whole message (a 128 KiB string of one letter took 17 s).
const longPiece = 256

// merge is a pair of adjacent parts, [start, end) joined, and its rank.
type merge struct{ rank, start, end int32 }

// countLong is count for a long piece: the same merges in the same order
// (the lowest rank first, the leftmost of equal ones), in O(n log n). The
// parts are a linked list over their start offsets; each pair's union
// waits in a min-heap by (rank, start), and an entry whose parts have
// changed since (its end is no longer the end of the pair at its start)
// is skipped when it comes up.
func (r *ranks) countLong(piece string) int {
	n := int32(len(piece))
	next := make([]int32, n) // next[i]: the start of the part after the one at i; n at the end
	prev := make([]int32, n+1)
	for i := range next {
		next[i] = int32(i) + 1
		prev[i+1] = int32(i)
	}
	h := make(mergeHeap, 0, n)
	// push queues the union of the part at i with the one after it.
	push := func(i int32) {
		if i < 0 || next[i] >= n {
			return
		}
		end := next[next[i]]
		if rk := r.rank(piece[i:end]); rk >= 0 {
			h.push(merge{int32(rk), i, end})
		}
	}
	for i := int32(0); i < n-1; i++ {
		push(i)
	}
	parts := n
	for len(h) > 0 {
		m := h.pop()
		if next[m.start] == 0 || next[m.start] >= n || next[next[m.start]] != m.end {
			continue // a part of it was merged into another since
		}
		j := next[m.start] // the second part's start: joined to the first
		next[m.start] = next[j]
		prev[next[j]] = m.start
		next[j] = 0 // dead (no live part's next is 0)
		parts--
		push(m.start)
		if m.start > 0 {
			push(prev[m.start])
		}
	}
	return int(parts)
}

// mergeHeap is a binary min-heap of merges by (rank, start).
type mergeHeap []merge

func (h mergeHeap) less(a, b int) bool {
	return h[a].rank < h[b].rank || h[a].rank == h[b].rank && h[a].start < h[b].start
}

func (h *mergeHeap) push(m merge) {
	*h = append(*h, m)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *mergeHeap) pop() merge {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && s.less(l, m) {
			m = l
		}
		if l+1 < len(s) && s.less(l+1, m) {
			m = l + 1
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
