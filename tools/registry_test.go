package tools

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

func tool(id string, scopes ...string) Tool {
	t := Tool{ID: id, Card: Card{Scopes: scopes}}
	t.Card.Name = t.Name()
	return t
}

func snapshotIDs(s *Snapshot) []string {
	var ids []string
	for _, t := range s.Tools() {
		ids = append(ids, t.ID)
	}
	return ids
}

// sharedPrefix returns two tools whose schemas start at the same byte:
// the first `{}`, valid, the second `{}]`, not JSON.
func sharedPrefix() []Tool {
	buf := []byte(`{}]`)
	a, b := tool("c/ok"), tool("c/new")
	a.InputSchema, b.InputSchema = buf[:2], buf[:3]
	return []Tool{a, b}
}

func TestRegistryAdd(t *testing.T) {
	r := NewRegistry()
	if err := r.Add(tool("b/x"), tool("a/y", "s1")); err != nil {
		t.Fatal(err)
	}
	if got, want := snapshotIDs(r.Snapshot()), []string{"a/y", "b/x"}; !slices.Equal(got, want) {
		t.Errorf("Snapshot IDs = %v, want %v (sorted)", got, want)
	}
	tests := []struct {
		name string
		add  []Tool
		want error
	}{
		{"already registered", []Tool{tool("c/new"), tool("b/x")}, ErrDuplicate},
		{"duplicate in batch", []Tool{tool("c/new"), tool("c/new")}, ErrDuplicate},
		{"invalid ID", []Tool{tool("c/new"), tool("no-namespace")}, ErrInvalidTool},
		{"card name differs", []Tool{{ID: "c/new", Card: Card{Name: "other"}}}, ErrInvalidTool},
		{"empty scope", []Tool{tool("c/new", "")}, ErrInvalidTool},
		{"schema not an object", []Tool{{ID: "c/new", Card: Card{Name: "new"}, InputSchema: []byte(`[1]`)}}, ErrInvalidTool},
		// A batch scans a shared schema once; a longer slice of the same
		// bytes is another schema.
		{"schema shares the start of a valid one", sharedPrefix(), ErrInvalidTool},
	}
	for _, m := range []struct {
		name string
		add  func(...Tool) error
	}{{"Add", r.Add}, {"Adopt", r.Adopt}} {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				before := r.Snapshot()
				err := m.add(tt.add...)
				if !errors.Is(err, tt.want) {
					t.Errorf("%s = %v, want %v", m.name, err, tt.want)
				}
				if r.Snapshot() != before {
					t.Errorf("a failed %s published a new snapshot", m.name)
				}
				if _, ok := r.Snapshot().Lookup("c/new"); ok {
					t.Errorf("a failed %s registered c/new", m.name)
				}
			})
		}
	}
}

// TestRegistryAddBigBatch checks that a batch big enough to be validated
// in parts reports its first invalid tool, whichever part finds one
// first, and registers nothing.
func TestRegistryAddBigBatch(t *testing.T) {
	ts := make([]Tool, 40000)
	for i := range ts {
		ts[i] = tool(fmt.Sprintf("big/t%d", i))
		ts[i].InputSchema = []byte(fmt.Sprintf(`{"type":"object","description":"tool %d"}`, i))
	}
	for _, bad := range []int{39999, 31000, 12345} {
		ts[bad].InputSchema = []byte(`[1]`)
	}
	r := NewRegistry()
	err := r.Add(ts...)
	if !errors.Is(err, ErrInvalidTool) || !strings.Contains(err.Error(), `"big/t12345"`) {
		t.Errorf("Add = %v, want the invalid schema of big/t12345", err)
	}
	if r.Snapshot().Len() != 0 {
		t.Errorf("a failed Add registered %d tools", r.Snapshot().Len())
	}
	for _, bad := range []int{39999, 31000, 12345} {
		ts[bad].InputSchema = nil
	}
	ts[20000] = tool("big/t1")
	if err := r.Add(ts...); !errors.Is(err, ErrDuplicate) {
		t.Errorf("Add of a batch with a duplicate = %v, want %v", err, ErrDuplicate)
	}
	ts[20000] = tool("big/t20000")
	if err := r.Add(ts...); err != nil || r.Snapshot().Len() != len(ts) {
		t.Errorf("Add = %v and %d tools, want %d", err, r.Snapshot().Len(), len(ts))
	}
}

