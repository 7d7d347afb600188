package gateway

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/errorid"
	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/internal/jsonschema"
	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// maxSessionIDBytes bounds [Call.SessionID].
const maxSessionIDBytes = 256

// Execute runs one call through the gateway, in this order: authenticate
// (a principal with ID and tenant) → authorize with [tools.Authorize] on the
// registry's current snapshot (deny by default; the decision and its reason
// are logged and audited) → rate limit (principal × tool) → validate (the
// JSON Schema with ECMA-262 patterns, then the tool's Validator) → derive
// the idempotency key ([DeriveKey] over the RFC 8785 arguments) → claim the
// slot → approval when the tool is irreversible or NeedsApproval says so →
// run the handler with its deadline and the key in its context → record
// (see the recording table in the package documentation) → audit → metrics.
//
// It returns a *Result, or an *Error for every refusal and failure (match
// with [errors.As]); a domain error from the tool is an *Error of type
// DOMAIN_ERROR. The handler receives the canonical arguments. Execute is
// safe for concurrent use. Once the handler has started, the caller's
// cancellation no longer stops it: the handler runs to completion or to its
// own deadline and the outcome is recorded, so that a client that gives up
// cannot leave a half-known effect behind.
//
// A call of a tool ID the principal's tenant has no tool for is
// UNKNOWN_TOOL, unless the tool has gone since the same call ran: then its
// key's record answers (the recorded result, Cached, or IN_PROGRESS, or
// OUTCOME_UNCERTAIN), never "nothing ran" (see the recording table).
//
// What happens after admission is decided by decide (decide.go), a pure
// function of the facts gathered so far; Execute only does what it says.
func (g *Gateway) Execute(ctx context.Context, call Call) (*Result, error) {
	ctx, span := g.startSpan(ctx, call)
	res, tool, err := g.execute(ctx, call)
	g.endSpan(span, tool, res, err)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// execute is Execute without the span; it also returns the tool the call
// was admitted for (nil when it was refused before that).
func (g *Gateway) execute(ctx context.Context, call Call) (*Result, *tools.Tool, *Error) {
	f := &facts{call: call, start: g.clock.Now(), askPolicy: g.opts.NeedsApproval != nil, inProgressWait: g.opts.InProgressRetryAfter}
	t, reason, denial, gerr := admit(g.reg.Snapshot(), call)
	f.tool = t
	if t != nil {
		f.rerun = g.opts.UncertainFor(t.ID) == UncertainRerun
	}
	allowed := gerr == nil
	f.reason = reason
	var res *Result
	if gerr != nil && gerr.Type == UnknownTool {
		// The call's tool may have gone since the call ran: its record,
		// if any, answers (decideGone). Admission may have found another
		// tenant's tool by the ID: that tool is not this call's, so the
		// look-up neither validates against it nor runs its Validator.
		f.unknown, f.tool = gerr, nil
		res, gerr = g.drive(ctx, f)
		f.tool = t
		if res != nil || gerr != f.unknown {
			allowed, f.reason = true, "no such tool now; answered from the call's record"
		}
	}
	switch {
	case allowed && f.unknown != nil:
		// Answered above from the record of the call.
	case !allowed:
		if denial != "" {
			id := ""
			if t != nil {
				id = t.ID
			}
			g.metrics.denied(id, denial)
		}
	case !t.Runnable():
		gerr = &Error{Type: UnknownTool, Code: CodeServerNotConnected,
			Message: fmt.Sprintf("tool %q has no server connected (it comes from a catalog file): nothing can run it", t.ID)}
	default:
		if g.log.Enabled(ctx, slog.LevelDebug) {
			g.log.LogAttrs(ctx, slog.LevelDebug, "gateway: call allowed", slog.String("tenant", call.Principal.Tenant),
				slog.String("principal", call.Principal.ID), slog.String("tool", t.ID))
		}
		f.limit = g.limitFor(t.ID)
		res, gerr = g.drive(ctx, f)
	}
	g.finish(ctx, f, allowed, f.reason, res, gerr)
	if !allowed || f.unknown != nil {
		return res, nil, gerr
	}
	return res, t, gerr
}

// drive does what decide says until it answers. A store failure before
// the handler ran ends the call as INTERNAL_ERROR (nothing acknowledged);
// once it ran, a failure to record its outcome hands the outcome to the
// holder (held.go), which records it in the background.
func (g *Gateway) drive(ctx context.Context, f *facts) (*Result, *Error) {
	// Recording must finish even when the caller leaves.
	rctx := context.WithoutCancel(ctx)
	t := f.tool
	// The call's tool ID: admission looks a tool up by it, and a call of a
	// tool it did not find (f.unknown) is keyed by it too.
	id := f.call.Tool
	p := f.call.Principal
	slot := func() store.Slot {
		return store.Slot{Tenant: p.Tenant, Principal: p.ID, SessionID: f.call.SessionID, Step: f.call.Step, Tool: id}
	}
	timeout := g.opts.DefaultTimeout
	if t != nil && t.Timeout > 0 {
		timeout = t.Timeout
	}
	// The claim's lease: the handler's timeout and the grace, from
	// admission (the claim, and the check before the handler runs).
	lease := f.start.Add(timeout + g.opts.LeaseGrace)
	key := func() string {
		if f.valid == nil {
			return ""
		}
		return f.valid.key
	}
	defer func() {
		// A place reserved and not taken by a held outcome is given back.
		if f.room != nil && *f.room && !f.held {
			g.held.unreserve()
		}
		if f.claim != nil && f.claim.Status == store.ClaimAcquired { // begun at actClaim
			g.held.end(slot())
		}
	}()
	for {
		n := decide(f)
		switch n.do {
		case actAnswer:
			if n.internal != "" {
				eid := errorid.New()
				g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: "+string(n.err.Type), slog.String("error_id", eid),
					slog.String("tool", id), slog.String("key", key()), slog.String("reason", n.internal))
				n.err.ErrorID = eid
				n.err.Message += " (error " + eid + ")"
			}
			return n.result, n.err
		case actTakeToken:
			ok, wait, err := g.store.TakeToken(ctx, bucketName(p, t.ID), f.limit, f.start)
			if err != nil {
				return nil, g.internal(ctx, f, "check the rate limit", err)
			}
			f.token = &tokenTaken{ok: ok, wait: wait}
		case actValidate:
			v := validation{}
			v.canon, v.err = g.validate(ctx, f.call, t)
			if v.err == nil {
				v.fp = fingerprint(v.canon)
				v.key = DeriveKey(p.Tenant, p.ID, f.call.SessionID, f.call.Step, id, v.canon)
			}
			f.valid = &v
		case actCheckHeld:
			f.pending = g.held.lookup(slot())
		case actLookUp:
			r, err := g.store.Get(ctx, f.valid.key)
			if err != nil {
				if !errors.Is(err, store.ErrNotFound) {
					// The call is answered UNKNOWN_TOOL, as before the
					// look-up: a failed read must not fail it otherwise.
					g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: looking up the record of a call of an unknown tool failed",
						slog.String("tool", textcut.Prefix(id, 128)), slog.String("key", f.valid.key), slog.String("error", err.Error()))
				}
				r = store.Record{}
			}
			f.found = &r
		case actReserve:
			f.room = &reserved
			if !g.held.reserve() {
				g.metrics.heldRefusal()
				f.room = &notReserved
			}
		case actHold:
			g.hold(ctx, f, slot())
			f.held = true
		case actClaim:
			owner := g.owner + strconv.FormatUint(g.claims.Add(1), 36)
			cl, err := g.store.Claim(ctx, store.ClaimRequest{
				Slot: slot(), Principal: p.ID, Key: f.valid.key, Fingerprint: f.valid.fp, Now: f.start,
				LeaseExpires: lease, ExpiresAt: lease.Add(g.opts.Retention), TakeOver: f.rerun, Owner: owner,
			})
			if err != nil {
				g.giveBackLostClaim(rctx, f, slot(), owner)
				return nil, g.internal(ctx, f, "claim", err)
			}
			if cl.Status == store.ClaimAcquired {
				// From here the call is this gateway's until drive
				// returns: a re-send meets it in the holder whatever the
				// store's lease says.
				g.held.begin(slot(), f)
			}
			if cl.Status == store.ClaimAcquired && cl.Previous != "" {
				g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: re-running a call with an uncertain outcome under the same key",
					slog.String("tool", t.ID), slog.String("key", f.valid.key), slog.String("previous", string(cl.Previous)),
					slog.Int("attempt", cl.Record.Attempts))
			}
			f.claim = &cl
		case actAskPolicy:
			need := g.needsApproval(ctx, f)
			f.needsApproval = &need
		case actGetApproval:
			f.definition = DefinitionHash(t)
			a, err := g.getApproval(ctx, approvalID(f.valid.key))
			// The call's approval was requested for another definition
			// of the tool (an upstream changed it since): the call needs
			// an approval of this definition, under an ID of its own.
			if err == nil && a.ID != "" && a.Definition != "" && a.Definition != f.definition {
				f.superseded = a.ID
				a, err = g.getApproval(ctx, definitionApprovalID(f.valid.key, f.definition))
			}
			if err != nil {
				return nil, g.internal(ctx, f, "look up the approval", err)
			}
			f.approval = &a
		case actGetSessionDenial:
			a, err := g.getApproval(ctx, sessionDenialID(p.Tenant, p.ID, f.call.SessionID, t.ID, f.valid.fp))
			if err != nil {
				return nil, g.internal(ctx, f, "look up the session's denials", err)
			}
			f.sessionDenial = &a
		case actCreateApproval:
			id := approvalID(f.valid.key)
			if f.superseded != "" {
				id = definitionApprovalID(f.valid.key, f.definition)
			}
			a, err := g.store.CreateApproval(rctx, store.Approval{
				ID: id, Slot: slot(), Key: f.valid.key, Fingerprint: f.valid.fp, Requester: p.ID,
				Arguments: f.valid.canon, Taint: cleanText(f.call.Taint, 512), Definition: f.definition,
				CreatedAt: f.start, ExpiresAt: f.start.Add(g.opts.ApprovalTTL),
			})
			if err != nil {
				return nil, g.internal(ctx, f, "create the approval", err)
			}
			f.created = &a
		case actUnclaim:
			g.unclaim(ctx, rctx, f, slot())
			f.unclaimed = true
		case actCheckLease:
			// A handler that starts now may return at now+timeout; its
			// completion must land before the lease, half the grace
			// spare for the write itself.
			left := !g.clock.Now().Add(timeout).After(lease.Add(-g.opts.LeaseGrace / 2))
			if !left {
				g.metrics.lateClaim()
			}
			f.leaseLeft = &left
		case actRun:
			hctx, cancel := context.WithTimeout(tools.WithIdempotencyKey(rctx, f.valid.key), timeout)
			value, err, panicked := g.callHandler(hctx, f)
			cancel()
			r := classify(value, err, panicked)
			r.at = g.clock.Now()
			f.ran = &r
		case actComplete:
			c := store.Completion{Slot: slot(), Token: f.claim.Token, Value: f.ran.value, DomainError: f.ran.domain,
				Now: f.ran.at, ExpiresAt: f.ran.at.Add(g.opts.Retention)}
			err := g.complete(rctx, f, c)
			if f.recordFailed = g.logRecordFailure(ctx, f, "recording an outcome", err); f.recordFailed {
				break
			}
			fenced := errors.Is(err, store.ErrFenced)
			if fenced {
				g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: late completion rejected (lease expired or taken over)",
					slog.String("tool", t.ID), slog.String("key", f.valid.key))
			}
			f.fenced = &fenced
		case actMarkUncertain:
			err := g.store.MarkUncertain(rctx, slot(), f.claim.Token, cleanText(f.ran.reason, 512), f.ran.at, f.ran.at.Add(g.opts.Retention))
			f.recordFailed = g.logRecordFailure(ctx, f, "marking a call uncertain", err)
			if !f.recordFailed {
				f.fenced = new(bool)
			}
		case actRelease:
			err := g.store.Release(rctx, slot(), f.claim.Token, f.ran.at)
			f.recordFailed = g.logRecordFailure(ctx, f, "releasing a no-effect claim", err)
			if !f.recordFailed {
				f.fenced = new(bool)
			}
		default:
			return nil, g.internal(ctx, f, "decide", fmt.Errorf("unknown action %v", n.do))
		}
	}
}

