package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/toolgate/toolgate/internal/errorid"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// Approve grants the approval with the given ID on behalf of approver, who
// must be authenticated, hold [ApprovalScope], belong to the requester's
// tenant and not be the requester (a caller cannot approve its own call).
// Granting an approval the same approver already granted returns it again.
// The approval lets exactly the call it was created for run: the same
// idempotency key and argument fingerprint. It returns *Error values:
// UNAUTHENTICATED, PERMISSION_DENIED, NOT_FOUND (also for another tenant's
// approval), VALIDATION_ERROR (expired, already decided by another
// approver or the other way, or the same arguments were denied at another
// step of the session: a request filed before that denial cannot grant
// what it refused), INTERNAL_ERROR. Every decision is audited.
// Safe for concurrent use.
func (g *Gateway) Approve(ctx context.Context, approver tools.Principal, id string) (*store.Approval, error) {
	return g.decideApproval(ctx, approver, id, true)
}

// Deny refuses the approval with the given ID on behalf of approver, with
// [Gateway.Approve]'s checks and errors. The call it covers does not run:
// sent again with the same arguments, it is PERMISSION_DENIED (naming the
// approval and the approver) without a new approval request, until the
// approval expires ([Options.ApprovalTTL]); a model that loops on a
// refused payment meets the same answer each time, and so does the same
// call sent at any other step of the session by the same principal (a
// second, session-wide denial record, keepSessionDenial). Other
// arguments, another session or another principal are another call,
// asked about anew. Denying an approval the same approver already denied
// returns it again. The store must record denials ([store.ApprovalDenier];
// the four stores of this module do); otherwise Deny is INTERNAL_ERROR,
// saying so. Safe for concurrent use.
func (g *Gateway) Deny(ctx context.Context, approver tools.Principal, id string) (*store.Approval, error) {
	return g.decideApproval(ctx, approver, id, false)
}

// decideApproval is Approve (grant) or Deny, audited.
func (g *Gateway) decideApproval(ctx context.Context, approver tools.Principal, id string, grant bool) (*store.Approval, error) {
	now := g.clock.Now()
	a, gerr := g.decide(ctx, approver, id, grant)
	e := store.AuditEntry{Time: now, Tenant: storableText(approver.Tenant),
		Principal: storableText(approver.ID), Tool: "approval",
		ApprovalID: cleanText(id, 128), Decision: store.DecisionAllow, Outcome: store.OutcomeOK}
	if a != nil {
		e.Key, e.SessionID, e.Step, e.Tool = a.Key, a.Slot.SessionID, a.Slot.Step, a.Slot.Tool
		e.Reason = cleanText("approval "+decision(grant)+" for "+a.Requester, 512)
	}
	if gerr != nil {
		e.Decision, e.Reason, e.Outcome = store.DecisionDeny, cleanText(gerr.Message, 512), outcomeOf(nil, gerr, false)
		g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: approval decision refused", slog.String("approver", approver.ID),
			slog.String("approval_id", e.ApprovalID), slog.String("decision", decision(grant)), slog.String("reason", gerr.Message))
	}
	e.Latency = g.clock.Now().Sub(now)
	if err := g.store.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		g.metrics.auditFailure()
		g.log.LogAttrs(ctx, slog.LevelError, "gateway: audit append failed", slog.String("error", err.Error()))
	}
	if gerr != nil {
		return nil, gerr
	}
	return a, nil
}

// decision names a grant or a denial, as the audit and messages say it.
func decision(grant bool) string {
	if grant {
		return "granted"
	}
	return "denied"
}