// TestRegistryAdopt checks that Adopt keeps the schemas it is given and
// copies every other slice, as Add does.
func TestRegistryAdopt(t *testing.T) {
	schema := []byte(`{"type":"object"}`)
	scopes := []string{"read"}
	a := tool("a/x")
	a.InputSchema, a.Card.Scopes = schema, scopes
	r := NewRegistry()
	if err := r.Adopt(a); err != nil {
		t.Fatal(err)
	}
	x := r.Snapshot().Tool(0)
	if &x.InputSchema[0] != &schema[0] {
		t.Error("Adopt copied the schema it was handed")
	}
	scopes[0] = "admin"
	if x.Card.Scopes[0] != "read" {
		t.Errorf("the adopted tool's scopes = %v after the caller changed its slice, want [read]", x.Card.Scopes)
	}
}

// Scopes lists each scope once, sorted, whether one tool or several
// require it; tools that need none add nothing.
func TestSnapshotScopes(t *testing.T) {
	r := NewRegistry()
	if got := r.Snapshot().Scopes(); len(got) != 0 {
		t.Errorf("empty registry: Scopes() = %v, want none", got)
	}
	if err := r.Add(tool("a/x", "repo", "admin"), tool("a/y", "repo"), tool("b/z"), tool("c/w", "billing", "repo")); err != nil {
		t.Fatal(err)
	}
	if got, want := r.Snapshot().Scopes(), []string{"admin", "billing", "repo"}; !slices.Equal(got, want) {
		t.Errorf("Scopes() = %v, want %v", got, want)
	}
}

func TestRegistryReplaceNamespace(t *testing.T) {
	r := NewRegistry()
	if err := r.Add(tool("gh/a"), tool("gh/b"), tool("gl/a")); err != nil {
		t.Fatal(err)
	}
	if err := r.ReplaceNamespace("gh", []Tool{tool("gh/b", "repo"), tool("gh/c")}); err != nil {
		t.Fatal(err)
	}
	s := r.Snapshot()
	if got, want := snapshotIDs(s), []string{"gh/b", "gh/c", "gl/a"}; !slices.Equal(got, want) {
		t.Errorf("after ReplaceNamespace IDs = %v, want %v", got, want)
	}
	if i, _ := s.Lookup("gh/b"); !slices.Equal(s.Tool(i).Card.Scopes, []string{"repo"}) {
		t.Errorf("gh/b was not replaced: scopes %v", s.Tool(i).Card.Scopes)
	}
	for i, bad := range [][]Tool{{tool("gl/z")}, {tool("gh/d"), tool("gh/d")}, {tool("gh/")}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if err := r.ReplaceNamespace("gh", bad); err == nil {
				t.Errorf("ReplaceNamespace(gh, %v) = nil, want an error", bad)
			}
			if r.Snapshot() != s {
				t.Errorf("a failed ReplaceNamespace(gh, %v) changed the registry", bad)
			}
		})
	}
	if err := r.ReplaceNamespace("gh", nil); err != nil {
		t.Fatal(err)
	}
	if got, want := snapshotIDs(r.Snapshot()), []string{"gl/a"}; !slices.Equal(got, want) {
		t.Errorf("after ReplaceNamespace(gh, nil) IDs = %v, want %v", got, want)
	}
}

func TestRegistryRemove(t *testing.T) {
	r := NewRegistry()
	r.Add(tool("a/x"), tool("a/y"))
	v := r.Snapshot().Version()
	if !r.Remove("a/x") {
		t.Error("Remove(a/x) = false, want true")
	}
	if r.Remove("a/x") {
		t.Error("second Remove(a/x) = true, want false")
	}
	if r.Snapshot().Version() != v+1 {
		t.Errorf("version after one removal and one no-op = %d, want %d", r.Snapshot().Version(), v+1)
	}
	if got := snapshotIDs(r.Snapshot()); !slices.Equal(got, []string{"a/y"}) {
		t.Errorf("after Remove IDs = %v, want [a/y]", got)
	}
}