// complete records the handler's outcome. When the records and the audit
// log are one [store.AuditedRecorder], the call's audit entry goes into the same
// write: the entry finish would append for the answer an unfenced
// completion gives (decide on the facts with fenced false), its latency
// measured now. A fenced completion writes neither, and finish then
// audits the answer it really gives.
func (g *Gateway) complete(ctx context.Context, f *facts, c store.Completion) error {
	ar, ok := g.store.(store.AuditedRecorder)
	if !ok {
		return g.store.Complete(ctx, c)
	}
	unfenced := *f
	unfenced.fenced = new(bool)
	n := decide(&unfenced)
	if n.do != actAnswer || n.internal != "" {
		return g.store.Complete(ctx, c)
	}
	err := ar.CompleteAudited(ctx, c, g.auditEntry(&unfenced, true, n.result, n.err, g.clock.Now().Sub(f.start)))
	f.audited = err == nil
	return err
}

// giveBackLostClaim gives back the claim named owner when the store took
// it although Claim returned an error (it committed, and its answer was
// lost): the gateway runs no tool after a failed claim, so nothing ran
// under it, and the retry the caller is told to send must find the slot as
// it was, not held by an owner that vanished (IN_PROGRESS until the lease
// expires, then a previous attempt whose outcome is unknown, or
// OUTCOME_UNCERTAIN under [UncertainReconcile]). A fresh claim is released;
// one that took over an earlier attempt's uncertain or expired claim is
// marked uncertain again, as that attempt left it. When the record is not
// this claim's, or the store cannot say, the slot stays as it is: its
// lease bounds it.
func (g *Gateway) giveBackLostClaim(ctx context.Context, f *facts, slot store.Slot, owner string) {
	r, err := g.store.Get(ctx, f.valid.key)
	if err != nil || r.Slot != slot || r.State != store.StateInProgress || r.Owner != owner {
		return
	}
	what := "released"
	if r.Attempts > 1 {
		what = "marked uncertain again"
		err = g.store.MarkUncertain(ctx, slot, r.Token, "an earlier attempt's outcome is unknown (the claim after it was lost before anything ran)",
			g.clock.Now(), r.ExpiresAt)
	} else {
		err = g.store.Release(ctx, slot, r.Token, g.clock.Now())
	}
	if err != nil {
		what = "not given back: " + err.Error()
	}
	g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: a claim whose answer was lost took the slot; nothing ran under it",
		slog.String("tool", f.tool.ID), slog.String("key", f.valid.key), slog.String("claim", what))
}

