package gateway

import (
	"errors"
	"fmt"
	"time"
)

// ErrorType is the machine-readable kind of a gateway refusal. It is the
// `error_type` of the HTTP contract's error body.
type ErrorType string

// The error types the gateway returns: those of docs/design.md's HTTP
// contract, plus the few the contract leaves to the gateway (a replayed
// domain error, an uncertain outcome under [UncertainReconcile], an
// unknown approval, an internal failure). The HTTP API (runtime/server)
// maps each to its status code and adds the three only HTTP has.
const (
	// Unauthenticated: no principal (HTTP 401).
	Unauthenticated ErrorType = "UNAUTHENTICATED"
	// PermissionDenied: the principal may not use the tool, or may not act
	// on this slot or approval (HTTP 403).
	PermissionDenied ErrorType = "PERMISSION_DENIED"
	// UnknownTool: no tool with that ID exists in the current registry
	// snapshot, or it is restricted to other tenants, or it has no handler
	// (HTTP 404). The last is told apart by Code [CodeServerNotConnected].
	UnknownTool ErrorType = "UNKNOWN_TOOL"
	// ValidationError: the arguments (or the request) are malformed or break
	// the tool's schema or domain rules; Details lists the violations (HTTP
	// 422, retryable: the model can correct its arguments and call again).
	ValidationError ErrorType = "VALIDATION_ERROR"
	// InProgress: the same call is executing now; retry after RetryAfter (HTTP 409, retryable).
	InProgress ErrorType = "IN_PROGRESS"
	// IdempotencyMismatch: the slot (tenant, principal, session, step, tool) is bound
	// to the same principal's call with other arguments; never executed
	// (HTTP 422, not retryable).
	IdempotencyMismatch ErrorType = "IDEMPOTENCY_MISMATCH"
	// ConfirmationRequired: the call needs a human approval; ApprovalID
	// names it (HTTP 428).
	ConfirmationRequired ErrorType = "CONFIRMATION_REQUIRED"
	// RateLimited: the principal's token bucket for the tool is empty;
	// retry after RetryAfter (HTTP 429, retryable).
	RateLimited ErrorType = "RATE_LIMITED"
	// DownstreamFailure: the handler failed. When it said so (NoEffect) the
	// claim was released; otherwise the outcome is uncertain and a retry
	// re-runs the handler with the same idempotency key (HTTP 503, retryable).
	DownstreamFailure ErrorType = "DOWNSTREAM_FAILURE"
	// DomainErrorType: the tool ran and refused on the merits (a
	// *tools.DomainError, e.g. insufficient funds); Code carries its code.
	// It is recorded and replayed like a success (HTTP 422, not retryable).
	DomainErrorType ErrorType = "DOMAIN_ERROR"
	// UncertainOutcome: under [UncertainReconcile], the slot's earlier
	// execution has an unknown outcome and must be reconciled by an operator
	// or the downstream; the gateway will not re-run it (HTTP 409, not retryable).
	UncertainOutcome ErrorType = "OUTCOME_UNCERTAIN"
	// NotFound: no approval with that ID (HTTP 404).
	NotFound ErrorType = "NOT_FOUND"
	// Internal: the gateway or its store failed before the handler ran, or
	// the gateway could not take on another call (it holds as many
	// unrecorded outcomes as [Options.MaxHeldOutcomes] allows, or it is
	// closing); nothing ran (HTTP 500, retryable).
	Internal ErrorType = "INTERNAL_ERROR"
)

// CodeServerNotConnected is the Code of the UNKNOWN_TOOL refusal of a
// tool that exists but cannot run: it has no handler ([tools.Tool.Runnable]),
// being a catalog file's tool with no server connected. Nothing ran and
// nothing is recorded; the call is final until a server provides the tool.
const CodeServerNotConnected = "SERVER_NOT_CONNECTED"

// CodeServerReconnecting is the Code of the DOWNSTREAM_FAILURE of a call
// whose tool's server is not connected now and is being reconnected (the
// handler said so with [tools.Unavailable]): the tool is still known,
// nothing ran and nothing is recorded, and the same call may be sent again
// after [Error.RetryAfter]. A retry of a call whose outcome is recorded
// gets that outcome, as ever, without the server.
const CodeServerReconnecting = "SERVER_RECONNECTING"