func (g *Gateway) decide(ctx context.Context, approver tools.Principal, id string, grant bool) (*store.Approval, *Error) {
	if approver.ID == "" || approver.Tenant == "" {
		return nil, &Error{Type: Unauthenticated, Message: "the approval has no authenticated approver"}
	}
	if !plainName(approver.ID) || !plainName(approver.Tenant) {
		return nil, &Error{Type: Unauthenticated, Message: "the approver is not valid UTF-8 or holds a control character"}
	}
	verb := "grant"
	if !grant {
		verb = "deny"
	}
	if !approver.HasScope(ApprovalScope) {
		g.metrics.denied("", "missing_scope")
		return nil, &Error{Type: PermissionDenied, Message: verb + "ing approvals needs scope " + ApprovalScope, Scopes: []string{ApprovalScope}}
	}
	a, gerr := g.tenantApproval(ctx, approver.Tenant, id)
	if gerr != nil {
		return nil, gerr
	}
	if a.Requester == approver.ID {
		g.metrics.denied(a.Slot.Tool, "self_approval")
		return nil, &Error{Type: PermissionDenied, Message: "a principal cannot " + verb + " the approval of its own call"}
	}
	if a.Decided() {
		if a.Granted == grant && a.Approver == approver.ID {
			if !grant {
				g.keepSessionDenial(ctx, a) // a retry after the session's denial could not be kept
			}
			return &a, nil
		}
		return nil, &Error{Type: ValidationError, Message: "the approval was already " + decision(a.Granted) + " by " + cleanText(a.Approver, 128)}
	}
	now := g.clock.Now()
	if grant {
		if d, gerr := g.deniedInSession(ctx, a, now); gerr != nil || d != nil {
			if gerr == nil {
				gerr = &Error{Type: ValidationError, ApprovalID: d.ID,
					Message: fmt.Sprintf("the same arguments to %s were denied at step %d of this session by %s at %s (approval %s); a denial stands until it expires at %s, so this request cannot be granted",
						a.Slot.Tool, d.Slot.Step, cleanText(d.Approver, 128), d.DeniedAt.UTC().Format(time.RFC3339), d.ID, d.ExpiresAt.UTC().Format(time.RFC3339))}
			}
			return nil, gerr
		}
	}
	var (
		decided store.Approval
		err     error
	)
	if grant {
		decided, err = g.store.GrantApproval(context.WithoutCancel(ctx), id, approver.ID, now)
	} else if d, ok := g.store.(store.ApprovalDenier); ok {
		decided, err = d.DenyApproval(context.WithoutCancel(ctx), id, approver.ID, now)
	} else {
		return nil, &Error{Type: Internal, Message: "the gateway's store does not record denials (store.ApprovalDenier); the approval stays pending until it expires"}
	}
	switch {
	case err == nil:
		if !grant {
			g.keepSessionDenial(ctx, decided)
		}
		return &decided, nil
	case errors.Is(err, store.ErrApprovalState):
		return nil, &Error{Type: ValidationError, Message: "the approval expired or was decided concurrently; read it again, or send the call again for a new one"}
	case errors.Is(err, store.ErrNotFound):
		return nil, noApproval(id)
	default:
		return nil, g.storeFailure(ctx, verb+" the approval", err)
	}
}

// keepSessionDenial records denial a for the rest of its session as well:
// a second approval, under [sessionDenialID], denied by the same approver
// and expiring with a, which the same arguments to the same tool from the
// same principal meet at any other step (facts.refused). A client that
// gives each call a new step (an MCP client, a model re-sending a refused
// payment) is then refused instead of asking the approver again. It is
// kept after a itself is decided: if it cannot be written (logged), the
// denial of a stands and a repeat at another step is asked about anew.
// A session denial already in force is kept as it is.
func (g *Gateway) keepSessionDenial(ctx context.Context, a store.Approval) {
	d, ok := g.store.(store.ApprovalDenier)
	if !ok {
		return
	}
	ctx = context.WithoutCancel(ctx)
	m := store.Approval{ID: sessionDenialID(a.Slot.Tenant, a.Slot.Principal, a.Slot.SessionID, a.Slot.Tool, a.Fingerprint),
		Slot: a.Slot, Key: a.Key, Fingerprint: a.Fingerprint, Requester: a.Requester, Arguments: a.Arguments,
		Taint: a.Taint, Definition: a.Definition, CreatedAt: a.DeniedAt, ExpiresAt: a.ExpiresAt}
	_, err := g.store.CreateApproval(ctx, m)
	if err == nil {
		_, err = d.DenyApproval(ctx, m.ID, a.Approver, a.DeniedAt)
	}
	if err != nil && !errors.Is(err, store.ErrApprovalState) {
		g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: could not keep a denial for its session; a repeat at another step asks again",
			slog.String("approval_id", a.ID), slog.String("error", err.Error()))
	}
}