// logRecordFailure logs a store failure of the record step and reports
// whether there was one (ErrFenced is an answer, not a failure).
func (g *Gateway) logRecordFailure(ctx context.Context, f *facts, what string, err error) bool {
	if err == nil || errors.Is(err, store.ErrFenced) {
		return false
	}
	g.log.LogAttrs(ctx, slog.LevelError, "gateway: "+what+" failed",
		slog.String("tool", f.tool.ID), slog.String("key", f.valid.key), slog.String("error", err.Error()))
	return true
}

// admit authenticates and authorizes call on snap, the checks that come
// before everything else: a principal with an ID and a tenant, a tool that
// exists for the principal's tenant, every scope it needs. It returns the
// tool (when found), the decision's reason, and, when the call is refused,
// the *Error and the denial metric's reason ("" for an unknown tool).
func admit(snap *tools.Snapshot, call Call) (t *tools.Tool, reason, denial string, gerr *Error) {
	p := call.Principal
	if p.ID == "" || p.Tenant == "" {
		return nil, "no authenticated principal", "unauthenticated",
			&Error{Type: Unauthenticated, Message: "the call has no authenticated principal"}
	}
	if !plainName(p.ID) || !plainName(p.Tenant) {
		// No authenticator gives such an identity, and not every store
		// could key a record by it.
		return nil, "principal not plain text", "unauthenticated",
			&Error{Type: Unauthenticated, Message: "the call's principal is not valid UTF-8 or holds a control character"}
	}
	i, ok := snap.Lookup(call.Tool)
	if !ok {
		return nil, "unknown tool", "", &Error{Type: UnknownTool, Message: fmt.Sprintf("no tool %q", textcut.Prefix(call.Tool, 128))}
	}
	t = snap.Tool(i)
	if err := tools.Authorize(p, t); err != nil {
		if errors.Is(err, tools.ErrWrongTenant) {
			// A tool restricted to other tenants does not exist for this one.
			return t, err.Error(), "wrong_tenant", &Error{Type: UnknownTool, Message: fmt.Sprintf("no tool %q", call.Tool)}
		}
		return t, err.Error(), "missing_scope", &Error{Type: PermissionDenied, Message: deniedMessage(p, t), Scopes: slices.Clone(t.Card.Scopes)}
	}
	return t, "principal holds every scope of the tool", "", nil
}

