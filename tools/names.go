package tools

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// nameIndex files a snapshot's tools by the name a model is shown for
// their bare name (sanitized, so "delete.repository" and
// "delete_repository" share an entry), in ID order, and, apart, the few
// whose qualified name is too long to show whole, by the part a hashed
// name keeps of it. Each is built on first use: a program that never
// resolves or binds a name never pays for it.
type nameIndex struct {
	once     sync.Once
	byModel  map[string][]int32
	longOnce sync.Once
	byCut    map[string][]int32
}

func (s *Snapshot) modelNamed(name string) []int32 {
	s.names.once.Do(func() {
		s.names.byModel = make(map[string][]int32, len(s.tools))
		for i, t := range s.tools {
			k := sanitizeModelName(t.Name())
			s.names.byModel[k] = append(s.names.byModel[k], int32(i))
		}
	})
	return s.names.byModel[sanitizeModelName(name)]
}

// fallbackOfOther reports whether name is one [ModelName] falls back to
// for a tool of tenant's catalog other than self: its qualified name or
// its first hashed one. Anyone can compute those from the tool's ID, so a
// server listing a tool under such a name must not be shown it bare.
func (s *Snapshot) fallbackOfOther(tenant, name string, self *Tool) bool {
	other := func(i int32, match func(full, suffix string) bool) bool {
		t := s.tools[i]
		return t.ID != self.ID && inTenant(t, tenant) && match(fallbackNames(t.Namespace(), sanitizeModelName(t.Name()), t.ID))
	}
	// qualified reports whether a tool other than self has full as its
	// qualified name and match holds for it: full is NS__NAME, split at
	// any of its "__".
	qualified := func(full string, match func(full, suffix string) bool) bool {
		for i := 1; i+2 < len(full); i++ {
			if full[i] != '_' || full[i+1] != '_' {
				continue
			}
			for _, j := range s.modelNamed(full[i+2:]) {
				if other(j, func(f, suffix string) bool { return f == full && match(f, suffix) }) {
					return true
				}
			}
		}
		return false
	}
	always := func(string, string) bool { return true }
	if qualified(name, always) {
		return true
	}
	const hashLen = 9 // "_" and 8 hex digits
	if len(name) <= hashLen || name[len(name)-hashLen] != '_' || strings.Trim(name[len(name)-hashLen+1:], "0123456789abcdef") != "" {
		return false
	}
	hashed := func(full, suffix string) bool { return withSuffix(full, suffix) == name }
	if qualified(name[:len(name)-hashLen], hashed) {
		return true
	}
	if len(name) < maxModelName {
		return false
	}
	// A qualified name too long to show is cut before its hash suffix.
	s.names.longOnce.Do(func() {
		s.names.byCut = map[string][]int32{}
		for i, t := range s.tools {
			if full := qualifiedName(t.Namespace(), sanitizeModelName(t.Name())); len(full) > maxModelName-hashLen {
				k := full[:maxModelName-hashLen]
				s.names.byCut[k] = append(s.names.byCut[k], int32(i))
			}
		}
	})
	for _, i := range s.names.byCut[name[:maxModelName-hashLen]] {
		if other(i, hashed) {
			return true
		}
	}
	return false
}

// inTenant reports whether t is in tenant's catalog: not restricted to
// other tenants, whatever scopes it needs.
func inTenant(t *Tool, tenant string) bool {
	return len(t.Tenants) == 0 || slices.Contains(t.Tenants, tenant)
}

// SameModelName returns, in ID order, the tools of tenant's catalog (every
// tool not restricted to other tenants, whatever scopes it needs) whose
// bare names [ModelName] shows alike: the same after every character
// outside [a-zA-Z0-9_-] becomes '_' ("delete.repository" and
// "delete_repository", or the same bare name in two namespaces). When it
// returns more than one tool, none of them may be shown under its bare
// name. The caller owns the slice.
func (s *Snapshot) SameModelName(tenant, name string) []*Tool {
	var out []*Tool
	for _, i := range s.modelNamed(name) {
		if t := s.tools[i]; inTenant(t, tenant) {
			out = append(out, t)
		}
	}
	return out
}

// sharedModelName reports whether more than one tool of tenant's catalog
// is shown alike as name: len(SameModelName(tenant, name)) > 1, without
// the slice.
func (s *Snapshot) sharedModelName(tenant, name string) bool {
	n := 0
	for _, i := range s.modelNamed(name) {
		if inTenant(s.tools[i], tenant) {
			if n++; n > 1 {
				return true
			}
		}
	}
	return false
}

