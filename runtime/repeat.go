package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

// RepeatPolicy says what a turn does with a call the model repeats: the
// same tool with the same arguments (equal RFC 8785 canonical JSON, the
// form the gateway fingerprints) after that call already succeeded earlier
// in the same turn. Each step has its own idempotency key, so without the
// rule a model that answers every tool result with the same call (a small
// model in a loop, a scripted one that ignores results) has an effectful
// tool executed once per step until [Options.MaxSteps] runs out.
type RepeatPolicy int

const (
	// RepeatRefuse (the zero value) does not execute the repeat of a tool
	// that is not read-only: the model is told, as the call's tool result,
	// that the earlier call already succeeded, with its result (a
	// [RepeatedCallError] in the turn's [CallRecord]), so it can answer.
	// A repeat of a call whose earlier attempt in the turn may have run
	// without an outcome (DOWNSTREAM_FAILURE, OUTCOME_UNCERTAIN,
	// IN_PROGRESS, INTERNAL_ERROR) is re-sent at that attempt's step, with
	// its idempotency key, so the gateway and a downstream that honours the
	// key see a retry, not a new call; so is the repeat of a call whose
	// approval a human denied ([gateway.Gateway.Deny]), which the gateway
	// then refuses without anyone being asked again. Read-only tools repeat
	// freely.
	RepeatRefuse RepeatPolicy = iota
	// RepeatAllow executes every repeat as a new call (a new step, a new
	// idempotency key), as a turn did before the rule: for agents whose
	// tools are meant to be called several times over with the same
	// arguments in one request.
	RepeatAllow
)

func (p RepeatPolicy) String() string {
	switch p {
	case RepeatRefuse:
		return "refuse"
	case RepeatAllow:
		return "allow"
	}
	return fmt.Sprintf("RepeatPolicy(%d)", int(p))
}

// RepeatAction is what the runtime did with a repeated call, in
// [EventRepeatedCall] and the action label of
// toolgate_runtime_repeated_calls_total.
type RepeatAction string

const (
	// RepeatRefused: not executed; the earlier result went back to the model.
	RepeatRefused RepeatAction = "refused"
	// RepeatSameKey: re-sent at the step of an earlier attempt whose
	// outcome is unknown, or whose approval a human denied, under its
	// idempotency key.
	RepeatSameKey RepeatAction = "same_key"
	// RepeatReadOnly: executed again, since the tool is read-only (what it
	// reads may have changed since).
	RepeatReadOnly RepeatAction = "read_only"
	// RepeatAllowed: executed again, since [Options.Repeats] is [RepeatAllow].
	RepeatAllowed RepeatAction = "allowed"
)

// RepeatedCallError is the outcome of a call the runtime did not execute
// because the same call (tool and canonical arguments) already succeeded
// at Step of the same turn ([RepeatRefuse]). The model reads it as its tool
// result, with Result.
type RepeatedCallError struct {
	// Tool is the tool's ID.
	Tool string
	// Step is the step of the turn whose call succeeded.
	Step int
	// Result is that call's result, shown to the model again.
	Result json.RawMessage
}

func (e *RepeatedCallError) Error() string {
	return fmt.Sprintf("runtime: %s was not executed again: the same call already succeeded at step %d of this turn", e.Tool, e.Step)
}

// RepeatedCallType is the error_type of the tool result a model reads for
// a refused repeat.
const RepeatedCallType = "REPEATED_CALL"

// content is what the model reads for a refused repeat: an error result
// that says the call already succeeded, with that call's result, so the
// model can answer instead of calling again.
func (e *RepeatedCallError) content() string {
	body, err := json.Marshal(struct {
		Success   bool            `json:"success"`
		ErrorType string          `json:"error_type"`
		Message   string          `json:"message"`
		Retryable bool            `json:"retryable"`
		Result    json.RawMessage `json:"result"`
	}{false, RepeatedCallType, fmt.Sprintf("Not executed again: this exact call already succeeded at step %d of this turn, "+
		"and its result is in \"result\". Do not repeat it; answer the user with that result. "+
		"If the user wants it done once more, they must ask again in a new message.", e.Step), false, e.Result})
	if err != nil {
		// Result is a recorded tool result, so it is JSON; were it not,
		// the model still learns the call succeeded.
		return errorResult(RepeatedCallType, e.Error(), false)
	}
	return string(body)
}