func TestSnapshotImmutable(t *testing.T) {
	r := NewRegistry()
	scopes := []string{"read"}
	in := tool("a/x", scopes...)
	in.Card.Scopes = scopes
	r.Add(in)
	old := r.Snapshot()
	p := Principal{ID: "u", Tenant: "t", Scopes: []string{"read"}}

	scopes[0] = "admin" // the caller reuses its slice
	r.Add(tool("a/y"))
	r.Remove("a/x")

	if got := snapshotIDs(old); !slices.Equal(got, []string{"a/x"}) {
		t.Errorf("old snapshot IDs = %v after changes, want [a/x]", got)
	}
	x := old.Tool(0)
	if !slices.Equal(x.Card.Scopes, []string{"read"}) {
		t.Errorf("old snapshot's a/x scopes = %v after the caller changed its slice, want [read]", x.Card.Scopes)
	}
	if !old.Authorize(p).Allowed(0) || Authorize(p, x) != nil {
		t.Error("old snapshot no longer authorizes a/x for a reader")
	}
	if got := snapshotIDs(r.Snapshot()); !slices.Equal(got, []string{"a/y"}) {
		t.Errorf("new snapshot IDs = %v, want [a/y]", got)
	}
	if old.Version() >= r.Snapshot().Version() {
		t.Errorf("versions did not increase: %d then %d", old.Version(), r.Snapshot().Version())
	}
}

func TestRegistrySubscribe(t *testing.T) {
	r := NewRegistry()
	ch := make(chan struct{}, 1)
	r.Subscribe(ch)
	r.Add(tool("a/x"))
	r.Add(tool("a/y")) // the channel is full: the notice is dropped, Add does not block
	r.Remove("a/missing")
	if len(ch) != 1 {
		t.Fatalf("pending notices = %d, want 1", len(ch))
	}
	<-ch
	r.Remove("a/x")
	if len(ch) != 1 {
		t.Errorf("pending notices after Remove = %d, want 1", len(ch))
	}
	<-ch
	other := make(chan struct{}, 1)
	r.Subscribe(other)
	if !r.Unsubscribe(ch) || r.Unsubscribe(ch) {
		t.Error("Unsubscribe(ch) = false, or true a second time")
	}
	r.Add(tool("a/z"))
	if len(ch) != 0 || len(other) != 1 {
		t.Errorf("after Unsubscribe(ch): ch got %d notices, other %d; want 0 and 1", len(ch), len(other))
	}
}

// TestRegistryConcurrent runs writers and readers together (meaningful
// under -race): every snapshot a reader sees is internally consistent and
// its authorization agrees with Authorize.
func TestRegistryConcurrent(t *testing.T) {
	r := NewRegistry()
	changed := make(chan struct{}, 1)
	r.Subscribe(changed)
	const writers, rounds = 3, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns := fmt.Sprintf("ns%d", w)
			for i := range rounds {
				id := fmt.Sprintf("%s/t%d", ns, i%7)
				switch i % 3 {
				case 0:
					r.Add(tool(id, fmt.Sprintf("s%d", i%5)))
				case 1:
					r.Remove(id)
				case 2:
					r.ReplaceNamespace(ns, []Tool{tool(ns+"/a", "s1"), tool(ns + "/b")})
				}
			}
		}()
	}
	done := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			p := Principal{ID: "u", Tenant: "t", Scopes: []string{"s1", "s2"}}
			for {
				select {
				case <-done:
					return
				default:
				}
				s := r.Snapshot()
				v := s.Authorize(p)
				ids := snapshotIDs(s)
				if !slices.IsSorted(ids) || len(ids) != s.Len() {
					t.Errorf("snapshot %d: IDs not sorted or Len wrong: %v", s.Version(), ids)
					return
				}
				for i, tl := range s.Tools() {
					if j, ok := s.Lookup(tl.ID); !ok || j != i {
						t.Errorf("snapshot %d: Lookup(%s) = %d, %v; want %d", s.Version(), tl.ID, j, ok, i)
					}
					if v.Allowed(i) != (Authorize(p, tl) == nil) {
						t.Errorf("snapshot %d: View and Authorize disagree on %s", s.Version(), tl.ID)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()
	// Failed writes (a duplicate Add, a Remove of a missing ID) publish
	// nothing, so the version counts at most one per write.
	if got, want := r.Snapshot().Version(), uint64(writers*rounds); got == 0 || got > want {
		t.Errorf("final version %d, want in (0, %d]", got, want)
	}
	select {
	case <-changed:
	default:
		t.Error("no change notice after concurrent writes")
	}
}

func TestViewFilterNeverWidens(t *testing.T) {
	reg := NewRegistry()
	for i, sc := range [][]string{nil, {"a"}, {"b"}, {"a", "b"}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if err := reg.Add(Tool{ID: fmt.Sprintf("ns/t%d", i), Card: Card{Name: fmt.Sprintf("t%d", i), Scopes: sc, Group: map[bool]string{true: "g1", false: "g2"}[i%2 == 0]}}); err != nil {
				t.Fatal(err)
			}
		})
	}
	v := reg.Snapshot().Authorize(Principal{ID: "p", Tenant: "t", Scopes: []string{"a"}})
	f := v.Filter(func(tl *Tool) bool { return tl.Card.Group == "g1" || tl.ID == "ns/t3" })
	var got []string
	for _, tl := range f.Tools() {
		got = append(got, tl.ID)
	}
	// t0 (no scope, g1) stays; t1 (scope a, g2) is filtered out; t2 needs b; t3 needs b.
	if len(got) != 1 || got[0] != "ns/t0" || f.Len() != 1 {
		t.Errorf("Filter = %v (Len %d), want [ns/t0]", got, f.Len())
	}
	if _, ok := f.Get("ns/t1"); ok {
		t.Error("Filter kept a tool its predicate rejects")
	}
}

