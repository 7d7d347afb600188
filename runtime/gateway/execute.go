package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/internal/jsonschema"
	"github.com/toolgate/toolgate/tools"
)

// Outcomes, as the audit log and the calls_total metric name them.
const (
	OutcomeOK                   = "ok"
	OutcomeDomainError          = "domain_error"
	OutcomeReplayed             = "replayed"
	OutcomeUnauthenticated      = "unauthenticated"
	OutcomeDenied               = "denied"
	OutcomeUnknownTool          = "unknown_tool"
	OutcomeInvalid              = "invalid"
	OutcomeRateLimited          = "rate_limited"
	OutcomeInProgress           = "in_progress"
	OutcomeMismatch             = "mismatch"
	OutcomeConfirmationRequired = "confirmation_required"
	OutcomeNoEffect             = "no_effect"
	OutcomeUncertain            = "uncertain"
	OutcomeInternal             = "internal"
)

// maxSessionIDBytes bounds Call.SessionID.
const maxSessionIDBytes = 256

// exec carries one call through Execute.
type exec struct {
	call Call
	// detached is the caller's context without its cancellation: for the
	// handler and for recording, which must not stop when the caller leaves.
	detached context.Context
	start    time.Time
	tool     *tools.Tool // nil until looked up
	key      string
	fp       string
	canon    []byte
	token    uint64
	appr     string
	// decision and reason for the audit log
	decision, reason string
	noEffect         bool // the handler failed before any effect
}

// Execute runs one call through the gateway, in this order: authenticate
// (a principal with ID and tenant) → authorize with tools.Authorize on the
// registry's current snapshot (deny by default; the decision and its reason
// are logged and audited) → rate limit (principal × tool) → validate (the
// JSON Schema with ECMA-262 patterns, then the tool's Validator) → derive
// the idempotency key (DeriveKey over the RFC 8785 arguments) → claim the
// slot → approval when the tool is irreversible or NeedsApproval says so →
// run the handler with its deadline and the key in its context → record
// (see the recording table in the package documentation) → audit → metrics.
//
// It returns a *Result, or an *Error for every refusal and failure (match
// with errors.As); a domain error from the tool is an *Error of type
// DOMAIN_ERROR. The handler receives the canonical arguments. Execute is
// safe for concurrent use. Once the handler has started, the caller's
// cancellation no longer stops it: the handler runs to completion or to its
// own deadline and the outcome is recorded, so that a client that gives up
// cannot leave a half-known effect behind.
func (g *Gateway) Execute(ctx context.Context, call Call) (*Result, error) {
	x := &exec{call: call, start: g.clock.Now(), detached: context.WithoutCancel(ctx)}
	res, gerr := g.execute(ctx, x)
	outcome := outcomeOf(res, gerr, x.noEffect)
	g.finish(ctx, x, outcome, gerr)
	if gerr != nil {
		return nil, gerr
	}
	return res, nil
}