// Resolve returns the tool that name stands for in v: the tool with that
// ID, or the one tool of the principal's tenant's catalog (every tool not
// restricted to other tenants, whatever scopes it needs, with or without a
// handler) whose bare name is name. A name holding a '/' is read as an ID
// alone, as every [Tool.ID] holds one: a tool another server names
// "github/create_issue" never stands in for GitHub's tool where that one
// is not the principal's or has left the catalog. How a bare name
// resolves does not depend on the principal's scopes (docs/design.md
// invariant 8): a bare name that several tools of the tenant share is
// ambiguous for everyone, and Resolve then returns nil and the IDs of the
// candidates v allows, in ID order (the others are never named). It
// returns nil, nil for a name v has no tool by: unknown, not allowed, or
// shared only by tools v does not allow, which the caller cannot tell
// apart.
func (v *View) Resolve(name string) (*Tool, []string) {
	if t, ok := v.Get(name); ok {
		return t, nil
	}
	if strings.Contains(name, "/") {
		return nil, nil
	}
	var allowed []string
	var only *Tool
	same := 0
	for _, i := range v.snap.modelNamed(name) {
		t := v.snap.tools[i]
		if t.Name() != name || !inTenant(t, v.principal.Tenant) {
			continue
		}
		same++
		if v.Allowed(int(i)) {
			allowed = append(allowed, t.ID)
			only = t
		}
	}
	switch {
	case len(allowed) == 0:
		return nil, nil
	case same == 1:
		return only, nil
	}
	return nil, allowed
}

// SessionNames binds the names one session has shown a model or a client
// to tool IDs, for the session's whole life (docs/design.md invariant 8).
// A tool is named on first use by [ModelName]: its bare name, unless
// another tool of the tenant's catalog, whatever its scopes, is shown
// alike ([Snapshot.SameModelName]), the session has bound that name to
// another tool, or it is reserved; then its server-qualified name
// ("github__delete_repository"), or a hashed one should that be taken
// too. A binding never changes: a tool that later shares its name with a
// newcomer keeps it (the newcomer is qualified), and the name of a tool
// that left the catalog still stands for that tool, so it reaches
// nothing rather than another tool. Bindings grow with the distinct tools
// the session shows, bounded by the catalog.
//
// A SessionNames is not safe for concurrent use: its session serialises
// the calls.
type SessionNames struct {
	tenant   string
	reserved []string
	byName   map[string]string
	byID     map[string]string
}

// NewSessionNames returns the empty bindings of a session of tenant's;
// reserved are names the session's own tools take (find_tools), never
// given to a catalog tool.
func NewSessionNames(tenant string, reserved ...string) *SessionNames {
	return &SessionNames{tenant: tenant, reserved: slices.Clone(reserved),
		byName: map[string]string{}, byID: map[string]string{}}
}

// Name returns the name t is shown under in the session, binding one on
// first use (decided on snap, the catalog t was found in); fresh reports
// a new binding.
func (n *SessionNames) Name(snap *Snapshot, t *Tool) (name string, fresh bool) {
	if name, ok := n.byID[t.ID]; ok {
		return name, false
	}
	name = ModelName(t.ID, func(s string) bool {
		if _, bound := n.byName[s]; bound || slices.Contains(n.reserved, s) {
			return true
		}
		return snap.sharedModelName(n.tenant, s) || snap.fallbackOfOther(n.tenant, s, t)
	})
	n.byName[name] = t.ID
	n.byID[t.ID] = name
	return name, true
}

// ID returns the ID of the tool name is bound to, which may have left the
// catalog since, and whether name is bound.
func (n *SessionNames) ID(name string) (string, bool) {
	id, ok := n.byName[name]
	return id, ok
}

// Left reports whether name is bound to a tool that snap's catalog of the
// session's tenant no longer has (removed, quarantined, restricted to
// other tenants). The name stays bound all the same.
func (n *SessionNames) Left(snap *Snapshot, name string) bool {
	id, ok := n.byName[name]
	if !ok {
		return false
	}
	i, ok := snap.Lookup(id)
	return !ok || !inTenant(snap.tools[i], n.tenant)
}

// ErrNameBound is wrapped by [SessionNames.Bind] for a binding that
// would give a name or a tool a second meaning.
var ErrNameBound = errors.New("tools: name already bound")

// Bind binds name to the tool id, as a session shown that name before
// (restoring a session's bindings, [SessionNames.Bindings]). It fails,
// binding nothing, for a name a model cannot be shown, a reserved name,
// or a name or an ID bound otherwise ([ErrNameBound]); binding a pair
// again is a no-op.
func (n *SessionNames) Bind(name, id string) error {
	switch {
	case len(name) == 0 || len(name) > maxModelName || sanitizeModelName(name) != name:
		return fmt.Errorf("tools: %q is not a model-facing name", name)
	case slices.Contains(n.reserved, name):
		return fmt.Errorf("%w: %q is reserved", ErrNameBound, name)
	}
	if old, ok := n.byName[name]; ok && old != id {
		return fmt.Errorf("%w: %q names %s", ErrNameBound, name, old)
	}
	if old, ok := n.byID[id]; ok && old != name {
		return fmt.Errorf("%w: %s is named %q", ErrNameBound, id, old)
	}
	n.byName[name] = id
	n.byID[id] = name
	return nil
}

// Bindings returns a copy of the bindings, each name with its tool ID.
func (n *SessionNames) Bindings() map[string]string { return maps.Clone(n.byName) }

// Len returns the number of names bound.
func (n *SessionNames) Len() int { return len(n.byName) }
