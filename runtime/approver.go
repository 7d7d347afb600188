package runtime

import (
	"context"
	"encoding/json"

	"github.com/toolgate/toolgate/tools"
)

// ApprovalRequest is a call the gateway holds until a human confirms it.
type ApprovalRequest struct {
	// ApprovalID is the gateway's approval, bound to the call's key and
	// arguments: granting it approves exactly this call.
	ApprovalID string
	// Principal is who asked for the call.
	Principal tools.Principal
	SessionID string
	Step      int
	// Tool is the tool's ID, and [ApprovalRequest.Card] its capability card.
	Tool string
	Card tools.Card
	// Arguments are the call's validated arguments.
	Arguments json.RawMessage
	// Reason is the gateway's explanation (irreversible, over a threshold).
	Reason string
}

// Approver asks a human to confirm a call. Approve blocks until the human
// decides or ctx ends. It returns the principal of the human who approved
// (who must hold approvals:grant and differ from the requester: the gateway
// checks both), and approved false for a refusal. An error aborts the
// step. Implementations must be safe for concurrent use by sessions.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (approver tools.Principal, approved bool, err error)
}

// ApproverFunc adapts a function to [Approver].
type ApproverFunc func(ctx context.Context, req ApprovalRequest) (tools.Principal, bool, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req ApprovalRequest) (tools.Principal, bool, error) {
	return f(ctx, req)
}