func (g *Gateway) execute(ctx context.Context, x *exec) (*Result, *Error) {
	call := x.call
	p := call.Principal
	t, reason, denial, gerr := admit(g.reg.Snapshot(), call)
	x.tool, x.reason = t, reason
	if gerr != nil {
		x.decision = "deny"
		if denial != "" {
			id := ""
			if t != nil {
				id = t.ID
			}
			g.metrics.denied(id, denial)
		}
		return nil, gerr
	}
	x.decision = "allow"
	if g.log.Enabled(ctx, slog.LevelDebug) {
		g.log.LogAttrs(ctx, slog.LevelDebug, "gateway: call allowed",
			slog.String("tenant", p.Tenant), slog.String("principal", p.ID), slog.String("tool", t.ID))
	}
	if t.Handler == nil {
		return nil, &Error{Type: UnknownTool, Message: fmt.Sprintf("tool %q cannot be executed (no handler)", t.ID)}
	}

	if l := g.limitFor(t.ID); l.Rate > 0 && l.Burst > 0 {
		ok, wait, err := g.store.TakeToken(ctx, bucketName(p, t.ID), l, x.start)
		if err != nil {
			return nil, g.internal(ctx, x, "rate limit", err)
		}
		if !ok {
			return nil, &Error{Type: RateLimited, Retryable: true, RetryAfter: wait,
				Message: fmt.Sprintf("rate limit for %s exceeded; retry after %v", t.ID, ceilSecond(wait))}
		}
	}

	if verr := g.validate(ctx, x); verr != nil {
		return nil, verr
	}

	x.fp = Fingerprint(x.canon)
	x.key = DeriveKey(p.Tenant, p.ID, call.SessionID, call.Step, t.ID, x.canon)
	slot := Slot{Tenant: p.Tenant, Principal: p.ID, SessionID: call.SessionID, Step: call.Step, Tool: t.ID}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = g.opts.DefaultTimeout
	}
	now := x.start
	lease := now.Add(timeout + g.opts.LeaseGrace)
	cl, err := g.store.Claim(ctx, ClaimRequest{
		Slot: slot, Principal: p.ID, Key: x.key, Fingerprint: x.fp, Now: now,
		LeaseExpires: lease, ExpiresAt: lease.Add(g.opts.Retention),
		TakeOver: g.opts.Uncertain == UncertainRerun,
	})
	if err != nil {
		return nil, g.internal(ctx, x, "claim", err)
	}
	switch cl.Status {
	case ClaimAcquired:
		x.token = cl.Token
		if cl.Previous != "" {
			g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: re-running a call with an uncertain outcome under the same key",
				slog.String("tool", t.ID), slog.String("key", x.key), slog.String("previous", string(cl.Previous)),
				slog.Int("attempt", cl.Record.Attempts))
		}
	case ClaimDone:
		g.metrics.replay(t.ID)
		return replay(cl.Record)
	case ClaimInProgress:
		wait := min(max(cl.Record.LeaseExpires.Sub(now), 0), g.opts.InProgressRetryAfter)
		return nil, &Error{Type: InProgress, Retryable: true, RetryAfter: wait, IdempotencyKey: x.key,
			Message: "the same call is being executed; retry with the same arguments to get its result"}
	case ClaimUncertain:
		return nil, &Error{Type: UncertainOutcome, IdempotencyKey: x.key,
			Message: "an earlier execution of this call has an unknown outcome (" + cl.Record.Reason + "); it must be reconciled before it can run again"}
	case ClaimMismatch:
		return nil, &Error{Type: IdempotencyMismatch,
			Message: "this step already called the tool with other arguments; use a new step for a new call"}
	default:
		return nil, g.internal(ctx, x, "claim", fmt.Errorf("unknown claim status %d", cl.Status))
	}

	if t.Card.Irreversible || (x.call.Taint != "" && !t.Card.ReadOnly) || g.needsApproval(ctx, x) {
		if gerr := g.checkApproval(ctx, x, slot, now); gerr != nil {
			g.unclaim(ctx, x, slot, cl, now)
			return nil, gerr
		}
	}

	return g.run(ctx, x, slot, timeout, cl.Record.Attempts)
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
	i, ok := snap.Lookup(call.Tool)
	if !ok {
		return nil, "unknown tool", "", &Error{Type: UnknownTool, Message: fmt.Sprintf("no tool %q", truncate(call.Tool, 128))}
	}
	t = snap.Tool(i)
	if err := tools.Authorize(p, t); err != nil {
		if errors.Is(err, tools.ErrWrongTenant) {
			// A tool restricted to other tenants does not exist for this one.
			return t, err.Error(), "wrong_tenant", &Error{Type: UnknownTool, Message: fmt.Sprintf("no tool %q", call.Tool)}
		}
		return t, err.Error(), "missing_scope", &Error{Type: PermissionDenied, Message: err.Error()}
	}
	return t, "principal holds every scope of the tool", "", nil
}

