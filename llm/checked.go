package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/clock"
)

// Options configures [Checked]. A nil *Options means all defaults.
type Options struct {
	// Validate checks a call's arguments before Chat returns the call
	// (typically the tool's JSON Schema and domain rules). It is given
	// the context of the Chat call it checks. Its error text goes back to
	// the model, so it must name only the tool it was given. nil means no
	// check beyond the backend's constraint.
	Validate func(ctx context.Context, tool string, args json.RawMessage) error

	// MaxRepairs is how many times a rejected reply is sent back to the
	// model with the reason. 0 means 2; negative means none.
	MaxRepairs int

	// MaxTokens bounds the token budget [Checked] gives a request whose
	// MaxTokens is 0: TokenBudget(req), at most this. 0 means
	// [DefaultMaxTokens]; negative means no budget is set (the backend's
	// default, often the context limit).
	MaxTokens int

	// MaxRetries is how many times a request that failed with HTTP 429 or
	// 5xx is retried. 0 means 3; negative means none.
	MaxRetries int
	// BaseDelay is the first retry's backoff (doubling after, with
	// jitter). 0 means 500ms.
	BaseDelay time.Duration
	// MaxDelay caps the backoff. A Retry-After above it ends the retries
	// (the [*StatusError] carries it for the caller). 0 means 30s.
	MaxDelay time.Duration
	// Sleep waits d or until ctx ends, returning ctx's error then. nil
	// means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0, 1). nil means math/rand/v2.
	Jitter func() float64

	// AllowDowngrade lets [Checked] answer a [*ConstraintError] by resending
	// the request with validated native tools ([ModeNative], BestEffort),
	// logged at warning level and flagged in [Response.Downgraded]. It needs
	// [Options.Validate]. false means a rejected constraint is returned as an error.
	AllowDowngrade bool
	// Logger receives downgrades and repairs. nil means slog.Default().
	Logger *slog.Logger
	// Registerer receives the metrics (toolgate_llm_*). nil means no metrics.
	Registerer prometheus.Registerer
	// Name is the backend label of metrics and logs. "" means the
	// backend's Name() method, if it has one, else "unknown".
	Name string
}

// CheckedBackend is a [Backend] that never returns a call it could not
// verify. Create it with [Checked]; it is safe for concurrent use.
type CheckedBackend struct {
	b       Backend
	opts    Options
	name    string
	metrics *metrics
}

var _ Backend = (*CheckedBackend)(nil)