// deniedMessage is the client's message of a call p may not make: the
// scopes of t that p lacks, in the words of the contract, not the text of
// [tools.Authorize]'s error.
func deniedMessage(p tools.Principal, t *tools.Tool) string {
	var missing []string
	for _, sc := range t.Card.Scopes {
		if !p.HasScope(sc) {
			missing = append(missing, strconv.Quote(sc))
		}
	}
	if len(missing) == 0 {
		return fmt.Sprintf("the caller may not use %s", t.ID)
	}
	return fmt.Sprintf("%s needs scope %s", t.ID, strings.Join(missing, ", "))
}

// unclaim gives up a claim that will not run now (it awaits approval, or
// the gateway cannot hold its outcome, or its lease is too short). A
// fresh claim is released: nothing ran. A claim that took over an earlier,
// possibly effective execution goes back to uncertain, so the slot stays
// bound to its key and no other arguments can run in it.
func (g *Gateway) unclaim(ctx, rctx context.Context, f *facts, slot store.Slot) {
	cl := f.claim
	var err error
	if cl.Previous == "" {
		err = g.store.Release(rctx, slot, cl.Token, f.start)
	} else {
		reason := cl.Record.Reason
		if reason == "" {
			reason = "the previous owner's lease expired"
		}
		err = g.store.MarkUncertain(rctx, slot, cl.Token, reason, f.start, f.start.Add(g.opts.Retention))
	}
	if err != nil && !errors.Is(err, store.ErrFenced) {
		g.log.LogAttrs(ctx, slog.LevelError, "gateway: giving up a claim failed",
			slog.String("tool", f.tool.ID), slog.String("key", f.valid.key), slog.String("error", err.Error()))
	}
}