// unclaim gives up a claim that will not run now (it awaits approval). A
// fresh claim is released: nothing ran. A claim that took over an earlier,
// possibly effective execution goes back to uncertain, so the slot stays
// bound to its key and no other arguments can run in it.
func (g *Gateway) unclaim(ctx context.Context, x *exec, slot Slot, cl Claim, now time.Time) {
	rctx := x.detached
	var err error
	if cl.Previous == "" {
		err = g.store.Release(rctx, slot, x.token, now)
	} else {
		reason := cl.Record.Reason
		if reason == "" {
			reason = "the previous owner's lease expired"
		}
		err = g.store.MarkUncertain(rctx, slot, x.token, reason, now, now.Add(g.opts.Retention))
	}
	if err != nil && !errors.Is(err, ErrFenced) {
		g.log.LogAttrs(ctx, slog.LevelError, "gateway: giving up a claim awaiting approval failed",
			slog.String("tool", x.tool.ID), slog.String("key", x.key), slog.String("error", err.Error()))
	}
}

// validate checks the session, the arguments' JSON, the schema and the
// tool's Validator, and sets x.canon.
func (g *Gateway) validate(ctx context.Context, x *exec) *Error {
	call := x.call
	switch {
	case call.SessionID == "":
		return Invalid(Violation{Pointer: "", Message: "session_id must not be empty"})
	case len(call.SessionID) > maxSessionIDBytes:
		return Invalid(Violation{Pointer: "", Message: fmt.Sprintf("session_id is longer than %d bytes", maxSessionIDBytes)})
	case call.Step < 0:
		return Invalid(Violation{Pointer: "", Message: "step must not be negative"})
	}
	args := bytes.TrimSpace(call.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if len(args) > g.opts.MaxArgumentBytes {
		return Invalid(Violation{Pointer: "", Message: fmt.Sprintf("arguments exceed %d bytes", g.opts.MaxArgumentBytes)})
	}
	tree, err := jcs.Parse(args)
	if err != nil {
		return Invalid(Violation{Pointer: "", Message: "arguments are not valid JSON: " + err.Error()})
	}
	if _, ok := tree.(map[string]any); !ok {
		return Invalid(Violation{Pointer: "", Message: "arguments must be a JSON object"})
	}
	if vs := unsafeIntegers(tree); len(vs) > 0 {
		return Invalid(vs...)
	}
	sch, err := g.schemaFor(x.tool)
	if err != nil {
		return &Error{Type: Internal, Message: fmt.Sprintf("tool %s has a schema that does not compile: %v", x.tool.ID, err)}
	}
	vs, err := checkSchema(sch, tree, time.Now().Add(g.opts.ValidationTimeout))
	if errors.Is(err, jsonschema.ErrDeadline) {
		g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: validation ran past its deadline",
			slog.String("tool", x.tool.ID), slog.Duration("timeout", g.opts.ValidationTimeout))
		return &Error{Type: ValidationError, Details: []Violation{},
			Message: fmt.Sprintf("validating the arguments took longer than %v (a pattern backtracks on them); the call was refused and nothing ran", g.opts.ValidationTimeout)}
	}
	if err != nil {
		return &Error{Type: Internal, Message: fmt.Sprintf("tool %s has a schema that does not compile", x.tool.ID)}
	}
	if len(vs) > 0 {
		return Invalid(vs...)
	}
	canon, err := jcs.Append(make([]byte, 0, len(args)), tree)
	if err != nil {
		return Invalid(Violation{Pointer: "", Message: "arguments cannot be canonicalized: " + err.Error()})
	}
	x.canon = canon
	if v := g.opts.Validators[x.tool.ID]; v != nil {
		if err := g.runValidator(ctx, v, x); err != nil {
			var ge *Error
			switch {
			case errors.As(err, &ge) && ge == nil:
				// A nil *Error in a non-nil error interface: no violation.
			case ge != nil && ge.Type == ValidationError:
				return ge
			default:
				return Invalid(Violation{Pointer: "", Message: err.Error()})
			}
		}
	}
	return nil
}

// maxSafeInteger is 2^53: integers beyond it are not exact as doubles.
const maxSafeInteger = 1 << 53

// unsafeIntegers reports integer literals beyond ±2^53. Canonical JSON
// (RFC 8785) represents numbers as IEEE doubles, so such an integer would
// reach the handler rounded (an account number off by a few units); it must
// be sent as a string instead.
func unsafeIntegers(v any) []Violation {
	if !hasUnsafeInteger(v) {
		return nil
	}
	var out []Violation
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
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
			if unsafeInteger(v) {
				out = append(out, Violation{Pointer: jsonPointer(path),
					Message: "integer beyond ±2^53 cannot be represented exactly; send it as a string"})
			}
		}
	}
	walk(v, nil)
	return out
}

