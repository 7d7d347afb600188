package gateway

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/tools"
)

// maxCandidates bounds the candidate IDs an ambiguous name is answered with.
const maxCandidates = 20

// Resolve maps what a client wrote in a call's "tool" to the tool ID
// Execute takes. A tool's ID stands for itself; a bare name
// ("transfer_funds") stands for the one tool of p's tenant with that name,
// whatever scopes it needs ([tools.View.Resolve]), so that a name resolves
// alike for every caller of the tenant (docs/design.md invariant 8). A bare
// name several tools of the tenant share is a VALIDATION_ERROR (retryable)
// for every caller, even one who may use only one of them; its Candidates
// are the IDs of those p may use, sorted. A bare name p may use no tool
// by is returned unchanged, so Execute answers UNKNOWN_TOOL as for any
// unknown ID: tools p may not use are never named, so the answer reveals
// nothing about them. Safe for concurrent use.
func (g *Gateway) Resolve(p tools.Principal, tool string) (string, *Error) {
	snap := g.reg.Snapshot()
	if _, ok := snap.Lookup(tool); ok || p.ID == "" || p.Tenant == "" {
		return tool, nil
	}
	t, ids := snap.Authorize(p).Resolve(tool)
	switch {
	case t != nil:
		return t.ID, nil
	case len(ids) == 0:
		return tool, nil
	}
	if len(ids) > maxCandidates {
		ids = ids[:maxCandidates]
	}
	msg := fmt.Sprintf("tool name %q is ambiguous: several tools have it; call one by its ID (yours: %s)", textcut.Prefix(tool, 64), strings.Join(ids, ", "))
	e := Invalid(Violation{Pointer: "/tool", Message: msg})
	e.Message = msg
	e.Candidates = ids
	return tool, e
}
