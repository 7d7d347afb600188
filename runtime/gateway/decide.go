package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/jsonsyntax"
	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// The decision of one call is kept apart from doing it, as etcd raft keeps
// Step apart from Ready: decide is a pure function of what Execute knows
// so far (the facts) and returns what to do next. Execute's driver does
// that one thing — a store operation, the validation, the policy hook, the
// handler — writes its result into the facts and asks again, until the
// answer. decide reads no clock, store or context, so every path of the
// recording table (package documentation) is a row of a table test.

// action is what the driver does next.
type action uint8

const (
	actTakeToken        action = iota + 1 // take a rate-limit token (principal × tool)
	actValidate                           // validate the arguments, derive the key and fingerprint
	actClaim                              // claim the slot
	actAskPolicy                          // ask [Options.NeedsApproval]
	actGetApproval                        // look up the call's approval
	actCreateApproval                     // file the approval request
	actUnclaim                            // give the claim back before the handler runs: the call waits for its approval, or cannot run now
	actRun                                // run the handler
	actComplete                           // record the value or the domain error
	actMarkUncertain                      // record an unknown outcome
	actRelease                            // release the claim: the handler failed before any effect
	actAnswer                             // answer the caller with next.result or next.err
	actCheckHeld                          // look for an outcome of the slot the gateway holds unrecorded
	actReserve                            // reserve a place to hold the outcome, should the store fail to record it
	actHold                               // hold the outcome the store failed to record, and record it in the background
	actCheckLease                         // check that the claim's lease still covers the handler's whole timeout
	actGetSessionDenial                   // look up the session's denial of these arguments (sessionDenialID)
	actLookUp                             // read the key's record, claiming nothing: the call's tool is gone (decideGone)
)

var actionNames = [...]string{"", "take token", "validate", "claim", "ask policy", "get approval",
	"create approval", "unclaim", "run", "complete", "mark uncertain", "release", "answer",
	"check held", "reserve", "hold", "check lease", "get session denial", "look up"}

func (a action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("action(%d)", a)
}

// facts is what Execute knows about one admitted call: what admission
// fixed, then one field per action done, in the order decide asks for
// them (nil: not done yet).
type facts struct {
	call  Call
	tool  *tools.Tool
	start time.Time // the gateway clock at admission: claims, leases and approvals use it
	// reason is the authorization decision's reason, for the audit entry.
	reason string
	limit  store.RateLimit
	// rerun is the [UncertainRerun] policy; askPolicy says that
	// [Options.NeedsApproval] is set; inProgressWait caps IN_PROGRESS's hint.
	rerun, askPolicy bool
	inProgressWait   time.Duration
	// runningAudit, once set, says that Close audits the call as running
	// (auditRunning) and is closed when that entry is written: the call's
	// own entry waits for it. Set under the holder's runMu.
	runningAudit chan struct{}

	token         *tokenTaken
	valid         *validation
	pending       *heldLookup // an outcome of the slot held unrecorded (held.go)
	claim         *store.Claim
	needsApproval *bool
	approval      *store.Approval // the stored approval (ID of a missing one: empty)
	// definition is the tool's [DefinitionHash], set with approval;
	// superseded is the ID of the call's approval requested for another
	// definition of the tool, when approval is the one for this definition.
	definition, superseded string
	// sessionDenial is what is stored under [sessionDenialID]: an
	// approver's denial of the same arguments to the same tool for the same
	// principal at another step of the session (ID empty when there is
	// none). It is looked up only before an approval request is filed.
	sessionDenial *store.Approval
	created       *store.Approval
	unclaimed     bool
	room          *bool // a place to hold the outcome was reserved (false: the gateway is at its bound, or closed)
	// leaseLeft: the claim's lease, taken at admission, still covers the
	// handler's whole timeout with half of [Options.LeaseGrace] to spare
	// (false: the store was so slow to get here that the outcome could
	// reach it after the lease, be fenced, and the call run again).
	leaseLeft *bool
	ran       *ran
	fenced    *bool // the record step was refused as fenced (only Complete reports it)
	// recordFailed: the record step failed on a store error, so the
	// outcome is unrecorded; held: it was handed to the holder, which
	// records it in the background.
	recordFailed, held bool
	// audited: the completion wrote the call's audit entry too
	// ([store.AuditedRecorder]), so finish appends none.
	audited bool

	// unknown, when set, is admission's UNKNOWN_TOOL: the tenant has no
	// tool with the call's ID (any more). The call is then decided by
	// decideGone, and found is its key's record as [store.RecordStore.Get]
	// read it (a zero Record: none, or the store could not say).
	unknown *Error
	found   *store.Record
}

