package tools

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// ErrDuplicate is returned when a tool's ID is already registered.
var ErrDuplicate = errors.New("tools: duplicate tool ID")

// Registry is the live catalog. It is safe for concurrent use: tools may be
// added, replaced and removed at run time (an MCP server's list changes)
// while readers work on immutable Snapshots.
type Registry struct {
	mu      sync.Mutex // serializes writers
	tools   map[string]*Tool
	version uint64
	snap    atomic.Pointer[Snapshot]
	subs    []chan<- struct{}
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	r := &Registry{tools: make(map[string]*Tool)}
	r.snap.Store(newSnapshot(nil, 0))
	return r
}

// Add registers tools. It validates each and fails without registering any
// if one is invalid ([ErrInvalidTool]) or its ID is already taken
// ([ErrDuplicate]). The registry keeps its own copy of each tool's slices, so
// the caller may reuse ts afterwards without affecting any [Snapshot].
func (r *Registry) Add(ts ...Tool) error { return r.add(ts, false) }

// Adopt is [Registry.Add] for tools whose input schemas the caller hands
// over: the registry keeps those bytes where they are instead of copying
// them, so the caller must never write them again (as with the buffer
// [bytes.NewBuffer] takes). Every other slice is copied as Add copies
// it. A loader that has just decoded its tools saves the copy: 0.12 s
// of a restart of 100,000 tools whose schemas all differ. Schemas equal
// in content but apart in memory stay apart (Add shares one copy).
func (r *Registry) Adopt(ts ...Tool) error { return r.add(ts, true) }

