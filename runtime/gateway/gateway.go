package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/internal/tracing"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// Call is one tool call as a model or a raw client sent it, with the
// principal the transport authenticated.
type Call struct {
	// Principal is who calls; an empty ID or Tenant, or one that is not
	// valid UTF-8 or holds a control character (NUL, a tab), is
	// UNAUTHENTICATED.
	Principal tools.Principal
	// SessionID names the conversation; it must not be empty, and must be
	// valid UTF-8 without control characters, of at most 256 bytes (else
	// VALIDATION_ERROR). Sessions are
	// namespaced by tenant: two tenants' equal session IDs never meet.
	SessionID string
	// Step numbers the model's step within the session (0 or more). One
	// step calls a tool at most once with effect (docs/design.md invariant 4).
	Step int
	// Tool is the tool's ID ("namespace/name"). A client's bare name is
	// mapped to an ID by Resolve first (the HTTP handler does).
	Tool string
	// Actor names the agent acting for [Call.Principal] (a worker of a
	// router–worker setup); empty means the principal itself. It is
	// audited beside the principal; authorization is always the
	// principal's (a worker narrows it before calling). The audit keeps
	// at most 256 bytes of it, and U+FFFD for NUL and bytes that are not
	// UTF-8.
	Actor string
	// Taint, when not empty, says the conversation has read untrusted tool
	// output (which tool, which step). A tool that is not Card.ReadOnly then
	// needs a human approval whatever NeedsApproval says, and the taint is
	// shown in the approval and the audit (at most 512 bytes of it, U+FFFD
	// for NUL and bytes that are not UTF-8).
	Taint string
	// Arguments is the JSON object of arguments, as the client sent it;
	// empty means {}. It is parsed strictly (duplicate members, invalid
	// UTF-8 and lone surrogates are refused) and validated on its own text
	// (numbers as exact decimals: "multipleOf": 0.01 refuses
	// 1.0000000000000000001). The handler receives the RFC 8785 canonical
	// form, where numbers are IEEE doubles, so a number that form would
	// change is refused: more significant digits than a double keeps, or an
	// integer beyond ±2^53 in any notation (send large identifiers as
	// strings). Pass the bytes received, not a re-encoding of them.
	Arguments json.RawMessage
}

// Result is the outcome of a call that executed (now or earlier).
type Result struct {
	// Value is the handler's JSON result. The caller owns it.
	Value json.RawMessage
	// Cached reports that [Result.Value] is a replay of a recorded outcome; the
	// handler did not run for this call.
	Cached bool
	// IdempotencyKey is the key the handler ran (or had run) with.
	IdempotencyKey string
	// Attempts is how many executions the slot has had (above 1 after an
	// uncertain outcome was re-run with the same key).
	Attempts int
	// PreviousUncertain reports that an earlier attempt of this call had an
	// unknown outcome (its handler timed out, failed without
	// [tools.NoEffect], or its gateway vanished) and the handler ran again
	// with the same idempotency key ([UncertainRerun]): the downstream's
	// deduplication by that key is what kept it to one effect.
	PreviousUncertain bool
}

// Validator checks a tool's arguments beyond its JSON Schema: decoding
// into the tool's Go struct and the tool's domain rules. args is the RFC
// 8785 canonical form of arguments that passed the schema. It returns nil,
// an *Error of type VALIDATION_ERROR (see Invalid), or another error, which
// becomes a VALIDATION_ERROR with its text. It must be a pure function of
// its inputs and safe for concurrent use; it runs before the slot is
// claimed, so it must have no side effects.
type Validator func(ctx context.Context, call Call, args json.RawMessage) error

// Typed returns a Validator that decodes the arguments into T (unknown
// fields are an error) and then applies check, which may be nil.
func Typed[T any](check func(ctx context.Context, call Call, v T) error) Validator {
	return func(ctx context.Context, call Call, args json.RawMessage) error {
		var v T
		if err := decodeStrict(args, &v); err != nil {
			return Invalid(Violation{Pointer: "", Message: "cannot decode arguments: " + err.Error()})
		}
		if check == nil {
			return nil
		}
		return check(ctx, call, v)
	}
}

// UncertainPolicy says what a retry of a call with an uncertain outcome gets.
type UncertainPolicy int