// callOnce runs the model's call of tool id at step under the turn's
// repeat rule ([Options.Repeats]): an earlier identical call of the turn
// decides whether this one executes, at which step, or is refused.
func (s *Session) callOnce(ctx context.Context, step int, view *tools.View, turn *Turn, id string, args json.RawMessage) CallRecord {
	a := s.agent
	done, unsure := earlierCalls(turn.Calls, id, args)
	if done == nil && unsure == nil {
		return s.call(ctx, step, id, args)
	}
	readOnly := false
	if t, ok := view.Get(id); ok {
		readOnly = t.Card.ReadOnly
	}
	ev := Event{Kind: EventRepeatedCall, Step: step, Tool: id, Arguments: args}
	switch {
	case done != nil && readOnly:
		ev.Repeat, ev.RepeatOf = RepeatReadOnly, done.Step
	case done != nil && a.opts.Repeats == RepeatAllow:
		ev.Repeat, ev.RepeatOf = RepeatAllowed, done.Step
	case done != nil:
		rerr := &RepeatedCallError{Tool: id, Step: done.Step, Result: done.Result}
		ev.Repeat, ev.RepeatOf, ev.Result, ev.Err = RepeatRefused, done.Step, done.Result, rerr
		a.repeated(ctx, s, ev)
		return CallRecord{Step: step, Tool: id, Arguments: args, Err: rerr}
	case readOnly || a.opts.Repeats == RepeatAllow:
		return s.call(ctx, step, id, args)
	default:
		ev.Repeat, ev.RepeatOf = RepeatSameKey, unsure.Step
		a.repeated(ctx, s, ev)
		return s.call(ctx, unsure.Step, id, args)
	}
	a.repeated(ctx, s, ev)
	return s.call(ctx, step, id, args)
}

// repeated reports a repeat: the event, the counter and a log line.
func (a *Agent) repeated(ctx context.Context, s *Session, ev Event) {
	a.metrics.repeats.WithLabelValues(ev.Tool, string(ev.Repeat)).Inc()
	a.log.InfoContext(ctx, "runtime: repeated call", "session", s.id, "step", ev.Step, "tool", ev.Tool,
		"action", string(ev.Repeat), "earlier_step", ev.RepeatOf)
	a.observe(ctx, ev)
}

// earlierCalls finds the calls of this turn that made the same call as
// (id, args): done, the latest that succeeded, and unsure, the latest whose
// outcome is unknown (it may have run: see mayHaveRun) or whose approval
// a human denied (the gateway refuses it at its step). Arguments compare
// in canonical form; arguments that are not JSON match nothing (the
// gateway refuses them).
func earlierCalls(calls []CallRecord, id string, args json.RawMessage) (done, unsure *CallRecord) {
	canon, err := jcs.Canonicalize(args)
	if err != nil {
		return nil, nil
	}
	for i := range calls {
		c := &calls[i]
		if c.Tool != id {
			continue
		}
		if cc, err := jcs.Canonicalize(c.Arguments); err != nil || !bytes.Equal(cc, canon) {
			continue
		}
		switch {
		case c.Err == nil:
			done = c
		case mayHaveRun(c.Err), deniedApproval(c.Err):
			unsure = c
		}
	}
	return done, unsure
}

// deniedApproval says whether a call ended in err because an approver
// denied its approval: the gateway refuses it again at the same step.
func deniedApproval(err error) bool {
	var ge *gateway.Error
	return errors.As(err, &ge) && ge.Type == gateway.PermissionDenied && ge.ApprovalID != ""
}

// mayHaveRun says whether a call that ended in err may have taken effect
// or may still be running: its outcome is unknown to the gateway, so a
// retry must reuse its idempotency key. A refusal on the merits
// (DOMAIN_ERROR), a validation error, a denial or a declined approval
// settles the call: repeating it is an ordinary retry.
func mayHaveRun(err error) bool {
	var ge *gateway.Error
	if !errors.As(err, &ge) {
		return false
	}
	switch ge.Type {
	case gateway.DownstreamFailure, gateway.UncertainOutcome, gateway.InProgress, gateway.Internal:
		return true
	}
	return false
}