func hasUnsafeInteger(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if hasUnsafeInteger(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasUnsafeInteger(e) {
				return true
			}
		}
	case json.Number:
		return unsafeInteger(v)
	}
	return false
}

func unsafeInteger(n json.Number) bool {
	if len(strings.TrimPrefix(string(n), "-")) < 16 || strings.ContainsAny(string(n), ".eE") {
		return false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return err != nil || i > maxSafeInteger || i < -maxSafeInteger
}

// needsApproval asks Options.NeedsApproval; a panicking policy fails
// closed (the call needs an approval).
func (g *Gateway) needsApproval(ctx context.Context, x *exec) (need bool) {
	if g.opts.NeedsApproval == nil {
		return false
	}
	defer func() {
		if r := recover(); r != nil {
			need = true
			g.log.LogAttrs(ctx, slog.LevelError, "gateway: NeedsApproval panicked; requiring approval",
				slog.String("tool", x.tool.ID), slog.Any("panic", r))
		}
	}()
	return g.opts.NeedsApproval(x.call, x.canon)
}

// runValidator runs a tool's Validator; a panic is a refusal, not a crash.
func (g *Gateway) runValidator(ctx context.Context, v Validator, x *exec) (err error) {
	defer func() {
		if r := recover(); r != nil {
			g.log.LogAttrs(ctx, slog.LevelError, "gateway: validator panicked",
				slog.String("tool", x.tool.ID), slog.Any("panic", r))
			err = errors.New("the tool's validator failed on these arguments")
		}
	}()
	return v(ctx, x.call, x.canon)
}

// approvalID derives the approval's ID from the key: a retried call finds
// its pending approval instead of creating another.
func approvalID(key string) string {
	sum := sha256.Sum256([]byte("toolgate/approval/v1\x00" + key))
	return "apr_" + hex.EncodeToString(sum[:16])
}

func (g *Gateway) checkApproval(ctx context.Context, x *exec, slot Slot, now time.Time) *Error {
	id := approvalID(x.key)
	x.appr = id
	a, err := g.store.GetApproval(ctx, id)
	switch {
	case err == nil && a.Granted && a.Key == x.key && a.Fingerprint == x.fp && a.ExpiresAt.After(now):
		return nil
	case err != nil && !errors.Is(err, ErrNotFound):
		return g.internal(ctx, x, "approval lookup", err)
	}
	a, err = g.store.CreateApproval(x.detached, Approval{
		ID: id, Slot: slot, Key: x.key, Fingerprint: x.fp, Requester: x.call.Principal.ID,
		Arguments: x.canon, Taint: x.call.Taint, CreatedAt: now, ExpiresAt: now.Add(g.opts.ApprovalTTL),
	})
	if err != nil {
		return g.internal(ctx, x, "approval create", err)
	}
	msg := fmt.Sprintf("%s needs a human approval: a principal holding %q must grant approval %s; then send the same call again", x.tool.ID, ApprovalScope, a.ID)
	if x.call.Taint != "" {
		msg += " (the conversation read untrusted output: " + truncate(x.call.Taint, 200) + ")"
	}
	return &Error{Type: ConfirmationRequired, ApprovalID: a.ID, IdempotencyKey: x.key, Message: msg}
}

type handlerOutcome struct {
	value json.RawMessage
	err   error
	panic any
}

// callHandler runs the handler in the caller's goroutine, turning a panic
// into an outcome. A handler that ignores its context's deadline delays
// its caller, and its completion is rejected once the lease has expired.
func (g *Gateway) callHandler(ctx context.Context, t *tools.Tool, x *exec) (out handlerOutcome) {
	defer func() {
		if r := recover(); r != nil {
			out = handlerOutcome{panic: r}
			g.log.LogAttrs(ctx, slog.LevelError, "gateway: handler panicked",
				slog.String("tool", t.ID), slog.String("key", x.key), slog.Any("panic", r),
				slog.String("stack", string(debug.Stack())))
		}
	}()
	v, err := t.Handler(ctx, x.canon)
	return handlerOutcome{value: v, err: err}
}

// run executes the handler and records its outcome.
func (g *Gateway) run(ctx context.Context, x *exec, slot Slot, timeout time.Duration, attempts int) (*Result, *Error) {
	t := x.tool
	hctx, cancel := context.WithTimeout(tools.WithIdempotencyKey(x.detached, x.key), timeout)
	out := g.callHandler(hctx, t, x)
	cancel()

	rctx := x.detached
	now := g.clock.Now()
	expires := now.Add(g.opts.Retention)
	var dom *tools.DomainError
	switch {
	case out.panic != nil:
		return nil, g.uncertain(rctx, x, slot, now, expires, fmt.Sprintf("handler panicked: %v", out.panic))
	case out.err == nil:
		if len(out.value) == 0 {
			out.value = json.RawMessage("null")
		} else if !json.Valid(out.value) {
			return nil, g.uncertain(rctx, x, slot, now, expires, "handler returned invalid JSON")
		}
		if gerr := g.complete(rctx, x, Completion{Slot: slot, Token: x.token, Value: out.value, Now: now, ExpiresAt: expires}); gerr != nil {
			return nil, gerr
		}
		return &Result{Value: out.value, IdempotencyKey: x.key, Attempts: attempts}, nil
	case errors.As(out.err, &dom):
		d := *dom
		if gerr := g.complete(rctx, x, Completion{Slot: slot, Token: x.token, DomainError: &d, Now: now, ExpiresAt: expires}); gerr != nil {
			return nil, gerr
		}
		return nil, domainError(&d, x.key, false)
	case tools.IsNoEffect(out.err):
		x.noEffect = true
		if err := g.store.Release(rctx, slot, x.token, now); err != nil && !errors.Is(err, ErrFenced) {
			g.log.LogAttrs(ctx, slog.LevelError, "gateway: releasing a no-effect claim failed",
				slog.String("tool", t.ID), slog.String("key", x.key), slog.String("error", err.Error()))
		}
		return nil, &Error{Type: DownstreamFailure, Retryable: true, IdempotencyKey: x.key,
			Message: "the tool failed before any effect: " + out.err.Error()}
	default:
		return nil, g.uncertain(rctx, x, slot, now, expires, out.err.Error())
	}
}

func (g *Gateway) complete(ctx context.Context, x *exec, c Completion) *Error {
	err := g.store.Complete(ctx, c)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrFenced):
		g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: late completion rejected (lease expired or taken over)",
			slog.String("tool", x.tool.ID), slog.String("key", x.key))
		return &Error{Type: DownstreamFailure, Retryable: g.opts.Uncertain == UncertainRerun, IdempotencyKey: x.key,
			Message: "the call outlived its lease and its outcome was not recorded; send the same call again (the tool re-runs with the same idempotency key)"}
	default:
		return g.internal(ctx, x, "record", err)
	}
}

