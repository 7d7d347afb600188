package tools

import (
	"slices"
	"sync"
)

// nameIndex files a snapshot's tools by the name a model is shown for
// their bare name (sanitized, so "delete.repository" and
// "delete_repository" share an entry), in ID order. It is built on first
// use: a program that never resolves a name never pays for it.
type nameIndex struct {
	once    sync.Once
	byModel map[string][]int32
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

// Resolve returns the tool that name stands for in v: the tool with that
// ID, or the one tool of the principal's tenant's catalog (every tool not
// restricted to other tenants, whatever scopes it needs, with or without a
// handler) whose bare name is name. How a bare name resolves does not
// depend on the principal's scopes (docs/design.md invariant 8): a bare
// name that several tools of the tenant share is ambiguous for everyone,
// and Resolve then returns nil and the IDs of the candidates v allows, in
// ID order (the others are never named). It returns nil, nil for a name v
// has no tool by: unknown, not allowed, or shared only by tools v does not
// allow, which the caller cannot tell apart.
func (v *View) Resolve(name string) (*Tool, []string) {
	if t, ok := v.Get(name); ok {
		return t, nil
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