// invalidCall is a VALIDATION_ERROR about the call's own fields: it has
// no [Violation], whose pointer would name a place in the arguments.
func invalidCall(msg string) *Error {
	return &Error{Type: ValidationError, Message: "invalid call: " + msg, Retryable: true}
}

// validate checks the session, the arguments' JSON (on the bytes sent),
// the numbers, the schema and the tool's Validator, and returns the
// canonical arguments. With t nil (a call of a tool admission did not
// find) it checks the call's own fields and the arguments' JSON only.
func (g *Gateway) validate(ctx context.Context, call Call, t *tools.Tool) ([]byte, *Error) {
	switch {
	case call.SessionID == "":
		return nil, invalidCall("session_id must not be empty")
	case len(call.SessionID) > maxSessionIDBytes:
		return nil, invalidCall(fmt.Sprintf("session_id is longer than %d bytes", maxSessionIDBytes))
	case !plainName(call.SessionID):
		// It is part of the key and of the record a store keeps.
		return nil, invalidCall("session_id must be valid UTF-8 without control characters")
	case call.Step < 0:
		return nil, invalidCall("step must not be negative")
	}
	args := bytes.TrimSpace(call.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if len(args) > g.opts.MaxArgumentBytes {
		return nil, Invalid(Violation{Pointer: "", Message: fmt.Sprintf("arguments exceed %d bytes", g.opts.MaxArgumentBytes)})
	}
	tree, err := jcs.Parse(args)
	if err != nil {
		return nil, Invalid(Violation{Pointer: "", Message: strings.TrimSpace("arguments are not valid JSON " + jcs.Describe(err))})
	}
	if _, ok := tree.(map[string]any); !ok {
		return nil, Invalid(Violation{Pointer: "", Message: "arguments must be a JSON object"})
	}
	if vs := inexactNumbers(tree); len(vs) > 0 {
		return nil, Invalid(vs...)
	}
	if t != nil {
		if gerr := g.validateSchema(ctx, t, tree); gerr != nil {
			return nil, gerr
		}
	}
	canon, err := jcs.Append(make([]byte, 0, len(args)), tree)
	if err != nil {
		return nil, Invalid(Violation{Pointer: "", Message: "arguments cannot be canonicalized: " + err.Error()})
	}
	if t == nil {
		return canon, nil
	}
	if v := g.opts.Validators[t.ID]; v != nil {
		if err := g.runValidator(ctx, v, call, t, canon); err != nil {
			var ge *Error
			switch {
			case errors.As(err, &ge) && ge == nil:
				// A nil *Error in a non-nil error interface: no violation.
			case ge != nil && ge.Type == ValidationError:
				return nil, ge
			default:
				return nil, Invalid(Violation{Pointer: "", Message: err.Error()})
			}
		}
	}
	return canon, nil
}

// validateSchema checks the parsed arguments tree against t's input schema.
func (g *Gateway) validateSchema(ctx context.Context, t *tools.Tool, tree any) *Error {
	sch, err := g.schemaFor(t)
	if err != nil {
		id := errorid.New()
		g.log.LogAttrs(ctx, slog.LevelError, "gateway: a tool's input schema does not compile",
			slog.String("error_id", id), slog.String("tool", t.ID), slog.String("error", err.Error()))
		return &Error{Type: Internal, ErrorID: id, Message: fmt.Sprintf("tool %s cannot be validated (error %s)", t.ID, id)}
	}
	vs, err := checkSchema(sch, tree, time.Now().Add(g.opts.ValidationTimeout))
	if errors.Is(err, jsonschema.ErrDeadline) {
		g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: validation ran past its deadline",
			slog.String("tool", t.ID), slog.Duration("timeout", g.opts.ValidationTimeout))
		return &Error{Type: ValidationError, Details: []Violation{},
			Message: fmt.Sprintf("validating the arguments took longer than %v (a pattern backtracks on them); the call was refused and nothing ran", g.opts.ValidationTimeout)}
	}
	if err != nil {
		id := errorid.New()
		g.log.LogAttrs(ctx, slog.LevelError, "gateway: validation failed", slog.String("error_id", id),
			slog.String("tool", t.ID), slog.String("error", err.Error()))
		return &Error{Type: Internal, ErrorID: id, Message: fmt.Sprintf("tool %s cannot be validated (error %s)", t.ID, id)}
	}
	if len(vs) > 0 {
		return Invalid(vs...)
	}
	return nil
}

// maxSafeInteger is 2^53: integers beyond it are not exact as doubles.
const maxSafeInteger = 1 << 53