func (g *Gateway) uncertain(ctx context.Context, x *exec, slot Slot, now, expires time.Time, reason string) *Error {
	g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: call outcome uncertain",
		slog.String("tool", x.tool.ID), slog.String("key", x.key), slog.String("reason", reason))
	if err := g.store.MarkUncertain(ctx, slot, x.token, truncate(reason, 512), now, expires); err != nil && !errors.Is(err, ErrFenced) {
		g.log.LogAttrs(ctx, slog.LevelError, "gateway: marking a call uncertain failed",
			slog.String("tool", x.tool.ID), slog.String("key", x.key), slog.String("error", err.Error()))
	}
	rerun := g.opts.Uncertain == UncertainRerun
	msg := "the tool failed and its effect is unknown: " + reason
	if rerun {
		msg += "; send the same call again: it re-runs with the same idempotency key, which the tool deduplicates"
	} else {
		msg += "; it must be reconciled before it can run again"
	}
	return &Error{Type: DownstreamFailure, Retryable: rerun, IdempotencyKey: x.key, Message: msg}
}

func (g *Gateway) internal(ctx context.Context, x *exec, what string, err error) *Error {
	g.log.LogAttrs(ctx, slog.LevelError, "gateway: store failure",
		slog.String("step", what), slog.String("tool", x.call.Tool), slog.String("error", err.Error()))
	return &Error{Type: Internal, Retryable: true, IdempotencyKey: x.key,
		Message: "the gateway could not " + what + "; nothing was acknowledged, retry the same call"}
}