// deniedInSession returns the session's denial of pending approval a's
// arguments ([sessionDenialID]) when one is in force at now, else nil. A
// request filed at another step before that denial (a client that sent
// the call again while the approver was deciding) cannot then be
// granted: a denial cannot be withdrawn, and the grant would run what was
// denied.
func (g *Gateway) deniedInSession(ctx context.Context, a store.Approval, now time.Time) (*store.Approval, *Error) {
	if _, ok := g.store.(store.ApprovalDenier); !ok {
		return nil, nil
	}
	d, err := g.getApproval(ctx, sessionDenialID(a.Slot.Tenant, a.Slot.Principal, a.Slot.SessionID, a.Slot.Tool, a.Fingerprint))
	if err != nil {
		return nil, g.storeFailure(ctx, "look up the session's denials", err)
	}
	if !deniesInSession(&d, a.Slot, a.Fingerprint, now) {
		return nil, nil
	}
	return &d, nil
}

// deniesInSession reports that d is a denial, in force at now, of the
// arguments fp sent to slot's tool by slot's principal in slot's session,
// at any step.
func deniesInSession(d *store.Approval, slot store.Slot, fp string, now time.Time) bool {
	return d != nil && d.Denied && d.Fingerprint == fp && d.ExpiresAt.After(now) &&
		d.Slot.Tenant == slot.Tenant && d.Slot.Principal == slot.Principal && d.Slot.SessionID == slot.SessionID && d.Slot.Tool == slot.Tool
}

// Approval returns the approval with the given ID to a principal of its
// tenant who may see it: the requester, or a holder of [ApprovalScope] (an
// approver reads what the call will do before granting it). Another
// tenant's approval is NOT_FOUND. Safe for concurrent use.
func (g *Gateway) Approval(ctx context.Context, p tools.Principal, id string) (*store.Approval, error) {
	if p.ID == "" || p.Tenant == "" {
		return nil, &Error{Type: Unauthenticated, Message: "no authenticated principal"}
	}
	a, gerr := g.tenantApproval(ctx, p.Tenant, id)
	if gerr != nil {
		return nil, gerr
	}
	if a.Requester != p.ID && !p.HasScope(ApprovalScope) {
		return nil, &Error{Type: PermissionDenied, Message: "reading another principal's approval needs scope " + ApprovalScope, Scopes: []string{ApprovalScope}}
	}
	return &a, nil
}

// tenantApproval reads the approval id for a principal of tenant. An ID
// no approval could have, and an approval of another tenant, are
// NOT_FOUND alike, so that a principal cannot learn another tenant's IDs;
// a store failure is INTERNAL_ERROR.
func (g *Gateway) tenantApproval(ctx context.Context, tenant, id string) (store.Approval, *Error) {
	if !possibleApprovalID(id) {
		return store.Approval{}, noApproval(id)
	}
	a, err := g.store.GetApproval(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.Slot.Tenant != tenant) {
		return store.Approval{}, noApproval(id)
	}
	if err != nil {
		return store.Approval{}, g.storeFailure(ctx, "read the approval", err)
	}
	return a, nil
}

// noApproval is the NOT_FOUND of an approval ID, echoed bounded.
func noApproval(id string) *Error {
	return &Error{Type: NotFound, Message: "no approval " + cleanText(id, 128)}
}

// storeFailure logs a store error under a fresh error ID and returns the
// INTERNAL_ERROR a client sees: what could not be done and the ID.
func (g *Gateway) storeFailure(ctx context.Context, what string, err error) *Error {
	id := errorid.New()
	g.log.LogAttrs(ctx, slog.LevelError, "gateway: store failure", slog.String("error_id", id),
		slog.String("step", what), slog.String("error", err.Error()))
	return &Error{Type: Internal, Retryable: true, ErrorID: id,
		Message: "the gateway could not " + what + "; retry (error " + id + ")"}
}

// possibleApprovalID reports whether id could name an approval: a
// [plainName] of at most 128 bytes (the gateway's are 36). An ID arrives
// in a URL path, where "%ff" and "%00" may be; a store such as PostgreSQL
// fails on them rather than finding nothing, so they are never looked up.
func possibleApprovalID(id string) bool {
	return len(id) <= 128 && plainName(id)
}