// inexactNumbers reports the numbers whose value the handler would not
// receive. The schema sees the text the client sent (exact decimals), but
// the handler gets the RFC 8785 form, where a number is an IEEE double: a
// literal with more digits than a double keeps ("amount":
// 1.0000000000000000001 would reach a ledger as 1) or an integer beyond
// ±2^53 in any notation (9007199254740993, 9007199254740993.0,
// 9.007199254740993e15: neighbours of such an integer are not doubles)
// must be refused, not rounded.
func inexactNumbers(v any) []Violation {
	if !hasInexactNumber(v) {
		return nil
	}
	var out []Violation
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		if len(out) >= maxViolations {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(e, append(path[:len(path):len(path)], k))
			}
		case []any:
			for i, e := range v {
				walk(e, append(path[:len(path):len(path)], strconv.Itoa(i)))
			}
		case json.Number:
			if msg := numberProblem(v); msg != "" {
				out = append(out, Violation{Pointer: jsonPointer(path), Message: msg})
			}
		}
	}
	walk(v, nil)
	return out
}

// maxViolations bounds the violations of one call.
const maxViolations = 20

func hasInexactNumber(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if hasInexactNumber(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasInexactNumber(e) {
				return true
			}
		}
	case json.Number:
		return numberProblem(v) != ""
	}
	return false
}

// numberProblem says why the number n cannot reach a handler unchanged,
// or "" when it can.
func numberProblem(n json.Number) string {
	s := string(n)
	f, loss := jcs.ParseNumber(s)
	switch {
	case loss == jcs.LossOverflow:
		return "number " + textcut.Prefix(s, 40) + " is beyond the range of a double (about ±1.8e308); send it as a string"
	case loss == jcs.LossUnderflow:
		return "number " + textcut.Prefix(s, 40) + " is too close to zero for a double (it would read as 0); send it as a string"
	case loss == jcs.LossNone && f == math.Trunc(f) && math.Abs(f) > maxSafeInteger,
		loss == jcs.LossDigits && f == math.Trunc(f) && math.Abs(f) >= maxSafeInteger:
		return "integer beyond ±2^53 cannot be represented exactly; send it as a string"
	case loss != jcs.LossNone:
		return "number " + textcut.Prefix(s, 40) + " has more significant digits than a double keeps (at most 15 are exact); send it rounded, or as a string"
	}
	return ""
}

// needsApproval asks [Options.NeedsApproval]; a panicking policy fails
// closed (the call needs an approval).
func (g *Gateway) needsApproval(ctx context.Context, f *facts) (need bool) {
	defer func() {
		if r := recover(); r != nil {
			need = true
			g.log.LogAttrs(ctx, slog.LevelError, "gateway: NeedsApproval panicked; requiring approval",
				slog.String("tool", f.tool.ID), slog.Any("panic", r))
		}
	}()
	return g.opts.NeedsApproval(ctx, f.call, f.valid.canon)
}

// runValidator runs a tool's Validator; a panic is a refusal, not a crash.
func (g *Gateway) runValidator(ctx context.Context, v Validator, call Call, t *tools.Tool, canon []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			g.log.LogAttrs(ctx, slog.LevelError, "gateway: validator panicked",
				slog.String("tool", t.ID), slog.Any("panic", r))
			err = errors.New("the tool's validator failed on these arguments")
		}
	}()
	return v(ctx, call, canon)
}

// approvalID derives the approval's ID from the key: a retried call finds
// its pending approval instead of creating another.
func approvalID(key string) string {
	sum := sha256.Sum256([]byte("toolgate/approval/v1\x00" + key))
	return "apr_" + hex.EncodeToString(sum[:16])
}

// definitionApprovalID derives the ID of the approval a call needs when
// the tool's definition is no longer the one its first approval (ID
// approvalID(key)) was requested for: one per key and definition, so a
// retried call finds it, and a tool changed back finds the first again.
func definitionApprovalID(key, definition string) string {
	sum := sha256.Sum256([]byte("toolgate/approval/v2\x00" + key + "\x00" + definition))
	return "apr_" + hex.EncodeToString(sum[:16])
}

// sessionDenialID derives the ID under which a denial is kept for the
// whole session ([Gateway.Deny]): one per tenant, principal, session, tool
// and argument fingerprint, with no step, so the same call sent at any
// step of the session finds it. Each field is length-prefixed, as in
// [DeriveKey].
func sessionDenialID(tenant, principal, sessionID, tool, fp string) string {
	h := sha256.New()
	h.Write([]byte("toolgate/session-denial/v1"))
	for _, f := range [...]string{tenant, principal, sessionID, tool, fp} {
		writeField(h, []byte(f))
	}
	var sum [sha256.Size]byte
	return "apr_" + hex.EncodeToString(h.Sum(sum[:0])[:16])
}

// getApproval returns the stored approval id, or an empty one when there
// is none.
func (g *Gateway) getApproval(ctx context.Context, id string) (store.Approval, error) {
	a, err := g.store.GetApproval(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Approval{}, nil
	}
	return a, err
}

