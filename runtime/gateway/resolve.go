package gateway

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/tools"
)

// maxCandidates bounds the candidate IDs an ambiguous name is answered with.
const maxCandidates = 20

// Resolve maps what a client wrote in a call's "tool" to the tool ID
// Execute takes, as the HTTP contract says: a tool's ID stands for itself;
// a bare name ("transfer_funds") stands for the one tool with that name
// among those p may execute (authorized for p on the registry's current
// snapshot, with a handler). A bare name no usable tool has is returned
// unchanged, so Execute answers UNKNOWN_TOOL as for any unknown ID; a bare
// name several usable tools have is a VALIDATION_ERROR (retryable) whose
// Candidates are their IDs, sorted. Tools p may not use are never
// candidates, so the answer reveals nothing about them. Safe for
// concurrent use.
func (g *Gateway) Resolve(p tools.Principal, tool string) (string, *Error) {
	snap := g.reg.Snapshot()
	if _, ok := snap.Lookup(tool); ok || strings.Contains(tool, "/") || p.ID == "" || p.Tenant == "" {
		return tool, nil
	}
	var ids []string
	for _, t := range snap.Authorize(p).Tools() {
		if t.Name() == tool && t.Handler != nil {
			ids = append(ids, t.ID)
		}
	}
	switch len(ids) {
	case 0:
		return tool, nil
	case 1:
		return ids[0], nil
	}
	slices.Sort(ids)
	if len(ids) > maxCandidates {
		ids = ids[:maxCandidates]
	}
	msg := fmt.Sprintf("tool name %q is ambiguous: call one of %s by its ID", truncate(tool, 64), strings.Join(ids, ", "))
	e := Invalid(Violation{Pointer: "/tool", Message: msg})
	e.Message = msg
	e.Candidates = ids
	return tool, e
}