// Checked wraps b with the failure handling every backend needs:
//
//   - a reply that does not parse, names a tool outside Request.Tools, is
//     truncated, or fails Options.Validate is never returned; the reason
//     goes back to the model as a user message for up to MaxRepairs
//     repairs, then Chat returns a *RepairError holding every attempt;
//   - HTTP 429 and 5xx are retried with exponential backoff and jitter,
//     honouring Retry-After, at most MaxRetries times;
//   - a backend that rejects the constraint is a *ConstraintError, or,
//     with AllowDowngrade, a logged downgrade to validated native tools;
//     a refusal of deferred loading (ConstraintError.Deferred) is always
//     returned: only the caller can resend without Request.Deferred;
//   - a request without MaxTokens gets TokenBudget's, sized to its
//     constraint (Options.MaxTokens bounds it), and a reply cut off there
//     is repaired by asking for a shorter one, under the constraint
//     recompiled with halved bounds when it has a Tighten hook;
//   - token usage and outcomes are counted in the metrics.
//
// The repair exchange is not part of the returned [Response]: the caller's
// conversation continues with [Response.Message]. [Response.Usage] sums every
// attempt.
func Checked(b Backend, opts *Options) (*CheckedBackend, error) {
	if b == nil {
		return nil, errors.New("llm: Checked: nil backend")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.AllowDowngrade && o.Validate == nil {
		return nil, errors.New("llm: Options.AllowDowngrade needs Options.Validate: a downgrade must be validated")
	}
	if o.BaseDelay < 0 || o.MaxDelay < 0 {
		return nil, errors.New("llm: Options.BaseDelay and Options.MaxDelay must not be negative")
	}
	if o.MaxRepairs == 0 {
		o.MaxRepairs = 2
	} else if o.MaxRepairs < 0 {
		o.MaxRepairs = 0
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 3
	} else if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.BaseDelay == 0 {
		o.BaseDelay = 500 * time.Millisecond
	}
	if o.MaxDelay == 0 {
		o.MaxDelay = 30 * time.Second
	}
	if o.Sleep == nil {
		o.Sleep = clock.Sleep
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	name := o.Name
	if name == "" {
		name = "unknown"
		if n, ok := b.(interface{ Name() string }); ok {
			name = n.Name()
		}
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, err
	}
	return &CheckedBackend{b: b, opts: o, name: name, metrics: m}, nil
}

// Name returns the backend label.
func (c *CheckedBackend) Name() string { return c.name }

// Budget is the token budget Chat sends with req: its own MaxTokens, or
// TokenBudget(req) bounded by [Options.MaxTokens], or 0 when none is sent
// ([Options.MaxTokens] negative: the backend's default applies).
func (c *CheckedBackend) Budget(req *Request) int {
	switch {
	case req.MaxTokens > 0:
		return req.MaxTokens
	case c.opts.MaxTokens > 0:
		return min(TokenBudget(req), c.opts.MaxTokens)
	}
	return 0
}

// Chat sends req, repairing, retrying and downgrading as [Checked] says.
// Errors: *[RepairError] (the model never produced a usable reply),
// *[ConstraintError], *[StatusError] (after the retries), ctx's error, or an
// error wrapping [ErrInvalidRequest].
func (c *CheckedBackend) Chat(ctx context.Context, req *Request) (*Response, error) {
	if err := req.Validate(); err != nil {
		c.metrics.outcome(c.name, outcomeBadRequest)
		return nil, err
	}
	cur := req.Clone()
	budgeted := cur.MaxTokens == 0 && c.opts.MaxTokens > 0
	if budgeted {
		cur.MaxTokens = c.Budget(cur)
	}
	var (
		attempts  []Attempt
		total     Usage
		downgrade string
	)
	for {
		resp, err := c.send(ctx, cur)
		if resp != nil {
			c.metrics.usage(c.name, resp.Usage)
			total = addUsage(total, resp.Usage)
		}
		var ce *ConstraintError
		if errors.As(err, &ce) && c.opts.AllowDowngrade && !cur.Constraint.BestEffort && !ce.Deferred {
			downgrade = ce.Error()
			c.opts.Logger.WarnContext(ctx, "llm: backend rejected the constraint; downgrading to validated native tools",
				"backend", c.name, "mode", cur.Constraint.Mode.String(), "reason", ce.Message)
			cur.Constraint = Constraint{Mode: ModeNative, BestEffort: true}
			continue
		}
		var oe *OutputError
		switch {
		case errors.As(err, &oe):
		case err != nil:
			c.metrics.outcome(c.name, errorOutcome(ctx, err))
			return nil, err
		default:
			oe = c.validate(ctx, resp)
		}
		if oe == nil {
			resp.Usage = total
			resp.Downgraded, resp.DowngradeReason = downgrade != "", downgrade
			switch {
			case downgrade != "":
				c.metrics.outcome(c.name, outcomeDowngraded)
			case len(attempts) > 0:
				c.metrics.outcome(c.name, outcomeRepaired)
			default:
				c.metrics.outcome(c.name, outcomeOK)
			}
			return resp, nil
		}
		attempts = append(attempts, Attempt{Raw: oe.Raw, Problem: oe.Problem, Reason: oe.Reason, Err: oe})
		c.metrics.repair(c.name, oe.Problem)
		left := c.opts.MaxRepairs + 1 - len(attempts)
		if oe.Problem == ProblemRefused {
			// Asked again in the same conversation, a model that refused
			// refuses again; the repairs would only cost their tokens.
			left = 0
		}
		if left <= 0 {
			c.metrics.outcome(c.name, outcomeExhausted)
			return nil, &RepairError{Attempts: attempts, Usage: total}
		}
		c.opts.Logger.InfoContext(ctx, "llm: reply rejected; asking the model to repair it",
			"backend", c.name, "problem", string(oe.Problem), "attempts_left", left)
		if oe.Problem == ProblemTruncated {
			c.tighten(ctx, cur, budgeted)
		}
		cur.Messages = append(cur.Messages, RepairMessage(oe, resp, left))
	}
}

// tighten recompiles cur's constraint with halved bounds after a reply was
// cut off at the token budget, and sizes the budget again when [Checked] set
// it, so that the repair's constraint closes a reply sooner. Without a
// Tighten hook, or when it fails (logged), the constraint stays.
func (c *CheckedBackend) tighten(ctx context.Context, cur *Request, budgeted bool) {
	if cur.Constraint.Tighten == nil {
		return
	}
	b := cur.Constraint.Bounds.Tighter()
	if b == cur.Constraint.Bounds {
		return
	}
	nc, err := cur.Constraint.Tighten(b)
	if err != nil {
		c.opts.Logger.WarnContext(ctx, "llm: could not tighten the constraint after a truncated reply; repairing without",
			"backend", c.name, "error", err.Error())
		return
	}
	cur.Constraint = nc
	if budgeted {
		cur.MaxTokens = min(TokenBudget(cur), c.opts.MaxTokens)
	}
}

// validate runs the Validate hook on resp's call.
func (c *CheckedBackend) validate(ctx context.Context, resp *Response) *OutputError {
	if c.opts.Validate == nil || resp.Action != ActionCall {
		return nil
	}
	for _, call := range resp.Calls {
		if err := c.opts.Validate(ctx, call.Name, call.Arguments); err != nil {
			return &OutputError{Problem: ProblemInvalidArguments, Raw: resp.Raw, Err: err,
				Reason: fmt.Sprintf("the arguments of the call to %s are invalid: %v", call.Name, err)}
		}
	}
	return nil
}

// send calls the backend, retrying temporary HTTP failures and silent
// streams (*[IdleError]).
func (c *CheckedBackend) send(ctx context.Context, req *Request) (*Response, error) {
	for retry := 0; ; retry++ {
		resp, err := c.b.Chat(ctx, req)
		var se *StatusError
		temporary := errors.As(err, &se) && se.Temporary() || errors.Is(err, ErrStreamIdle)
		if !temporary || retry >= c.opts.MaxRetries || ctx.Err() != nil {
			return resp, err
		}
		d := c.backoff(retry)
		if se != nil && se.RetryAfter > 0 {
			if se.RetryAfter > c.opts.MaxDelay {
				return resp, err
			}
			d = se.RetryAfter
		}
		c.metrics.retry(c.name)
		if serr := c.opts.Sleep(ctx, d); serr != nil {
			return nil, fmt.Errorf("llm: waiting to retry after %v: %w", err, serr)
		}
	}
}

// backoff is BaseDelay·2^retry, capped at MaxDelay, with equal jitter
// (half fixed, half random) so that clients that failed together do not
// retry together.
func (c *CheckedBackend) backoff(retry int) time.Duration {
	d := c.opts.BaseDelay
	for i := 0; i < retry && d < c.opts.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, c.opts.MaxDelay)
	return d/2 + time.Duration(c.opts.Jitter()*float64(d/2))
}

func errorOutcome(ctx context.Context, err error) string {
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return outcomeCanceled
	case errors.Is(err, ErrConstraintRejected):
		return outcomeConstraint
	case errors.Is(err, ErrInvalidRequest):
		return outcomeBadRequest
	}
	return outcomeError
}