// TestRegistrySharesRepeatedSchemas: tools of one batch with
// byte-identical input schemas share one registry-owned copy, which the
// caller's slices never alias; slices that start at the same byte but
// end apart are two schemas.
func TestRegistrySharesRepeatedSchemas(t *testing.T) {
	schema := []byte(`{"type":"object"}`)
	a, b, c, d := tool("a/x"), tool("a/y"), tool("a/z"), tool("a/zz")
	a.InputSchema, b.InputSchema, d.InputSchema = schema, slices.Clone(schema), schema
	c.InputSchema = []byte(`{"type":"object","properties":{}}`)
	buf := []byte(`{} `)
	e, f := tool("b/short"), tool("b/long")
	e.InputSchema, f.InputSchema = buf[:2], buf[:3]
	r := NewRegistry()
	if err := r.Add(a, b, c, d, e, f); err != nil {
		t.Fatal(err)
	}
	snap := r.Snapshot()
	schemaOf := func(id string) []byte {
		i, ok := snap.Lookup(id)
		if !ok {
			t.Fatalf("%s is not in the snapshot", id)
		}
		return snap.Tool(i).InputSchema
	}
	if got, got2 := schemaOf("b/short"), schemaOf("b/long"); string(got) != `{}` || string(got2) != `{} ` {
		t.Errorf("schemas from one start = %q, %q, want %q, %q", got, got2, `{}`, `{} `)
	}
	if &schemaOf("a/zz")[0] != &schemaOf("a/x")[0] {
		t.Error("a/x and a/zz, given one slice, have two copies of it")
	}
	x, y, z := schemaOf("a/x"), schemaOf("a/y"), schemaOf("a/z")
	if string(x) != string(schema) || string(y) != string(schema) {
		t.Fatalf("schemas = %s, %s, want %s", x, y, schema)
	}
	if &x[0] != &y[0] {
		t.Error("a/x and a/y have two copies of one schema, want one shared")
	}
	if &x[0] == &schema[0] || &y[0] == &b.InputSchema[0] {
		t.Error("the registry's schema aliases the caller's slice")
	}
	if &z[0] == &x[0] || string(z) != string(c.InputSchema) {
		t.Errorf("a/z's schema = %s (shared: %v), want its own %s", z, &z[0] == &x[0], c.InputSchema)
	}
}

// TestRegistryAddCutsSchemasFromBlocks: the copies of a batch's distinct
// schemas lie one after the other in a shared block (chunks), each with
// no room to grow over the next.
func TestRegistryAddCutsSchemasFromBlocks(t *testing.T) {
	batch := make([]Tool, 3)
	for i := range batch {
		batch[i] = tool(fmt.Sprintf("a/t%d", i))
		batch[i].InputSchema = []byte(fmt.Sprintf(`{"type":"object","properties":{"p%d":{}}}`, i))
	}
	r := NewRegistry()
	if err := r.Add(batch...); err != nil {
		t.Fatal(err)
	}
	snap := r.Snapshot()
	var prev []byte
	for i := range batch {
		j, ok := snap.Lookup(batch[i].ID)
		if !ok {
			t.Fatalf("%s is not in the snapshot", batch[i].ID)
		}
		s := snap.Tool(j).InputSchema
		if cap(s) != len(s) {
			t.Errorf("%s's schema has room to grow: cap %d, len %d", batch[i].ID, cap(s), len(s))
		}
		if prev != nil && uintptr(unsafe.Pointer(&s[0])) != uintptr(unsafe.Pointer(&prev[len(prev)-1]))+1 {
			t.Errorf("%s's schema %s is not next to the one before, %s", batch[i].ID, s, prev)
		}
		prev = s
	}
}
