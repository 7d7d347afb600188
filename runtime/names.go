package runtime

import (
	"github.com/toolgate/toolgate/tools"
)

// names is a session's model-facing names (^[a-zA-Z0-9_-]{1,64}$) read
// against one registry snapshot. The session binds each name it shows to
// its tool ID for its whole life ([tools.SessionNames]): a bare name
// shared by several tools of the tenant's catalog (github/create_issue,
// gitlab/create_issue), whatever their scopes, is prefixed with the
// namespace, so the model is never shown an ambiguous name and a name
// always maps back to exactly one tool; a later snapshot never re-points
// a name the model has seen (a newcomer sharing it is qualified), and the
// name of a tool that left the catalog maps to that tool still, so it
// reaches nothing (docs/design.md invariant 8). Binding is a map look-up
// for a tool already shown: no step rebuilds the names of the catalog.
type names struct {
	snap  *tools.Snapshot
	bound *tools.SessionNames
}

// names returns the session's names against snap; the caller holds s.mu.
func (s *Session) names(snap *tools.Snapshot) names { return names{snap: snap, bound: s.bound} }

// name returns the model-facing name of t, binding it in the session
// when the model is shown it for the first time.
func (n names) name(t *tools.Tool) string {
	name, _ := n.bound.Name(n.snap, t)
	return name
}

// id returns the tool ID a model-facing name was bound to in the session.
// The tool may have left the catalog since: the caller finds it in its
// view or refuses the name as unknown, never resolves the name otherwise.
func (n names) id(name string) (string, bool) { return n.bound.ID(name) }