type tokenTaken struct {
	ok   bool
	wait time.Duration
}

// validation is the result of actValidate: a refusal, or the canonical
// arguments with their key and fingerprint.
type validation struct {
	err   *Error
	canon []byte
	key   string
	fp    string
}

// ran is the handler's outcome, classified once by classify.
type ran struct {
	kind   ranKind
	value  json.RawMessage    // ranValue
	domain *tools.DomainError // ranDomain
	reason string             // ranUncertain, ranNoEffect: internal text, for the log and the record only
	// reconnecting: a ranNoEffect refusal because the tool's server is
	// being reconnected ([tools.Unavailable]), to retry after retryAfter.
	reconnecting bool
	retryAfter   time.Duration
	at           time.Time // the gateway clock when the handler returned
}

type ranKind uint8

const (
	ranValue     ranKind = iota + 1 // a JSON value
	ranDomain                       // a [*tools.DomainError]: a refusal on the merits
	ranNoEffect                     // failed before any effect ([tools.NoEffect])
	ranUncertain                    // panic, invalid JSON, any other error: the effect is unknown
)

// classify turns a handler's return into the outcome the recording table
// knows. It is pure.
func classify(value json.RawMessage, err error, panicked any) ran {
	var dom *tools.DomainError
	switch {
	case panicked != nil:
		return ran{kind: ranUncertain, reason: fmt.Sprintf("handler panicked: %v", panicked)}
	case err == nil && len(value) == 0:
		return ran{kind: ranValue, value: json.RawMessage("null")}
	case err == nil && !jsonsyntax.Valid(value):
		return ran{kind: ranUncertain, reason: "handler returned invalid JSON"}
	case err == nil:
		return ran{kind: ranValue, value: value}
	case errors.As(err, &dom):
		d := *dom
		return ran{kind: ranDomain, domain: &d}
	case tools.IsNoEffect(err):
		after, reconnecting := tools.UnavailableFor(err)
		return ran{kind: ranNoEffect, reason: err.Error(), reconnecting: reconnecting, retryAfter: after}
	default:
		return ran{kind: ranUncertain, reason: err.Error()}
	}
}

// next is decide's answer: the action, and for actAnswer the result or the
// refusal. internal, when set, is what went wrong inside (never shown to
// the client): the driver logs it under a fresh error ID and names the ID
// in err.
type next struct {
	do       action
	result   *Result
	err      *Error
	internal string
}

func answer(res *Result, err *Error) next { return next{do: actAnswer, result: res, err: err} }

// needsApproval says whether the call needs an approval, as far as the
// tool's flags and the taint decide it without the policy hook.
func (f *facts) needsApprovalByTool() bool {
	return f.tool.Card.Irreversible || (f.call.Taint != "" && !f.tool.Card.ReadOnly)
}

// noEffect reports that the handler failed before any effect.
func (f *facts) noEffect() bool { return f.ran != nil && f.ran.kind == ranNoEffect }

// release reports that the claim is given back once the handler failed
// before any effect: unless the claim took over an earlier execution whose
// outcome is unknown, which this one leaves unknown, so the record stays
// uncertain (MarkUncertain) rather than vanish (a server reconnecting
// refuses every re-run of a call it died under).
func (f *facts) release() bool { return f.noEffect() && f.claim.Previous == "" }

// approved reports that a is a granted approval of exactly this call,
// still valid at admission.
func (f *facts) approved(a *store.Approval) bool {
	return a != nil && a.Granted && a.Key == f.valid.key && a.Fingerprint == f.valid.fp && a.ExpiresAt.After(f.start) &&
		(a.Definition == "" || a.Definition == f.definition)
}