// DefinitionHash returns the hash an approval binds of the tool's
// definition: "sha256:" and the hex SHA-256 of its ID, title,
// description, card (its scopes, risk flags and the rest) and RFC 8785
// canonical input schema, each length-prefixed. A call whose tool hashes
// otherwise than when its approval was requested needs a new approval
// (an upstream server may rewrite a tool after a human approved a call of
// it). The handler, tenants and timeout do not enter it, nor what only
// the handler reads (an upstream tool's outputSchema, which checks the
// result): neither changes what an approver was shown nor what a grant
// lets run.
func DefinitionHash(t *tools.Tool) string {
	card, _ := json.Marshal(t.Card) // a struct of strings, slices and bools: cannot fail
	schema := []byte(t.InputSchema)
	if c, err := jcs.Canonicalize(schema); err == nil {
		schema = c
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(t.ID), []byte(t.Title), []byte(t.Description), card, schema} {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(part))))
		h.Write(part)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// callHandler runs the handler in the caller's goroutine, turning a panic
// into an outcome. A handler that ignores its context's deadline delays
// its caller, and its completion is rejected once the lease has expired.
func (g *Gateway) callHandler(ctx context.Context, f *facts) (value json.RawMessage, err error, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
			g.log.LogAttrs(ctx, slog.LevelError, "gateway: handler panicked",
				slog.String("tool", f.tool.ID), slog.String("key", f.valid.key), slog.Any("panic", r),
				slog.String("stack", string(debug.Stack())))
		}
	}()
	value, err = f.tool.Handler(ctx, f.valid.canon)
	return value, err, nil
}

// internal logs a store failure with a fresh error ID and returns the
// client's side of it: the ID, never the store's error text (which can
// carry a DSN or a path).
func (g *Gateway) internal(ctx context.Context, f *facts, what string, err error) *Error {
	id := errorid.New()
	key := ""
	if f.valid != nil {
		key = f.valid.key
	}
	g.log.LogAttrs(ctx, slog.LevelError, "gateway: store failure", slog.String("error_id", id),
		slog.String("step", what), slog.String("tool", textcut.Prefix(f.call.Tool, 128)), slog.String("error", err.Error()))
	return &Error{Type: Internal, Retryable: true, IdempotencyKey: key, ErrorID: id,
		Message: "the gateway could not " + what + "; nothing was acknowledged, retry the same call (error " + id + ")"}
}

// outcomeOf is the [store.Outcome] of a call answered with res or gerr.
func outcomeOf(res *Result, gerr *Error, noEffect bool) store.Outcome {
	if gerr == nil {
		if res.Cached {
			return store.OutcomeReplayed
		}
		return store.OutcomeOK
	}
	switch gerr.Type {
	case Unauthenticated:
		return store.OutcomeUnauthenticated
	case PermissionDenied:
		return store.OutcomeDenied
	case UnknownTool:
		return store.OutcomeUnknownTool
	case ValidationError:
		return store.OutcomeInvalid
	case RateLimited:
		return store.OutcomeRateLimited
	case InProgress:
		return store.OutcomeInProgress
	case IdempotencyMismatch:
		return store.OutcomeMismatch
	case ConfirmationRequired:
		return store.OutcomeConfirmationRequired
	case DomainErrorType:
		if gerr.Cached {
			return store.OutcomeReplayed
		}
		return store.OutcomeDomainError
	case DownstreamFailure:
		if noEffect {
			return store.OutcomeNoEffect
		}
		return store.OutcomeUncertain
	case UncertainOutcome:
		return store.OutcomeUncertain
	default:
		return store.OutcomeInternal
	}
}

// finish audits the call and updates the metrics. allowed is the
// authorization decision; reason its reason.
func (g *Gateway) finish(ctx context.Context, f *facts, allowed bool, reason string, res *Result, gerr *Error) {
	call := f.call
	outcome := outcomeOf(res, gerr, f.noEffect())
	latency := g.clock.Now().Sub(f.start)
	toolLabel := "unknown"
	switch {
	case f.unknown != nil && allowed:
		// Answered from the record of a call of a tool that has gone: its
		// ID named a tool that ran, so the label stays bounded.
		toolLabel = call.Tool
	case f.tool != nil:
		toolLabel = f.tool.ID
	}
	g.metrics.call(toolLabel, outcome, latency)
	if (res != nil && res.Cached) || (gerr != nil && gerr.Cached) {
		g.metrics.replay(toolLabel)
	}
	if !allowed {
		g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: call denied",
			slog.String("tenant", call.Principal.Tenant), slog.String("principal", call.Principal.ID),
			slog.String("tool", textcut.Prefix(call.Tool, 128)), slog.String("reason", reason))
	}
	if f.audited {
		return
	}
	g.held.awaitRunningAudit(f)
	if err := g.store.AppendAudit(context.WithoutCancel(ctx), g.auditEntry(f, allowed, res, gerr, latency)); err != nil {
		g.metrics.auditFailure()
		g.log.LogAttrs(ctx, slog.LevelError, "gateway: audit append failed", slog.String("error", err.Error()))
	}
}