const (
	// UncertainRerun re-runs the handler with the same idempotency key; the
	// downstream must deduplicate by it ([tools.IdempotencyKey]). Default.
	UncertainRerun UncertainPolicy = iota
	// UncertainReconcile refuses with OUTCOME_UNCERTAIN until the record
	// expires or an operator reconciles it: for tools whose downstream
	// cannot deduplicate.
	UncertainReconcile
)

// ApprovalScope is the scope a principal needs to grant approvals.
const ApprovalScope = "approvals:grant"

// Options configures a Gateway. A nil *Options means all defaults; each
// field's zero value is documented. The fields come in blocks by concern,
// as etcd raft's Config does; New checks them all in one place and names
// the field of an invalid value (wrapping [ErrInvalidOptions]).
type Options struct {
	// Observability: time, logs, metrics and traces.

	// Clock tells time. Nil means the wall clock.
	Clock Clock
	// Logger receives the authorization decisions and failures. Nil means
	// slog.Default().
	Logger *slog.Logger
	// Registerer receives the gateway's metrics. Nil registers none.
	Registerer prometheus.Registerer
	// TracerProvider receives an "execute_tool" span for every call (GenAI
	// semantic conventions: the tool's name, the outcome, cached, attempts).
	// Nil means no spans.
	TracerProvider trace.TracerProvider
	// TraceContent adds the call's arguments and the result to the spans
	// (gen_ai.tool.call.arguments, gen_ai.tool.call.result). Off by
	// default: they may hold personal data.
	TraceContent bool

	// Time limits and retention.

	// DefaultTimeout bounds a handler whose tool has no Timeout. Zero means 30s.
	DefaultTimeout time.Duration
	// LeaseGrace is added to the handler's timeout to form the claim's
	// lease, counted from admission. A handler starts only while its
	// whole timeout and half the grace are left of the lease; when the
	// store was slower than that to grant the claim, the claim is given
	// back and the caller told to retry (nothing ran), since an outcome
	// recorded after the lease is fenced. Zero means 5s.
	LeaseGrace time.Duration
	// Retention keeps recorded outcomes (done and uncertain). Zero means 24h.
	Retention time.Duration
	// ApprovalTTL bounds how long an approval may be granted and used.
	// Zero means 1h.
	ApprovalTTL time.Duration
	// InProgressRetryAfter caps the retry-after hint of IN_PROGRESS (the
	// hint is the lease's remaining time, at most this). Zero means 1s.
	InProgressRetryAfter time.Duration

	// Admission: rate limits, validation and approvals.

	// RateLimit is the per principal×tool token bucket for every tool.
	// The zero value means no limit.
	RateLimit store.RateLimit
	// RateLimits overrides [Options.RateLimit] per tool ID.
	RateLimits map[string]store.RateLimit
	// Validators adds typed decoding and domain checks per tool ID.
	Validators map[string]Validator
	// AllowUndeclared keeps a schema's object open when it declares
	// properties but says nothing about others. False (the default) closes
	// such objects (additionalProperties: false), as the grammar does.
	AllowUndeclared bool
	// MaxArgumentBytes bounds the arguments' size. Zero means 256 KiB.
	MaxArgumentBytes int
	// ValidationTimeout bounds the JSON Schema validation of one call, all
	// its pattern matches together (wall-clock time: it bounds CPU, so it
	// does not follow [Options.Clock]). A call whose validation runs past it is
	// refused as VALIDATION_ERROR, not retryable, and nothing runs. Zero
	// means 500ms.
	ValidationTimeout time.Duration
	// NeedsApproval decides, per call, whether a tool that is not
	// Card.Irreversible needs an approval (a transfer above a threshold).
	// args is the canonical validated arguments; ctx is the call's. Nil
	// means only irreversible tools need approvals. A panic counts as
	// "needs an approval".
	NeedsApproval func(ctx context.Context, call Call, args json.RawMessage) bool

	// Uncertain outcomes and the store.

	// Uncertain is the policy for retries of uncertain outcomes. The zero
	// value is [UncertainRerun].
	Uncertain UncertainPolicy
	// UncertainTools overrides [Options.Uncertain] per tool ID: [UncertainReconcile]
	// for a tool whose downstream cannot deduplicate by the key,
	// [UncertainRerun] for one that can under a Reconcile default. Nil
	// overrides nothing.
	UncertainTools map[string]UncertainPolicy
	// MaxHeldOutcomes bounds the outcomes the gateway holds in memory
	// because its store could not record them (see the package
	// documentation), counting the calls whose handler is running, since
	// each may need to be held. At the bound a call that would run its
	// handler is refused before it runs, with a retryable INTERNAL_ERROR; a
	// held outcome is never dropped. Zero means 10,000.
	MaxHeldOutcomes int
	// MaxHeldBytes bounds the memory of the held outcomes likewise: once
	// they reach it, calls that would run are refused. An outcome is held
	// whole, so the last one may pass the bound. Zero means 64 MiB.
	MaxHeldBytes int64
	// Stores takes some concerns from other stores than the one passed to
	// [New]: the audit log elsewhere, rate limits in Redis while claims live
	// in SQLite. The zero value keeps every concern in New's store.
	Stores Stores
}