func replay(r Record) (*Result, *Error) {
	if r.DomainError != nil {
		return nil, domainError(r.DomainError, r.Key, true)
	}
	return &Result{Value: append(json.RawMessage(nil), r.Value...), Cached: true, IdempotencyKey: r.Key, Attempts: r.Attempts}, nil
}

func domainError(d *tools.DomainError, key string, cached bool) *Error {
	return &Error{Type: DomainErrorType, Code: d.Code, Message: d.Message, Details: d.Details,
		IdempotencyKey: key, Cached: cached}
}

func outcomeOf(res *Result, gerr *Error, noEffect bool) string {
	if gerr == nil {
		if res.Cached {
			return OutcomeReplayed
		}
		return OutcomeOK
	}
	switch gerr.Type {
	case Unauthenticated:
		return OutcomeUnauthenticated
	case PermissionDenied:
		return OutcomeDenied
	case UnknownTool:
		return OutcomeUnknownTool
	case ValidationError:
		return OutcomeInvalid
	case RateLimited:
		return OutcomeRateLimited
	case InProgress:
		return OutcomeInProgress
	case IdempotencyMismatch:
		return OutcomeMismatch
	case ConfirmationRequired:
		return OutcomeConfirmationRequired
	case DomainErrorType:
		if gerr.Cached {
			return OutcomeReplayed
		}
		return OutcomeDomainError
	case DownstreamFailure:
		if noEffect {
			return OutcomeNoEffect
		}
		return OutcomeUncertain
	case UncertainOutcome:
		return OutcomeUncertain
	default:
		return OutcomeInternal
	}
}

// finish audits the call and updates the metrics.
func (g *Gateway) finish(ctx context.Context, x *exec, outcome string, gerr *Error) {
	end := g.clock.Now()
	latency := end.Sub(x.start)
	toolLabel := "unknown"
	if x.tool != nil {
		toolLabel = x.tool.ID
	}
	g.metrics.call(toolLabel, outcome, latency)
	decision := x.decision
	if decision == "" {
		decision = "deny"
	}
	if decision == "deny" {
		g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: call denied",
			slog.String("tenant", x.call.Principal.Tenant), slog.String("principal", x.call.Principal.ID),
			slog.String("tool", truncate(x.call.Tool, 128)), slog.String("reason", x.reason))
	}
	e := AuditEntry{
		Time: x.start, Tenant: x.call.Principal.Tenant, Principal: x.call.Principal.ID,
		Actor: truncate(x.call.Actor, 256), Taint: truncate(x.call.Taint, 512),
		SessionID: truncate(x.call.SessionID, maxSessionIDBytes), Step: x.call.Step, Tool: truncate(x.call.Tool, 256),
		Key: x.key, Decision: decision, Reason: x.reason, Outcome: outcome, ApprovalID: x.appr, Latency: latency,
	}
	switch {
	case gerr == nil || decision == "deny":
	case gerr.Type == DomainErrorType:
		e.Reason += "; domain error " + gerr.Code
	default:
		e.Reason = truncate(e.Reason+"; "+string(gerr.Type)+": "+gerr.Message, 512)
	}
	if err := g.store.AppendAudit(x.detached, e); err != nil {
		g.metrics.auditFailure()
		g.log.LogAttrs(ctx, slog.LevelError, "gateway: audit append failed", slog.String("error", err.Error()))
	}
}

func (g *Gateway) limitFor(id string) RateLimit {
	if l, ok := g.opts.RateLimits[id]; ok {
		return l
	}
	return g.opts.RateLimit
}

func bucketName(p tools.Principal, tool string) string {
	return p.Tenant + "\x00" + p.ID + "\x00" + tool
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
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