// callEntry is the part of an audit entry that comes from the call: its
// time, who made it and where, each text as [cleanText] keeps it.
func callEntry(f *facts) store.AuditEntry {
	call := f.call
	return store.AuditEntry{
		Time: f.start, Tenant: storableText(call.Principal.Tenant), Principal: storableText(call.Principal.ID),
		Actor: cleanText(call.Actor, 256), Taint: cleanText(call.Taint, 512),
		SessionID: cleanText(call.SessionID, maxSessionIDBytes), Step: call.Step, Tool: cleanText(call.Tool, 256),
	}
}

// cleanText is a caller's text as the gateway writes it into an audit
// entry, an approval or a client's message: each invalid byte sequence
// and each NUL replaced by U+FFFD (so every store keeps it as it is),
// cut to at most n bytes at a character's start.
func cleanText(s string, n int) string {
	return textcut.Prefix(storableText(s), n)
}

// storableText is s with each invalid UTF-8 sequence and each NUL byte
// replaced by U+FFFD: s itself, without a copy, when it holds neither.
func storableText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// plainName reports whether s, a name a store keys records by (a tenant,
// a principal, a session ID, an approval ID), is valid UTF-8 without
// control characters. Every store keeps such text as it is (PostgreSQL's
// text columns refuse invalid UTF-8 and NUL; a caller can send a NUL as
// "\u0000" in JSON), and it never holds the separators a store may join
// names with (redisstore's record keys join them with U+001F).
func plainName(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// auditEntry is the audit log's line for a call answered with res or
// gerr; allowed is the authorization decision, f.reason its reason.
func (g *Gateway) auditEntry(f *facts, allowed bool, res *Result, gerr *Error, latency time.Duration) store.AuditEntry {
	e := callEntry(f)
	e.Decision, e.Reason, e.Outcome, e.Latency = store.DecisionAllow, cleanText(f.reason, 512), outcomeOf(res, gerr, f.noEffect()), latency
	if !allowed {
		e.Decision = store.DecisionDeny
	}
	if f.valid != nil && allowed {
		// A call refused as UNKNOWN_TOOL has a key only for the look-up
		// that found no record of it: the entry names none.
		e.Key = f.valid.key
	}
	if f.approval != nil {
		e.ApprovalID = approvalID(f.valid.key)
	}
	if gerr != nil && gerr.ApprovalID != "" {
		// The approval the answer names: one requested for the tool's new
		// definition, or the session's denial of these arguments.
		e.ApprovalID = gerr.ApprovalID
	}
	switch {
	case gerr == nil || !allowed:
	case gerr.Type == DomainErrorType:
		e.Reason += "; domain error " + gerr.Code
	case gerr.Type == ValidationError:
		// A violation's message may quote the value it refuses (a pattern
		// mismatch does): the entry names where, never what.
		e.Reason = cleanText(e.Reason+"; "+string(gerr.Type)+violationPointers(gerr), 512)
	default:
		e.Reason = cleanText(e.Reason+"; "+string(gerr.Type)+": "+gerr.Message, 512)
	}
	return e
}

// violationPointers is " at " and the JSON pointers of gerr's violations
// (at most 5, "/" for the arguments as a whole), or "" without any.
func violationPointers(gerr *Error) string {
	vs, _ := gerr.Details.([]Violation)
	var ps []string
	for i, v := range vs {
		if i == 5 {
			ps = append(ps, "…")
			break
		}
		ps = append(ps, textcut.Prefix(cmp.Or(v.Pointer, "/"), 64))
	}
	if len(ps) == 0 {
		return ""
	}
	return " at " + strings.Join(ps, ", ")
}

func (g *Gateway) limitFor(id string) store.RateLimit {
	if l, ok := g.opts.RateLimits[id]; ok {
		return l
	}
	return g.opts.RateLimit
}

// bucketName is the rate-limit bucket of p's calls of tool: the tenant and
// the principal as JSON strings, then the tool. Unambiguous (a JSON
// string ends at its first unescaped quote) and holds no NUL: PostgreSQL
// refused the NUL bytes that separated them before, failing every
// rate-limited call.
func bucketName(p tools.Principal, tool string) string {
	var buf [128]byte // a usual name fits: one allocation, the string's
	b := jcs.AppendString(buf[:0], p.Tenant)
	b = jcs.AppendString(b, p.ID)
	return string(append(b, tool...))
}

func ceilSecond(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return (d + time.Second - 1).Truncate(time.Second)
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}