func addUsage(a, b Usage) Usage {
	return Usage{
		PromptTokens:         a.PromptTokens + b.PromptTokens,
		CompletionTokens:     a.CompletionTokens + b.CompletionTokens,
		ToolDefinitionTokens: a.ToolDefinitionTokens + b.ToolDefinitionTokens,
		CatalogTokens:        max(a.CatalogTokens, b.CatalogTokens),
		CachedPromptTokens:   a.CachedPromptTokens + b.CachedPromptTokens,
		CacheWriteTokens:     a.CacheWriteTokens + b.CacheWriteTokens,
	}
}

// RepairMessage is the user message that tells the model why its reply
// was rejected: a JSON object with "error", "problem", "reason",
// "attempts_left" and, for arguments rejected by validation, the "call"
// (its tool is in the shortlist). The rejected output itself is not
// echoed, so a tool name the model made up is never sent back to it.
// maxRepairEchoBytes bounds the arguments a repair message echoes: a call
// whose arguments are larger (a model that wrote a megabyte into a string)
// is not sent back, so that each repair does not cost the model that much
// prompt again; the reason still says what is wrong.
const maxRepairEchoBytes = 4096

func RepairMessage(oe *OutputError, resp *Response, attemptsLeft int) Message {
	body := struct {
		Error        string        `json:"error"`
		Problem      OutputProblem `json:"problem"`
		Reason       string        `json:"reason"`
		AttemptsLeft int           `json:"attempts_left"`
		Call         *repairCall   `json:"call,omitempty"`
	}{"your previous reply could not be used", oe.Problem, oe.Reason, attemptsLeft, nil}
	if oe.Problem == ProblemInvalidArguments && resp != nil && len(resp.Calls) == 1 && len(resp.Calls[0].Arguments) <= maxRepairEchoBytes {
		body.Call = &repairCall{Tool: resp.Calls[0].Name, Arguments: resp.Calls[0].Arguments}
	}
	data, _ := json.Marshal(body)
	return Message{Role: RoleUser, Content: string(data)}
}

type repairCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}