// Error is a structured refusal of a call: everything a model (or a client)
// needs to fix its call or to retry it. Execute returns every refusal as an
// *Error; match it with [errors.As]. Protocol failures (bad arguments, denied,
// in progress) and tool outcomes (DOMAIN_ERROR) share this type so they can
// go back to the model as a tool result rather than crash a turn.
type Error struct {
	// Type is the machine-readable kind; over HTTP it decides the status.
	Type ErrorType `json:"error_type"`
	// Message explains the refusal to a model or a person.
	Message string `json:"message"`
	// Retryable reports that calling again may succeed; what to change
	// depends on the type. VALIDATION_ERROR: the model corrects its
	// arguments (or the request) and calls again — the same call would fail
	// the same way (RetrySame is false); it is false when no correction can
	// help (the validation ran past its deadline). IN_PROGRESS,
	// RATE_LIMITED: the same call, after [Error.RetryAfter]. DOWNSTREAM_FAILURE:
	// the same call, which re-runs with the same idempotency key (false
	// under [UncertainReconcile]). INTERNAL_ERROR: the same call; nothing was
	// acknowledged. Every other type is final for these arguments:
	// UNAUTHENTICATED, PERMISSION_DENIED, UNKNOWN_TOOL,
	// IDEMPOTENCY_MISMATCH (use a new step), CONFIRMATION_REQUIRED (retry
	// once [Error.ApprovalID] is granted), DOMAIN_ERROR, OUTCOME_UNCERTAIN.
	Retryable bool `json:"retryable"`
	// RetryAfter, when positive, is how long to wait before retrying.
	RetryAfter time.Duration `json:"-"`
	// Details carries structured data: a slice of [Violation] for VALIDATION_ERROR,
	// the domain error's details for DOMAIN_ERROR. It may be nil.
	Details any `json:"details,omitempty"`
	// ApprovalID names the approval to grant (CONFIRMATION_REQUIRED), or
	// the one an approver denied (the PERMISSION_DENIED of such a call).
	ApprovalID string `json:"approval_id,omitempty"`
	// Code is the domain error's code (DOMAIN_ERROR),
	// [CodeServerNotConnected] (UNKNOWN_TOOL of a tool that exists but has no
	// handler), or [CodeServerReconnecting] (DOWNSTREAM_FAILURE of a tool
	// whose server is being reconnected). Empty elsewhere.
	Code string `json:"code,omitempty"`
	// IdempotencyKey is the call's key when it was derived (from the claim
	// step on), so a client can correlate and reconcile.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Cached reports that this refusal is a replay of a recorded outcome
	// (DOMAIN_ERROR only).
	Cached bool `json:"cached,omitempty"`
	// ErrorID names the log entry that holds what went wrong inside (a
	// handler's error text, a panic value, a store failure), which the
	// client never sees; an operator finds it in the logs by this ID. Set
	// for INTERNAL_ERROR, DOWNSTREAM_FAILURE and OUTCOME_UNCERTAIN.
	ErrorID string `json:"error_id,omitempty"`
	// Candidates are the tool IDs an ambiguous bare tool name may mean
	// among the tools the caller may use (VALIDATION_ERROR from Resolve).
	Candidates []string `json:"candidates,omitempty"`
	// Scopes, for a PERMISSION_DENIED that a principal holding more scopes
	// would pass, are the scopes the refused action needs (all of them,
	// held or not): a tool's scopes, or [ApprovalScope]. Over HTTP they are
	// the scope of the 403's WWW-Authenticate challenge (RFC 6750 §3, the
	// MCP authorization specification's step-up), not part of the body.
	// Nil elsewhere.
	Scopes []string `json:"-"`
	// Attempts is how many executions the call's slot has had, for an
	// uncertain outcome: DOWNSTREAM_FAILURE after the handler ran (its
	// effect unknown) and OUTCOME_UNCERTAIN. Zero elsewhere.
	Attempts int `json:"attempts,omitempty"`
}

// RetrySame reports whether sending exactly the same call again may
// succeed: Retryable, and not a VALIDATION_ERROR (which needs other
// arguments). An agent loop resends on RetrySame and hands the rest back to
// the model.
func (e *Error) RetrySame() bool { return e.Retryable && e.Type != ValidationError }

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("gateway: %s: %s", e.Type, e.Message)
}

// Is reports whether target is an *Error of the same Type, so that
// errors.Is(err, &gateway.Error{Type: gateway.InProgress}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Type == e.Type
}

// Violation is one reason arguments were rejected: where (a JSON pointer
// into the arguments, "" for the whole object) and why.
type Violation struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// Invalid returns a VALIDATION_ERROR with the given violations, retryable
// (the model can correct its arguments). A tool's Validator returns it to
// report domain-rule violations with pointers.
func Invalid(violations ...Violation) *Error {
	msg := "the arguments are invalid"
	if len(violations) > 0 {
		msg = "invalid arguments: " + violations[0].Pointer + ": " + violations[0].Message
		if violations[0].Pointer == "" {
			msg = "invalid arguments: " + violations[0].Message
		}
	}
	return &Error{Type: ValidationError, Message: msg, Details: violations, Retryable: true}
}

// Option validation errors wrap [ErrInvalidOptions].
var ErrInvalidOptions = errors.New("gateway: invalid options")