// refused returns the approval an approver denied for exactly this call,
// still in force at admission: the one looked up or, when a denial came
// between the look-up and the request, the one the request found; else
// the session's denial of the same arguments at another step.
func (f *facts) refused() *store.Approval {
	for _, a := range [...]*store.Approval{f.approval, f.created} {
		if a != nil && a.Denied && a.Key == f.valid.key && a.Fingerprint == f.valid.fp && a.ExpiresAt.After(f.start) &&
			(a.Definition == "" || a.Definition == f.definition) {
			return a
		}
	}
	p := f.call.Principal
	if deniesInSession(f.sessionDenial, store.Slot{Tenant: p.Tenant, Principal: p.ID, SessionID: f.call.SessionID, Tool: f.tool.ID}, f.valid.fp, f.start) {
		return f.sessionDenial
	}
	return nil
}

// decide returns what to do next for an admitted call, or for one
// admission found no tool for (f.unknown: decideGone), given the facts.
// It is a pure function.
func decide(f *facts) next {
	if f.unknown != nil {
		return decideGone(f)
	}
	t := f.tool
	switch {
	case f.limit.Rate > 0 && f.limit.Burst > 0 && f.token == nil:
		return next{do: actTakeToken}
	case f.token != nil && !f.token.ok:
		return answer(nil, &Error{Type: RateLimited, Retryable: true, RetryAfter: f.token.wait,
			Message: fmt.Sprintf("rate limit for %s exceeded; retry after %v", t.ID, ceilSecond(f.token.wait))})
	}
	if n, done := beforeRecord(f, nil); !done {
		return n
	}
	if f.claim == nil {
		return next{do: actClaim}
	}
	key := f.valid.key
	if f.claim.Status != store.ClaimAcquired {
		return claimAnswer(f, *f.claim)
	}

	if f.ran == nil {
		need := f.needsApprovalByTool()
		if !need && f.askPolicy {
			if f.needsApproval == nil {
				return next{do: actAskPolicy}
			}
			need = *f.needsApproval
		}
		switch {
		case !need:
		case f.approval == nil:
			return next{do: actGetApproval}
		case f.approved(f.approval):
		case f.refused() != nil && !f.unclaimed:
			return next{do: actUnclaim}
		case f.refused() != nil:
			a := f.refused()
			at := ""
			if a.Key != key {
				at = fmt.Sprintf(" for the same arguments at step %d of this session", a.Slot.Step)
			}
			return answer(nil, &Error{Type: PermissionDenied, ApprovalID: a.ID, IdempotencyKey: key,
				Message: fmt.Sprintf("%s was denied: %s refused approval %s%s at %s; this call will not run, do not send it again (other arguments are another call, which needs its own approval)",
					t.ID, a.Approver, a.ID, at, a.DeniedAt.UTC().Format(time.RFC3339))})
		case f.created == nil && f.sessionDenial == nil:
			return next{do: actGetSessionDenial}
		case f.created == nil:
			return next{do: actCreateApproval}
		case !f.unclaimed:
			return next{do: actUnclaim}
		default:
			msg := fmt.Sprintf("%s needs a human approval: a principal holding %q must grant approval %s; then send the same call again", t.ID, ApprovalScope, f.created.ID)
			if f.superseded != "" {
				msg += " (the tool's definition changed since approval " + f.superseded + " was requested; that approval does not cover it)"
			}
			if f.call.Taint != "" {
				msg += " (the conversation read untrusted output: " + textcut.Prefix(f.call.Taint, 200) + ")"
			}
			return answer(nil, &Error{Type: ConfirmationRequired, ApprovalID: f.created.ID, IdempotencyKey: key, Message: msg})
		}
		// Any outcome may have to be held (the store can fail after the
		// handler ran), so the handler runs only with a place reserved.
		// It runs only if its outcome can reach the store within the
		// lease: a completion after it is fenced, and the call is run
		// again by the re-send that takes the slot over.
		switch {
		case f.room == nil:
			return next{do: actReserve}
		case *f.room && f.leaseLeft == nil:
			return next{do: actCheckLease}
		case *f.room && *f.leaseLeft:
			return next{do: actRun}
		case !f.unclaimed:
			return next{do: actUnclaim}
		case !*f.room:
			return answer(nil, &Error{Type: Internal, Retryable: true, RetryAfter: f.inProgressWait, IdempotencyKey: key,
				Message: "the gateway cannot take on another call now: it holds as many outcomes its store has not recorded as it may, or it is closing; nothing ran, retry the same call"})
		}
		return next{do: actAnswer, internal: "the claim's lease no longer covers the tool's timeout: the store was slow before the handler could start",
			err: &Error{Type: Internal, Retryable: true, IdempotencyKey: key,
				Message: "the gateway's store answered too slowly for the tool to run within its lease; nothing ran, retry the same call"}}
	}

	r := f.ran
	if f.fenced == nil && !f.held {
		if f.recordFailed {
			// The handler ran: the outcome is the gateway's to keep, never
			// "nothing happened, retry" (invariant 9).
			return next{do: actHold}
		}
		switch r.kind {
		case ranValue, ranDomain:
			return next{do: actComplete}
		case ranNoEffect:
			if f.release() {
				return next{do: actRelease}
			}
			return next{do: actMarkUncertain}
		default:
			return next{do: actMarkUncertain}
		}
	}
	switch {
	case f.fenced != nil && *f.fenced:
		return answer(nil, &Error{Type: DownstreamFailure, Retryable: f.rerun, IdempotencyKey: key, Attempts: f.claim.Record.Attempts,
			Message: "the call outlived its lease and its outcome was not recorded; send the same call again (the tool re-runs with the same idempotency key)"})
	case r.kind == ranValue:
		a := f.claim.Record.Attempts
		return answer(&Result{Value: r.value, IdempotencyKey: key, Attempts: a, PreviousUncertain: a > 1}, nil)
	case r.kind == ranDomain:
		return answer(nil, domainError(r.domain, key, false))
	case r.kind == ranNoEffect && r.reconnecting:
		return next{do: actAnswer, internal: "the tool's server is not connected: " + r.reason,
			err: &Error{Type: DownstreamFailure, Code: CodeServerReconnecting, Retryable: true, RetryAfter: r.retryAfter, IdempotencyKey: key,
				Message: fmt.Sprintf("%s cannot run now: its server is reconnecting; nothing ran, send the same call again later", t.ID)}}
	case r.kind == ranNoEffect:
		return next{do: actAnswer, internal: "the tool failed before any effect: " + r.reason,
			err: &Error{Type: DownstreamFailure, Retryable: true, IdempotencyKey: key,
				Message: "the tool failed before any effect; send the call again"}}
	}
	msg := "the tool failed and its effect is unknown"
	if f.rerun {
		msg += "; send the same call again: it re-runs with the same idempotency key, which the tool deduplicates"
	} else {
		msg += "; it must be reconciled before it can run again"
	}
	return next{do: actAnswer, internal: "call outcome uncertain: " + r.reason,
		err: &Error{Type: DownstreamFailure, Retryable: f.rerun, IdempotencyKey: key, Attempts: f.claim.Record.Attempts, Message: msg}}
}

