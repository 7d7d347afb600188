package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/tools"
)

// Check makes the checks Execute makes before it claims a slot — an
// authenticated principal, authorization on the current snapshot, and
// validation (JSON Schema, then the tool's Validator) — and nothing else:
// no rate limit, no claim, no handler, no audit, no metrics. It returns nil
// or the *Error Execute would return. An agent loop uses it to send a
// model's malformed call back for repair before it becomes a step;
// Execute still checks everything again. Safe for concurrent use.
func (g *Gateway) Check(ctx context.Context, call Call) error {
	p := call.Principal
	if p.ID == "" || p.Tenant == "" {
		return &Error{Type: Unauthenticated, Message: "the call has no authenticated principal"}
	}
	snap := g.reg.Snapshot()
	i, ok := snap.Lookup(call.Tool)
	if !ok {
		return &Error{Type: UnknownTool, Message: fmt.Sprintf("no tool %q", truncate(call.Tool, 128))}
	}
	t := snap.Tool(i)
	if err := tools.Authorize(p, t); err != nil {
		if errors.Is(err, tools.ErrWrongTenant) {
			return &Error{Type: UnknownTool, Message: fmt.Sprintf("no tool %q", call.Tool)}
		}
		return &Error{Type: PermissionDenied, Message: err.Error()}
	}
	if gerr := g.validate(ctx, &exec{call: call, tool: t}); gerr != nil {
		return gerr
	}
	return nil
}