func (o *Options) withDefaults() (Options, error) {
	var v Options
	if o != nil {
		v = *o
	}
	if v.Clock == nil {
		v.Clock = systemClock{}
	}
	if v.Logger == nil {
		v.Logger = slog.Default()
	}
	for name, d := range map[string]time.Duration{
		"DefaultTimeout": v.DefaultTimeout, "LeaseGrace": v.LeaseGrace, "Retention": v.Retention,
		"ApprovalTTL": v.ApprovalTTL, "InProgressRetryAfter": v.InProgressRetryAfter,
		"ValidationTimeout": v.ValidationTimeout,
	} {
		if d < 0 {
			return v, fmt.Errorf("%w: %s is negative (%v)", ErrInvalidOptions, name, d)
		}
	}
	if v.DefaultTimeout == 0 {
		v.DefaultTimeout = 30 * time.Second
	}
	if v.LeaseGrace == 0 {
		v.LeaseGrace = 5 * time.Second
	}
	if v.Retention == 0 {
		v.Retention = 24 * time.Hour
	}
	if v.ApprovalTTL == 0 {
		v.ApprovalTTL = time.Hour
	}
	if v.InProgressRetryAfter == 0 {
		v.InProgressRetryAfter = time.Second
	}
	if v.ValidationTimeout == 0 {
		v.ValidationTimeout = 500 * time.Millisecond
	}
	if err := checkLimit("RateLimit", v.RateLimit); err != nil {
		return v, err
	}
	for id, l := range v.RateLimits {
		if err := checkLimit("RateLimits["+id+"]", l); err != nil {
			return v, err
		}
	}
	for id, f := range v.Validators {
		if f == nil {
			return v, fmt.Errorf("%w: Validators[%s] is nil", ErrInvalidOptions, id)
		}
	}
	if v.Uncertain != UncertainRerun && v.Uncertain != UncertainReconcile {
		return v, fmt.Errorf("%w: Uncertain policy %d is unknown", ErrInvalidOptions, v.Uncertain)
	}
	for id, p := range v.UncertainTools {
		if p != UncertainRerun && p != UncertainReconcile {
			return v, fmt.Errorf("%w: UncertainTools[%s] policy %d is unknown", ErrInvalidOptions, id, p)
		}
	}
	if v.MaxHeldOutcomes < 0 || v.MaxHeldBytes < 0 {
		return v, fmt.Errorf("%w: MaxHeldOutcomes (%d) or MaxHeldBytes (%d) is negative", ErrInvalidOptions, v.MaxHeldOutcomes, v.MaxHeldBytes)
	}
	if v.MaxHeldOutcomes == 0 {
		v.MaxHeldOutcomes = 10000
	}
	if v.MaxHeldBytes == 0 {
		v.MaxHeldBytes = 64 << 20
	}
	if v.MaxArgumentBytes < 0 {
		return v, fmt.Errorf("%w: MaxArgumentBytes is negative", ErrInvalidOptions)
	}
	if v.MaxArgumentBytes == 0 {
		v.MaxArgumentBytes = 256 << 10
	}
	return v, nil
}

