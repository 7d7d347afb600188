package runtime

import (
	"sync"

	"github.com/toolgate/toolgate/tools"
)

// names maps tool IDs to the names a model is shown (^[a-zA-Z0-9_-]{1,64}$)
// and back, for one registry snapshot. A bare name shared by several tools
// (github/create_issue, gitlab/create_issue) is prefixed with the namespace
// for all of them, so the model is never shown an ambiguous name and a name
// always maps back to exactly one tool. The names are computed over the
// whole snapshot, never over one caller's view, so a tool has the same name
// for every caller, whatever their scopes (docs/design.md invariant 8).
type names struct {
	snap   *tools.Snapshot
	byID   map[string]string
	byName map[string]string
}

// nameCache keeps the names of the latest snapshot.
type nameCache struct {
	mu  sync.Mutex
	cur *names
}

func (c *nameCache) get(snap *tools.Snapshot) *names {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil && c.cur.snap == snap {
		return c.cur
	}
	c.cur = newNames(snap)
	return c.cur
}

func newNames(snap *tools.Snapshot) *names {
	n := &names{snap: snap, byID: make(map[string]string, snap.Len()), byName: make(map[string]string, snap.Len())}
	bare := make(map[string]int, snap.Len())
	for _, t := range snap.Tools() {
		bare[tools.ModelName(t.Name(), nil)]++
	}
	taken := func(s string) bool {
		_, used := n.byName[s]
		return used || bare[s] > 1 || s == FindToolsName
	}
	for _, t := range snap.Tools() {
		name := tools.ModelName(t.ID, taken)
		n.byID[t.ID] = name
		n.byName[name] = t.ID
	}
	return n
}

// name returns the model-facing name of a tool ID.
func (n *names) name(id string) string { return n.byID[id] }

// id returns the tool ID a model-facing name stands for.
func (n *names) id(name string) (string, bool) {
	id, ok := n.byName[name]
	return id, ok
}