// beforeRecord decides what every call does before its slot's record is
// claimed or read: validate (an invalid call is answered refused, or the
// validation's own error when refused is nil), then look for an outcome
// of the slot the gateway holds, which answers. done reports that both are
// done and nothing is held.
func beforeRecord(f *facts, refused *Error) (n next, done bool) {
	switch {
	case f.valid == nil:
		return next{do: actValidate}, false
	case f.valid.err != nil && refused != nil:
		return answer(nil, refused), false
	case f.valid.err != nil:
		return answer(nil, f.valid.err), false
	case f.pending == nil:
		return next{do: actCheckHeld}, false
	case f.pending.found:
		return heldAnswer(f), false
	}
	return next{}, true
}

// claimAnswer answers a call whose claim cl did not acquire the slot.
func claimAnswer(f *facts, cl store.Claim) next {
	key := f.valid.key
	switch cl.Status {
	case store.ClaimDone:
		return replay(cl.Record)
	case store.ClaimInProgress:
		wait := min(max(cl.Record.LeaseExpires.Sub(f.start), 0), f.inProgressWait)
		return answer(nil, &Error{Type: InProgress, Retryable: true, RetryAfter: wait, IdempotencyKey: key,
			Message: "the same call is being executed; retry with the same arguments to get its result"})
	case store.ClaimUncertain:
		return next{do: actAnswer, internal: "an earlier execution has an unknown outcome: " + cl.Record.Reason,
			err: &Error{Type: UncertainOutcome, IdempotencyKey: key, Attempts: cl.Record.Attempts,
				Message: "an earlier execution of this call has an unknown outcome; it must be reconciled before it can run again"}}
	case store.ClaimMismatch:
		return answer(nil, &Error{Type: IdempotencyMismatch,
			Message: "this step already called the tool with other arguments; use a new step for a new call"})
	}
	return next{do: actAnswer, internal: fmt.Sprintf("unknown claim status %d", cl.Status),
		err: &Error{Type: Internal, Retryable: true, IdempotencyKey: key,
			Message: "the gateway could not claim; nothing was acknowledged, retry the same call"}}
}