func (r *Registry) add(ts []Tool, adopt bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := checkBatch(ts, func(t *Tool) error {
		if _, ok := r.tools[t.ID]; ok {
			return fmt.Errorf("%w: %s", ErrDuplicate, t.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.put(ts, adopt)
	return nil
}

// checkBatch validates a batch of tools: each must be valid, pass check,
// and have an ID no other tool of the batch has.
func checkBatch(ts []Tool, check func(*Tool) error) error {
	bad, invalid := validateAll(ts)
	seen := make(map[string]bool, len(ts))
	for i := range ts {
		if i == bad {
			return invalid
		}
		if err := check(&ts[i]); err != nil {
			return err
		}
		if seen[ts[i].ID] {
			return fmt.Errorf("%w: %s", ErrDuplicate, ts[i].ID)
		}
		seen[ts[i].ID] = true
	}
	return nil
}

// validateAll validates ts and returns the first invalid tool's position
// and why (len(ts) and nil when every tool is valid). A big batch is
// validated in contiguous parts on up to four goroutines, each with its
// own memo of the schemas it scanned: at 100,000 tools whose schemas all
// differ the scans take 0.1 s of CPU, most of a restart's registry work.
func validateAll(ts []Tool) (int, error) {
	const part = 8192
	workers := min(4, runtime.GOMAXPROCS(0), (len(ts)+part-1)/part)
	if workers <= 1 {
		return validateRange(ts, 0, len(ts))
	}
	at := make([]int, workers)
	errs := make([]error, workers)
	per := (len(ts) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { at[w], errs[w] = validateRange(ts, w*per, min((w+1)*per, len(ts))) })
	}
	wg.Wait()
	for w, err := range errs { // the parts are in order
		if err != nil {
			return at[w], err
		}
	}
	return len(ts), nil
}

// validateRange validates ts[lo:hi] with a memo of the schemas it scans
// and returns the first invalid tool's position and why (hi and nil when
// all are valid).
func validateRange(ts []Tool, lo, hi int) (int, error) {
	objects := make(objectSchemas, hi-lo)
	for i := lo; i < hi; i++ {
		if err := ts[i].validate(objects); err != nil {
			return i, err
		}
	}
	return hi, nil
}

// put registers copies of ts and publishes a snapshot; the caller holds
// r.mu and has checked the batch. With adopt, the copies keep the
// schemas of ts.
func (r *Registry) put(ts []Tool, adopt bool) {
	if len(r.tools) == 0 {
		// Sized once: a first batch of 100,000 tools grew it eight times.
		r.tools = make(map[string]*Tool, len(ts))
	}
	c := copier{adopt: adopt}
	if !adopt {
		// Sized for a batch whose schemas all differ: growing the two
		// maps to 100,000 entries cost a third of their time.
		c.byContent = make(map[string]json.RawMessage, len(ts))
		c.byAddr = make(map[schemaAddr]json.RawMessage, len(ts))
	}
	for i := range ts {
		r.tools[ts[i].ID] = c.own(ts[i])
	}
	r.publish()
}

// copier makes the registry's copies of one batch of tools: they share
// one copy of each input schema, found by content. A catalog's tools
// repeat schemas (100,000 copies held 42 MB), and [DefineAll] and the
// catalog loader already share them: a schema seen at the same address
// and length is found without hashing its bytes again.
type copier struct {
	adopt     bool // keep the schemas as they are (Adopt)
	byContent map[string]json.RawMessage
	byAddr    map[schemaAddr]json.RawMessage
	// schemas are the blocks the copies are cut from (chunks): at
	// 100,000 tools whose schemas all differ, a clone each rounded 52
	// MiB up to its size class by 2 MiB.
	schemas chunks
}

// own returns a copy of t that shares no slice with it: a snapshot's
// precomputed scope bits must never disagree with its tools' scopes.
func (c *copier) own(t Tool) *Tool {
	t.Card.Scopes = slices.Clone(t.Card.Scopes)
	t.Card.Aliases = slices.Clone(t.Card.Aliases)
	t.Card.Tags = slices.Clone(t.Card.Tags)
	t.Card.Examples = slices.Clone(t.Card.Examples)
	t.Tenants = slices.Clone(t.Tenants)
	if len(t.InputSchema) > 0 && !c.adopt {
		at := addrOf(t.InputSchema)
		s, ok := c.byAddr[at]
		if !ok {
			if s, ok = c.byContent[string(t.InputSchema)]; !ok {
				s = c.schemas.bytes(t.InputSchema)
				// The key aliases the copy, which nothing changes.
				c.byContent[unsafe.String(unsafe.SliceData(s), len(s))] = s
			}
			c.byAddr[at] = s
		}
		t.InputSchema = s
	}
	return &t
}

// ReplaceNamespace atomically replaces every tool in namespace ns by ts
// (whose IDs must all be in ns). It is how an upstream's changed tool list
// is applied: readers see either the old set or the new one. It fails
// without changing anything if a tool is invalid or a duplicate; like Add,
// it copies the tools' slices.
func (r *Registry) ReplaceNamespace(ns string, ts []Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := checkBatch(ts, func(t *Tool) error {
		if t.Namespace() != ns {
			return fmt.Errorf("%w %q: not in namespace %q", ErrInvalidTool, t.ID, ns)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for id, t := range r.tools {
		if t.Namespace() == ns {
			delete(r.tools, id)
		}
	}
	r.put(ts, false)
	return nil
}

// Remove unregisters the tool with the given ID and reports whether it was present.
func (r *Registry) Remove(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[id]; !ok {
		return false
	}
	delete(r.tools, id)
	r.publish()
	return true
}

// Snapshot returns the current immutable catalog. It never blocks on writers.
func (r *Registry) Snapshot() *Snapshot { return r.snap.Load() }

// Subscribe arranges for a non-blocking send on ch after every change. A
// full channel drops the notice; a reader that wakes re-reads the [Snapshot].
func (r *Registry) Subscribe(ch chan<- struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subs = append(r.subs, ch)
}

// Unsubscribe stops the notices to ch (every subscription of it) and
// reports whether ch was subscribed. A long-lived program that subscribes
// per session unsubscribes when the session ends.
func (r *Registry) Unsubscribe(ch chan<- struct{}) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.subs)
	r.subs = slices.DeleteFunc(r.subs, func(c chan<- struct{}) bool { return c == ch })
	return len(r.subs) != n
}

// publish builds a new snapshot; the caller holds r.mu.
func (r *Registry) publish() {
	r.version++
	list := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		list = append(list, t)
	}
	r.snap.Store(newSnapshot(list, r.version))
	for _, ch := range r.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Snapshot is an immutable catalog, sorted by tool ID, with everything
// authorization needs precomputed. Safe for concurrent use. Its tools must
// not be modified.
//
// Authorization cost depends on what the principal holds, not on the size
// of the catalog: the tools' required scope sets are interned, each set is
// filed under its first scope and lists its tools, the tools that need
// nothing form a precomputed bit set, and tenant-restricted tools are
// filed under each of their tenants, grouped by scope set. Authorize therefore looks only at the
// sets filed under a scope the principal holds, the tools those sets allow,
// and the principal's tenant's own tools.
type Snapshot struct {
	version uint64
	tools   []*Tool
	byID    map[string]int
	scopes  map[string]int // scope -> index

	// Distinct non-empty scope sets, as sorted scope indices: set k is
	// setScopes[setStart[k]:setStart[k+1]]; its untenanted tools are
	// setTools[toolStart[k]:toolStart[k+1]].
	setScopes []int32
	setStart  []int32
	setTools  []int32
	toolStart []int32
	// The sets whose smallest scope is b are byFirst[firstStart[b]:firstStart[b+1]].
	byFirst    []int32
	firstStart []int32
	// open holds the untenanted tools that need no scope (bit i of word
	// i/64); openCount is how many there are.
	open      []uint64
	openCount int
	// byTenant lists, per tenant, the tools restricted to tenants that
	// include it, grouped by scope set (-1 when they need no scope).
	byTenant map[string][]tenantGroup
	// names files the tools by model name, for [View.Resolve] and SameModelName.
	names nameIndex
}

type tenantGroup struct {
	set   int32
	tools []int32
}

func newSnapshot(list []*Tool, version uint64) *Snapshot {
	slices.SortFunc(list, func(a, b *Tool) int { return strings.Compare(a.ID, b.ID) }) // IDs are unique: one order
	s := &Snapshot{
		version: version, tools: list,
		byID:     make(map[string]int, len(list)),
		scopes:   map[string]int{},
		open:     make([]uint64, (len(list)+63)/64),
		byTenant: map[string][]tenantGroup{},
	}
	setIndex := map[string]int32{} // canonical key of a scope set -> set
	type tenantSet struct {
		tenant string
		set    int32
	}
	tenantGroupOf := map[tenantSet]int{} // -> index in byTenant[tenant]
	var members [][]int32
	var key []byte
	for i, t := range list {
		s.byID[t.ID] = i
		set := int32(-1)
		if len(t.Card.Scopes) > 0 {
			idx := make([]int32, 0, len(t.Card.Scopes))
			for _, sc := range t.Card.Scopes {
				b, ok := s.scopes[sc]
				if !ok {
					b = len(s.scopes)
					s.scopes[sc] = b
				}
				idx = append(idx, int32(b))
			}
			slices.Sort(idx)
			idx = slices.Compact(idx)
			key = key[:0]
			for _, b := range idx {
				key = binary.AppendUvarint(key, uint64(b))
			}
			k, ok := setIndex[string(key)]
			if !ok {
				k = int32(len(s.setStart))
				setIndex[string(key)] = k
				s.setStart = append(s.setStart, int32(len(s.setScopes)))
				s.setScopes = append(s.setScopes, idx...)
				members = append(members, nil)
			}
			set = k
		}
		switch {
		case len(t.Tenants) > 0:
			for _, tenant := range slices.Compact(slices.Sorted(slices.Values(t.Tenants))) {
				g, ok := tenantGroupOf[tenantSet{tenant, set}]
				if !ok {
					g = len(s.byTenant[tenant])
					tenantGroupOf[tenantSet{tenant, set}] = g
					s.byTenant[tenant] = append(s.byTenant[tenant], tenantGroup{set: set})
				}
				s.byTenant[tenant][g].tools = append(s.byTenant[tenant][g].tools, int32(i))
			}
		case set < 0:
			s.open[i/64] |= 1 << (i % 64)
			s.openCount++
		default:
			members[set] = append(members[set], int32(i))
		}
	}
	s.setStart = append(s.setStart, int32(len(s.setScopes)))
	s.toolStart = make([]int32, 0, len(members)+1)
	for _, m := range members {
		s.toolStart = append(s.toolStart, int32(len(s.setTools)))
		s.setTools = append(s.setTools, m...)
	}
	s.toolStart = append(s.toolStart, int32(len(s.setTools)))
	// File each set under its smallest scope (a counting sort).
	s.firstStart = make([]int32, len(s.scopes)+1)
	for k := range members {
		s.firstStart[s.setScopes[s.setStart[k]]+1]++
	}
	for b := range len(s.scopes) {
		s.firstStart[b+1] += s.firstStart[b]
	}
	s.byFirst = make([]int32, len(members))
	next := slices.Clone(s.firstStart[:len(s.scopes)])
	for k := range members {
		b := s.setScopes[s.setStart[k]]
		s.byFirst[next[b]] = int32(k)
		next[b]++
	}
	return s
}

// Version increases with every change to the registry.
func (s *Snapshot) Version() uint64 { return s.version }

// Len returns the number of tools.
func (s *Snapshot) Len() int { return len(s.tools) }

// Tool returns the i-th tool in ID order.
func (s *Snapshot) Tool(i int) *Tool { return s.tools[i] }

// Tools returns all tools in ID order. The slice must not be modified.
func (s *Snapshot) Tools() []*Tool { return s.tools }

// Scopes returns the distinct scopes the snapshot's tools require, sorted:
// what a principal holding every scope of the catalog holds. The caller
// owns the slice.
func (s *Snapshot) Scopes() []string { return slices.Sorted(maps.Keys(s.scopes)) }

// Lookup returns the index of the tool with the given ID.
func (s *Snapshot) Lookup(id string) (int, bool) {
	i, ok := s.byID[id]
	return i, ok
}

// Authorize computes the [View] of the snapshot that p may use. It is a
// deterministic function of the snapshot and p, and agrees with the
// package-level Authorize on every tool. It copies the bit set of tools
// that need nothing, then checks only the scope sets filed under a scope p
// holds and the tools of p's tenant: its cost grows with what p may use,
// not with the size of the catalog.
func (s *Snapshot) Authorize(p Principal) *View {
	v := &View{snap: s, allowed: make([]uint64, len(s.open)), principal: p}
	if p.ID == "" || p.Tenant == "" {
		return v
	}
	copy(v.allowed, s.open)
	v.n = s.openCount
	held := make([]uint64, (len(s.scopes)+63)/64)
	for _, sc := range p.Scopes {
		if b, ok := s.scopes[sc]; ok {
			held[b/64] |= 1 << (b % 64)
		}
	}
	for w, word := range held {
		for ; word != 0; word &= word - 1 {
			b := w*64 + bits.TrailingZeros64(word)
			for _, k := range s.byFirst[s.firstStart[b]:s.firstStart[b+1]] {
				if !s.holdsSet(held, k) {
					continue
				}
				for _, i := range s.setTools[s.toolStart[k]:s.toolStart[k+1]] {
					v.allowed[i/64] |= 1 << (i % 64)
				}
				v.n += int(s.toolStart[k+1] - s.toolStart[k])
			}
		}
	}
	for _, g := range s.byTenant[p.Tenant] {
		if g.set >= 0 && !s.holdsSet(held, g.set) {
			continue
		}
		for _, i := range g.tools {
			v.allowed[i/64] |= 1 << (i % 64)
		}
		v.n += len(g.tools)
	}
	return v
}

// holdsSet reports whether every scope of set k is in held.
func (s *Snapshot) holdsSet(held []uint64, k int32) bool {
	for _, b := range s.setScopes[s.setStart[k]:s.setStart[k+1]] {
		if held[b/64]&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}

// View is the part of a [Snapshot] one principal may use. Everything that is
// shown to a model is computed from a View. Safe for concurrent use.
type View struct {
	snap      *Snapshot
	allowed   []uint64
	n         int
	principal Principal
}

// Snapshot returns the snapshot the view was computed from.
func (v *View) Snapshot() *Snapshot { return v.snap }

// Principal returns the principal the view was computed for.
func (v *View) Principal() Principal { return v.principal }

// Len returns the number of authorized tools.
func (v *View) Len() int { return v.n }

// Allowed reports whether the snapshot's i-th tool is authorized.
func (v *View) Allowed(i int) bool {
	return i >= 0 && i < len(v.snap.tools) && v.allowed[i/64]&(1<<(i%64)) != 0
}

// Get returns the authorized tool with the given ID; an unauthorized or
// unknown ID gives false, with no way to tell the two apart.
func (v *View) Get(id string) (*Tool, bool) {
	i, ok := v.snap.byID[id]
	if !ok || !v.Allowed(i) {
		return nil, false
	}
	return v.snap.tools[i], true
}

// Bits returns the authorized set as a bit set over snapshot indices (bit i
// of word i/64). It lets an index filter postings without a lookup. The
// slice must not be modified.
func (v *View) Bits() []uint64 { return v.allowed }

// Tools returns the authorized tools in ID order.
func (v *View) Tools() []*Tool {
	out := make([]*Tool, 0, v.n)
	v.each(func(t *Tool) { out = append(out, t) })
	return out
}

// each calls f for every authorized tool in ID order, visiting only set
// bits: its cost follows the authorized tools, not the snapshot.
func (v *View) each(f func(*Tool)) {
	for w, word := range v.allowed {
		for ; word != 0; word &= word - 1 {
			f(v.snap.tools[w*64+bits.TrailingZeros64(word)])
		}
	}
}

// Groups returns the sorted, distinct groups (or namespaces, for tools
// without a group) of the authorized tools: a cheap overview of what exists.
func (v *View) Groups() []string {
	set := map[string]bool{}
	v.each(func(t *Tool) {
		g := t.Card.Group
		if g == "" {
			g = t.Namespace()
		}
		set[g] = true
	})
	out := make([]string, 0, len(set))
	for g := range set {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// Filter returns the sub-view of v whose tools keep accepts: a narrower
// authorization (a worker's tool group) that discovery and the runtime use
// like any [View]. It never widens v.
func (v *View) Filter(keep func(*Tool) bool) *View {
	out := &View{snap: v.snap, allowed: make([]uint64, len(v.allowed)), principal: v.principal}
	for i, t := range v.snap.tools {
		if v.Allowed(i) && keep(t) {
			out.allowed[i/64] |= 1 << (i % 64)
			out.n++
		}
	}
	return out
}