// UncertainFor returns the uncertain-outcome policy of the tool with ID
// id: its UncertainTools entry, else Uncertain.
func (o *Options) UncertainFor(id string) UncertainPolicy {
	if p, ok := o.UncertainTools[id]; ok {
		return p
	}
	return o.Uncertain
}

// String returns the policy's flag name: "rerun" or "reconcile".
func (p UncertainPolicy) String() string {
	switch p {
	case UncertainRerun:
		return "rerun"
	case UncertainReconcile:
		return "reconcile"
	}
	return fmt.Sprintf("UncertainPolicy(%d)", int(p))
}

// UnmarshalText parses a policy's flag name, "rerun" or "reconcile", so
// that a policy can be read from a flag or a configuration file.
func (p *UncertainPolicy) UnmarshalText(text []byte) error {
	switch string(text) {
	case "rerun":
		*p = UncertainRerun
	case "reconcile":
		*p = UncertainReconcile
	default:
		return fmt.Errorf("%w: uncertain policy %q: want rerun or reconcile", ErrInvalidOptions, text)
	}
	return nil
}

// MarshalText returns the policy's flag name (see [UncertainPolicy.String]).
func (p UncertainPolicy) MarshalText() ([]byte, error) {
	if p != UncertainRerun && p != UncertainReconcile {
		return nil, fmt.Errorf("%w: uncertain policy %d is unknown", ErrInvalidOptions, int(p))
	}
	return []byte(p.String()), nil
}

func checkLimit(name string, l store.RateLimit) error {
	if l.Rate < 0 || l.Burst < 0 {
		return fmt.Errorf("%w: %s has a negative rate or burst", ErrInvalidOptions, name)
	}
	return nil
}

// Gateway executes tool calls exactly once: it authorizes every call
// against the registry's current snapshot, validates the arguments,
// derives the idempotency key, claims the call's slot in the store, asks
// for approval when needed, runs the handler with a deadline and records
// the outcome (see the package documentation for the recording table).
//
// A Gateway is safe for concurrent use. Several gateways may share a [store.Store].
type Gateway struct {
	reg     *tools.Registry
	store   store.Store
	opts    Options
	clock   Clock
	log     *slog.Logger
	schemas schemaCache
	byTool  sync.Map // [*tools.Tool] -> *compiledSchema
	byToolN atomic.Int64
	metrics *metrics
	tracer  trace.Tracer
	held    *holder
	// owner and claims name each claim the gateway sends
	// ([store.ClaimRequest.Owner]): a random prefix drawn in [New], so
	// that no two gateways share one, and a count.
	owner  string
	claims atomic.Uint64
}

// New returns a Gateway over the registry and the store, which keeps every
// concern that opts.Stores does not send elsewhere (store may be nil when
// opts.Stores names all four). It fails, naming the field, when opts are
// invalid, or when it cannot register its metrics.
func New(reg *tools.Registry, store store.Store, opts *Options) (*Gateway, error) {
	if reg == nil {
		return nil, fmt.Errorf("%w: nil registry", ErrInvalidOptions)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if store, err = compose(store, o.Stores); err != nil {
		return nil, err
	}
	h := newHolder(o.MaxHeldOutcomes, o.MaxHeldBytes)
	m, err := newMetrics(o.Registerer, h)
	if err != nil {
		return nil, err
	}
	return &Gateway{reg: reg, store: store, opts: o, clock: o.Clock, log: o.Logger, metrics: m,
		tracer: tracing.Tracer(o.TracerProvider), held: h, owner: rand.Text() + "-"}, nil
}

// Store returns the gateway's store (for audit queries and purges): the
// store passed to New, or, when [Options.Stores] sends concerns elsewhere, a
// Store that sends each concern where the gateway keeps it.
func (g *Gateway) Store() store.Store { return g.store }

// Purge removes the records, approvals and buckets whose retention has
// passed, and audit entries older than auditRetention (zero keeps them).
func (g *Gateway) Purge(ctx context.Context, auditRetention time.Duration) (store.PurgeStats, error) {
	now := g.clock.Now()
	r := store.PurgeRequest{Now: now}
	if auditRetention > 0 {
		r.AuditBefore = now.Add(-auditRetention)
	}
	return g.store.Purge(ctx, r)
}