// decideGone decides a call admission found no tool for (f.unknown): its
// tool may have gone (removed from a server's listing, quarantined,
// restricted to other tenants) after the call ran, and a re-send of that
// call must get its outcome, not UNKNOWN_TOOL, which says that nothing ran
// (invariant 9). Nothing is claimed and nothing runs: a well-formed call
// named by a tool ID is keyed as a call of that ID, and an outcome the
// gateway holds for its slot, or else its key's unexpired record, answers
// it as a claim that may not take over would (an uncertain record cannot
// be re-run: its tool is gone). Anything else is f.unknown. The key binds
// the tenant, principal, session, step, tool ID and arguments, so no one
// else's record can answer.
func decideGone(f *facts) next {
	if !strings.Contains(f.call.Tool, "/") {
		// A bare name: every tool ID holds a '/', so no record is keyed by it.
		return answer(nil, f.unknown)
	}
	if n, done := beforeRecord(f, f.unknown); !done {
		return n
	}
	if f.found == nil {
		return next{do: actLookUp}
	}
	r := *f.found
	switch {
	case r.Key != f.valid.key || !r.ExpiresAt.After(f.start):
		return answer(nil, f.unknown)
	case r.State == store.StateDone:
		return claimAnswer(f, store.Claim{Status: store.ClaimDone, Record: r})
	case r.State == store.StateInProgress && r.LeaseExpires.After(f.start):
		return claimAnswer(f, store.Claim{Status: store.ClaimInProgress, Record: r})
	}
	return claimAnswer(f, store.Claim{Status: store.ClaimUncertain, Record: r})
}

func replay(r store.Record) next {
	if r.DomainError != nil {
		return answer(nil, domainError(r.DomainError, r.Key, true))
	}
	return answer(&Result{Value: append(json.RawMessage(nil), r.Value...), Cached: true, IdempotencyKey: r.Key,
		Attempts: r.Attempts, PreviousUncertain: r.Attempts > 1}, nil)
}

// heldAnswer answers a call whose slot has an outcome the gateway holds,
// unrecorded: the outcome itself when it is one the store would replay (a
// value, a domain error), IN_PROGRESS while an uncertain or no-effect
// outcome is still being recorded or while the gateway still runs the
// call, and IDEMPOTENCY_MISMATCH for other arguments. The handler never
// runs again while the outcome is held or the call running.
func heldAnswer(f *facts) next {
	h, key := f.pending, f.valid.key
	switch {
	case h.key != key:
		return answer(nil, &Error{Type: IdempotencyMismatch,
			Message: "this step already called the tool with other arguments; use a new step for a new call"})
	case h.running:
		return answer(nil, &Error{Type: InProgress, Retryable: true, RetryAfter: f.inProgressWait, IdempotencyKey: key,
			Message: "the same call is being executed; retry with the same arguments to get its result"})
	case h.kind == ranValue:
		return answer(&Result{Value: h.value, Cached: true, IdempotencyKey: key, Attempts: h.attempts, PreviousUncertain: h.attempts > 1}, nil)
	case h.kind == ranDomain:
		return answer(nil, domainError(h.domain, key, true))
	}
	return answer(nil, &Error{Type: InProgress, Retryable: true, RetryAfter: f.inProgressWait, IdempotencyKey: key,
		Message: "the call's outcome is being recorded; retry with the same arguments"})
}

func domainError(d *tools.DomainError, key string, cached bool) *Error {
	return &Error{Type: DomainErrorType, Code: d.Code, Message: d.Message, Details: d.Details,
		IdempotencyKey: key, Cached: cached}
}
