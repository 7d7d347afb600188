package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

// ApprovalInput is the key of the one input request a held call's
// input_required result carries: a form elicitation naming the approval.
const ApprovalInput = "toolgate.approval"

// CodeNoApprover is the code of a held call's refusal where no principal
// but the requester could grant it ([Options.HasApprover]).
const CodeNoApprover = "NO_APPROVER"

// DefaultStateTTL is the default of [Options.StateTTL]: the gateway's
// default approval lifetime.
const DefaultStateTTL = time.Hour

// DefaultElicitTimeout is Options.ElicitTimeout's default: how long a
// held call waits for a session revision's client to answer its approval
// elicitation.
const DefaultElicitTimeout = 2 * time.Minute

// elicitTimeout is a sending middleware that bounds the server's
// elicitation/create requests (the approval request the SDK sends a
// session revision's client during a held call) by [Options.ElicitTimeout],
// so a client that never answers does not hold the call, and its
// goroutine, forever. Only the wait for the answer is bounded: the call
// the answer resumes runs with the request's own context.
func (s *Server) elicitTimeout(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "elicitation/create" {
			return next(ctx, method, req)
		}
		ctx, cancel := s.elicitDeadline(ctx, s.opts.ElicitTimeout)
		defer cancel()
		res, err := next(ctx, method, req)
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer to the approval request within %s: the call was not executed; "+
				"send it again with the same step (once the approval is granted, it runs)", s.opts.ElicitTimeout)
		}
		return res, err
	}
}

// newest is the first protocol revision with multi-round-trip results.
const newest = "2026-07-28"

// held answers a call the gateway holds for approval (ge is its
// CONFIRMATION_REQUIRED). To a client that can answer an elicitation it
// is an input_required result: an elicitation that names the approval
// and how an approver grants it, and a signed request state that resumes
// this same call (the gateway slot sessionID/step). Where the client
// cannot answer one, or has answered one already on a revision older
// than 2026-07-28 (the SDK asks it once, in-band, then this answer is
// final for that request), it is the gateway's refusal with the
// approval_id, as before: the client sends the same call with the same
// step once it is granted. Where no one could grant it, the refusal says
// so and names no approval.
func (ss *session) held(ctx context.Context, req *sdk.CallToolRequest, p tools.Principal, tool string, args json.RawMessage, sessionID string, step int, ge *gateway.Error) *sdk.CallToolResult {
	if !ss.s.hasApprover(ctx, p) {
		no := *ge
		no.ApprovalID, no.Retryable, no.Code = "", false, CodeNoApprover
		no.Message = fmt.Sprintf("%s needs approval by another principal of tenant %s holding scope %s, and this server has no approver for it, so the call was not executed and cannot be approved here. "+
			"An operator serves it with an approver: over HTTP, a token of another principal with %s (approvals at %s{approval_id}); over stdio, --data DIR and toolgate mcp approve.",
			tool, p.Tenant, gateway.ApprovalScope, gateway.ApprovalScope, ApprovalsPath)
		return gatewayError(&no, step)
	}
	caps := req.ClientCapabilities()
	resumedOld := req.Params.RequestState != "" && req.ProtocolVersion() < newest
	if caps == nil || caps.Elicitation == nil || resumedOld {
		return gatewayError(ge, step)
	}
	digest, err := argsDigest(args)
	if err != nil { // the gateway validated them: not reached
		return gatewayError(ge, step)
	}
	st := heldState{Version: 1, Tenant: p.Tenant, Principal: p.ID, Tool: tool, Args: digest,
		SessionID: sessionID, Step: step, Approval: ge.ApprovalID, Expires: ss.s.now().Add(ss.s.opts.StateTTL).Unix()}
	return &sdk.CallToolResult{
		InputRequests: sdk.InputRequestMap{ApprovalInput: &sdk.ElicitParams{
			Mode: "form",
			Message: fmt.Sprintf("%s is irreversible and needs approval by another principal holding %s (approval %s). "+
				"Ask an approver to grant it (POST %s%s with the approver's own token, or toolgate mcp approve %s), then accept to resume this call; decline to drop it. "+
				"An approver may deny it instead (the body {\"decision\":\"deny\"}, or --deny): resumed, it is then refused.",
				tool, gateway.ApprovalScope, ge.ApprovalID, ApprovalsPath, ge.ApprovalID, ge.ApprovalID),
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		}},
		RequestState: sealState(ss.s.stateKey, st),
	}
}

// resume checks the request state a call carries and returns the gateway
// slot it resumes. A state that is altered, expired, or issued for
// another principal, tool or arguments is refused; so is a call whose
// client declined the approval request.
func (ss *session) resume(req *sdk.CallToolRequest, p tools.Principal, tool string, args json.RawMessage) (sessionID string, step int, refusal *sdk.CallToolResult) {
	st, err := openState(ss.s.stateKey, req.Params.RequestState, ss.s.now())
	if err == nil {
		err = st.matches(p, tool, args)
	}
	if err != nil {
		typ := gateway.ValidationError
		if errors.Is(err, ErrStateMismatch) && (st.Tenant != p.Tenant || st.Principal != p.ID) {
			typ = gateway.PermissionDenied
		}
		// The client reads the reason, not this package's name.
		return "", 0, callError(typ, strings.TrimPrefix(err.Error(), "mcpserver: "), false, nil, 0)
	}
	if r, ok := req.Params.InputResponses[ApprovalInput].(*sdk.ElicitResult); ok && r.Action != "accept" {
		return "", 0, callError(gateway.ConfirmationRequired, fmt.Sprintf(
			"the approval request was answered %q: the call was not executed (approval %s stays pending until it expires)", r.Action, st.Approval),
			false, nil, st.Step)
	}
	return st.SessionID, st.Step, nil
}

// hasApprover reports whether a principal other than p could grant p's
// held calls ([Options.HasApprover]; true without it).
func (s *Server) hasApprover(ctx context.Context, p tools.Principal) bool {
	return s.opts.HasApprover == nil || s.opts.HasApprover(ctx, p)
}
