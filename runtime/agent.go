package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/internal/tracing"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/findtools"
)

// Strategy chooses which authorized tools a step shows the model.
type Strategy int

const (
	// StrategyAuto (the zero value) picks by the number of authorized tools
	// and their definitions' size: InjectAll up to AllLimit tools, ByGroup
	// up to GroupLimit, Progressive above, or whenever the definitions would
	// exceed MaxToolShare of ContextTokens.
	StrategyAuto Strategy = iota
	// StrategyInjectAll shows every authorized tool.
	StrategyInjectAll
	// StrategyByGroup shows the workflow groups of the best candidates.
	StrategyByGroup
	// StrategyProgressive shows the top-K shortlist plus find_tools.
	StrategyProgressive
)

func (s Strategy) String() string {
	switch s {
	case StrategyAuto:
		return "auto"
	case StrategyInjectAll:
		return "inject-all"
	case StrategyByGroup:
		return "by-group"
	case StrategyProgressive:
		return "progressive"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// FindToolsName is the model-facing name of the native find_tools tool and
// the envelope's find_tools action (see package findtools).
const FindToolsName = findtools.Name

// Options configures an [Agent]. A nil *Options means all defaults; each
// field's zero value is documented. The fields come in blocks by concern,
// as etcd raft's Config does; [New] checks them all in one place
// (withDefaults) and wraps [ErrOptions] naming the field.
type Options struct {
	// The model and its constraint.

	// Mode is how the backend is constrained. The zero value is
	// [llm.ModeEnvelope] (structured output with the envelope schema).
	Mode llm.Mode
	// StrictSchemas says the backend enforces OpenAI's strict schemas (the
	// OpenAI API and servers that follow it). In envelope mode each tool's
	// schema then goes through [grammar.OpenAIStrict] before it enters the
	// envelope schema, so response_format is in strict form throughout. In
	// every mode, the nulls the strict form makes a model write for omitted
	// optional properties are dropped before validation (native mode always
	// does this, since its tools are sent in strict form). False: schemas
	// are sent as the tools declare them.
	StrictSchemas bool
	// CallFirst makes the first step of every turn a call: the model must
	// call a shortlisted tool (or search with find_tools, where the step
	// offers it) before it may answer, so that it cannot answer from its
	// own knowledge what a tool should answer (OpenAI's tool_choice
	// "required" for that step). The step's envelope then has no answer
	// branch ([llm.Request.RequireCall]; the prompt stays the same, for the
	// prompt cache); in ModeNative the backend sends the API's required
	// tool choice. A reply
	// that answers anyway is repaired like any unusable reply. Later steps
	// may answer.
	CallFirst bool
	// Bounds are the size limits a turn's envelope constraint sets where
	// the tools' schemas set none: the answer's text, the find_tools query,
	// free strings and arrays of a call's arguments ([llm.Bounds]). A zero
	// field means llm's default for it ([llm.DefaultBounds]); each request's
	// token budget is sized from them ([llm.TokenBudget]), so raising the
	// answer bound past what the backend's MaxTokens holds lets a long
	// answer be cut off and repaired instead of closed by the constraint.
	Bounds llm.Bounds
	// Repairs is the number of repair attempts for a reply that cannot be
	// acted on (see [llm.Checked]). Zero means 2; negative means none.
	Repairs int
	// LLM configures the [llm.Checked] wrapper around the backend (its
	// MaxRepairs and Validate are set by the runtime). Nil means defaults.
	LLM *llm.Options
	// Instructions are prepended to the system prompt.
	Instructions string

	// The tools each step shows.

	// Strategy chooses the tools shown per step. Zero means [StrategyAuto].
	Strategy Strategy
	// K is the shortlist size of the progressive strategy. Zero means 5.
	K int
	// AllLimit and [Options.GroupLimit] are [StrategyAuto]'s thresholds. Zero means 10 and 30.
	AllLimit, GroupLimit int
	// MaxLoaded bounds the tools found through find_tools that stay in the
	// shortlist. Zero means 8.
	MaxLoaded int
	// MaxShown bounds the tools a session shows at once. Tools shown once
	// stay shown, in the order first shown, and new ones are appended, so
	// the prompt's prefix stays cacheable; past MaxShown tools, or past
	// [Options.MaxToolShare] of [Options.ContextTokens] in their definitions' tokens, the list
	// starts again from the step's own tools. Zero means [Options.K] + [Options.MaxLoaded] + 3.
	MaxShown int
	// Filter narrows what the agent may show and call to the authorized
	// tools it accepts (a worker's tool group). Nil keeps every authorized tool.
	Filter func(*tools.Tool) bool
	// Deferred turns on hosted deferred loading (native mode only): every
	// authorized tool is sent in every request for the backend's deferred
	// loading ([llm.Request.Deferred]: Anthropic's defer_loading, OpenAI
	// Responses' tool_search), in the view's order, with find_tools as the
	// one tool loaded up front, marked as the search tool. The model's
	// searches are answered by discovery with references to the tools
	// found ([llm.Message.ToolReferences]), and each step's own shortlist is
	// delivered the same way, as a search the runtime answers before the
	// request, so the tools and the system prompt — the prompt cache's
	// prefix — never change within a session. Unauthorized tools are never
	// sent. Each deferred tool carries its namespace ([llm.ToolSpec.Namespace]),
	// which the Responses API groups by. Backends without deferred loading
	// ignore Deferred; use it with llm/anthropic or openai.ResponsesBackend.
	// When the backend refuses deferred loading (a model or API version
	// without tool search: an [*llm.ConstraintError] with Deferred set), the
	// session logs a warning, reports [EventDeferredOff], and sends the step
	// again, and every later one, with its shortlist as plain native tools.
	Deferred bool

	// The context window.

	// ContextTokens is the model's context size, and [Options.MaxToolShare] the
	// share of it tool definitions may take before [StrategyAuto] goes
	// progressive, and the tools a session keeps shown ([Options.MaxShown]) may
	// take. Zero means 32,768 and 0.25.
	ContextTokens int
	MaxToolShare  float64
	// FitContext makes every request fit [Options.ContextTokens]: its prompt (the
	// system prompt, the tool definitions and the conversation, as
	// [Options.CountTokens] estimates them) plus room for the reply (its token
	// budget, at most an eighth of ContextTokens). When a request would
	// not fit, the oldest whole turns of the conversation are left out of
	// it ([Session.History] keeps them; [EventTrimmed] reports it), and when
	// the current turn alone does not fit, Run returns an error wrapping
	// [ErrContextOverflow] without calling the model: an engine would refuse
	// the request (llama-server's "exceeds the available context size") or
	// drop messages itself (Ollama), without regard for which call a tool
	// result answers. Off by default, since ContextTokens' default is a
	// guess, not the model's size: set ContextTokens to the window the
	// model is served with (llama-server's -c, Ollama's num_ctx) with it.
	FitContext bool
	// CountTokens estimates a text's tokens for [Options.FitContext]. Nil means
	// OpenAI's o200k encoding, which counts fewer tokens than the
	// tokenizers of smaller vocabularies (Llama 2's 32,000 words count
	// 8–32% more: docs/benchmarks.md, "Fitting the context"): give the
	// model's own count, or leave that margin in [Options.ContextTokens].
	CountTokens func(text string) int

	// The turn and its calls.

	// MaxSteps bounds the model calls of one Run. Zero means 8.
	MaxSteps int
	// CallRetries bounds the re-sends of one step's call to the gateway on
	// a retryable refusal (IN_PROGRESS, a downstream failure). Zero means 3.
	// A refusal whose retry-after is longer than 30 seconds (a rate limit's)
	// is not waited out: it goes back to the model as the call's result.
	CallRetries int
	// Repeats says what a turn does when the model calls a tool again with
	// the same arguments after that call succeeded earlier in the turn (a
	// model in a loop). The zero value, [RepeatRefuse], executes such a
	// repeat only for a read-only tool; otherwise the model gets the
	// earlier result back, marked as already done ([EventRepeatedCall],
	// toolgate_runtime_repeated_calls_total). The rule is per turn: the
	// same request in a later turn executes again.
	Repeats RepeatPolicy
	// Approver confirms calls the gateway holds for approval. Nil means no
	// call needing approval is ever confirmed: the model is told that no
	// approver is configured.
	Approver Approver
	// NoTaint turns the untrusted-output policy off. By default, once a
	// tool whose card says OpenWorld has returned output in a session, the
	// session is tainted: every later call of a tool that is not read-only
	// needs a human approval, and the taint (which tool, which step) is
	// shown in the approval and the audit.
	NoTaint bool
	// Sleep waits between call retries; nil means a timer honouring ctx.
	Sleep func(ctx context.Context, d time.Duration) error

	// Observability.

	// Observer, if set, receives an [Event] at each stage of a step (for
	// demos, tracing and tests). It runs on the session's goroutine, and
	// ctx is the context of the step the event belongs to: it carries the
	// turn's "invoke_agent" span (see [Options.TracerProvider]) and the
	// values of the ctx given to [Session.Run], so that an observer can
	// log or trace with them. Nil means no observer.
	Observer func(ctx context.Context, e Event)
	// Logger receives misses and decisions. Nil means slog.Default().
	Logger *slog.Logger
	// Registerer receives the runtime metrics. Nil registers none.
	Registerer prometheus.Registerer
	// TracerProvider receives the runtime's spans: "invoke_agent" per
	// turn, "toolgate.discover" per search and "chat" per model request,
	// following the GenAI semantic conventions (see runtime/trace.go), with
	// the gateway's "execute_tool" spans below them when the gateway has
	// the same provider. Nil means no spans.
	TracerProvider trace.TracerProvider
	// TraceContent adds the user's request and the model's messages and
	// replies to the spans (gen_ai.input.messages, gen_ai.output.messages,
	// the discovery query). Off by default: they may hold personal data.
	TraceContent bool
}

// backendName is the backend's Name() when it has one (every adapter in
// llm does), for the chat spans' gen_ai.provider.name.
func backendName(b llm.Backend) string {
	if n, ok := b.(interface{ Name() string }); ok {
		return n.Name()
	}
	return "llm"
}

// ErrContextOverflow is wrapped by Run's error when [Options.FitContext] is
// on and the current turn (its input, the steps so far and their tool
// results), with the system prompt, the tool definitions and the reply's
// budget, does not fit [Options.ContextTokens].
var ErrContextOverflow = errors.New("runtime: the request does not fit the model's context")

// ErrOptions is wrapped by New for an invalid argument or option.
var ErrOptions = errors.New("runtime: invalid options")

// Agent is the configured loop: a registry, a discoverer, a gateway and a
// backend. It is safe for concurrent use; each conversation is a [Session].
type Agent struct {
	reg     *tools.Registry
	disc    *discovery.Discoverer
	gw      *gateway.Gateway
	opts    Options
	log     *slog.Logger
	metrics *metrics
	raw     llm.Backend // the backend as given; sessions wrap it with [llm.Checked]
	llmOpts llm.Options
	// grammars keeps the compiled constraints of repeated shortlists.
	grammars *grammar.Cache
	tracer   trace.Tracer
	provider string    // the backend's name, for the chat spans
	heads    headCache // Options.FitContext's counts of system prompts with tools
}

// withDefaults checks the options and fills in the defaults of the zero
// fields: the one place they are validated. A nil o means all defaults.
func (opts *Options) withDefaults() (Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"K", o.K}, {"AllLimit", o.AllLimit}, {"GroupLimit", o.GroupLimit}, {"MaxSteps", o.MaxSteps}, {"MaxLoaded", o.MaxLoaded},
		{"MaxShown", o.MaxShown}, {"CallRetries", o.CallRetries}, {"ContextTokens", o.ContextTokens}} {
		if f.v < 0 {
			return o, fmt.Errorf("%w: %s must not be negative (%d)", ErrOptions, f.name, f.v)
		}
	}
	switch {
	case o.Bounds.Answer < 0, o.Bounds.Query < 0, o.Bounds.String < 0, o.Bounds.Items < 0:
		return o, fmt.Errorf("%w: Bounds %+v must not be negative", ErrOptions, o.Bounds)
	case o.MaxToolShare < 0 || o.MaxToolShare > 1:
		return o, fmt.Errorf("%w: MaxToolShare %v is outside [0,1]", ErrOptions, o.MaxToolShare)
	case o.Strategy < StrategyAuto || o.Strategy > StrategyProgressive:
		return o, fmt.Errorf("%w: unknown Strategy %d", ErrOptions, o.Strategy)
	case o.Mode < llm.ModeEnvelope || o.Mode > llm.ModeNative:
		return o, fmt.Errorf("%w: unknown Mode %d", ErrOptions, o.Mode)
	case o.Repeats < RepeatRefuse || o.Repeats > RepeatAllow:
		return o, fmt.Errorf("%w: unknown Repeats %d", ErrOptions, o.Repeats)
	case o.Deferred && o.Mode != llm.ModeNative:
		return o, fmt.Errorf("%w: Deferred needs Mode llm.ModeNative, not %s", ErrOptions, o.Mode)
	}
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&o.K, 5)
	def(&o.AllLimit, 10)
	def(&o.GroupLimit, 30)
	def(&o.ContextTokens, 32768)
	def(&o.MaxSteps, 8)
	def(&o.MaxLoaded, 8)
	def(&o.MaxShown, o.K+o.MaxLoaded+3)
	def(&o.Repairs, 2)
	if o.Repairs < 0 {
		o.Repairs = 0
	}
	def(&o.CallRetries, 3)
	bd := llm.DefaultBounds()
	def(&o.Bounds.Answer, bd.Answer)
	def(&o.Bounds.Query, bd.Query)
	def(&o.Bounds.String, bd.String)
	def(&o.Bounds.Items, bd.Items)
	if o.MaxToolShare == 0 {
		o.MaxToolShare = 0.25
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Sleep == nil {
		o.Sleep = clock.Sleep
	}
	return o, nil
}

// New returns an [Agent]. The registry is the catalog; disc ranks it; gw
// executes calls (it must have been built over the same registry); backend
// is the model, which New wraps with [llm.Checked] for repair, retries and
// validation against the gateway's rules.
func New(reg *tools.Registry, disc *discovery.Discoverer, gw *gateway.Gateway, backend llm.Backend, opts *Options) (*Agent, error) {
	if reg == nil || disc == nil || gw == nil || backend == nil {
		return nil, fmt.Errorf("%w: registry, discoverer, gateway and backend are all required", ErrOptions)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, err
	}
	a := &Agent{reg: reg, disc: disc, gw: gw, raw: backend, opts: o, log: o.Logger, metrics: m, grammars: grammar.NewCache(0),
		tracer: tracing.Tracer(o.TracerProvider), provider: backendName(backend)}
	if o.LLM != nil {
		a.llmOpts = *o.LLM
	}
	a.llmOpts.MaxRepairs = o.Repairs
	if o.Repairs == 0 {
		a.llmOpts.MaxRepairs = -1
	}
	if a.llmOpts.Logger == nil {
		a.llmOpts.Logger = o.Logger
	}
	// Check the options once; each session wraps the backend with its own
	// Validate hook (it needs the session's principal).
	probe := a.llmOpts
	probe.Validate = func(context.Context, string, json.RawMessage) error { return nil }
	if _, err := llm.Checked(backend, &probe); err != nil {
		return nil, fmt.Errorf("%w: LLM: %v", ErrOptions, err)
	}
	return a, nil
}

// NewSession starts a conversation for principal p. id names the session
// in the gateway's idempotency slots; a session re-created with the same id
// and its step counter ([SessionOptions.Step]) replays rather than
// re-executes the calls it had made.
func (a *Agent) NewSession(p tools.Principal, id string, opts *SessionOptions) *Session {
	s := &Session{agent: a, principal: p, id: id, bound: tools.NewSessionNames(p.Tenant, FindToolsName)}
	co := a.llmOpts
	co.Validate = s.validate
	s.backend, _ = llm.Checked(a.raw, &co) // the options were checked by New
	if opts != nil {
		s.actor, s.taint = opts.Actor, opts.Taint
		s.step = opts.Step
		for _, name := range slices.Sorted(maps.Keys(opts.Names)) {
			if err := s.bound.Bind(name, opts.Names[name]); err != nil {
				// A store that lost its consistency: the name is read
				// against the catalog again, as for a new session.
				a.log.Warn("runtime: a restored model name was not bound", "session", id, "name", name, "err", err)
			}
		}
		s.messages = append(s.messages, opts.History...)
		for i, m := range s.messages {
			if isTurnStart(m) {
				s.turns = append(s.turns, i)
			}
		}
	}
	return s
}

// SessionOptions restores a session's state. Nil means a new conversation.
type SessionOptions struct {
	// Actor names the agent acting for the principal (a worker); it is
	// audited by the gateway beside the principal.
	Actor string
	// Taint starts the session tainted (a worker delegated to by a tainted
	// supervisor). Empty means clean.
	Taint string
	// Step is the number of the last step taken; the next step is Step+1.
	Step int
	// History is the conversation so far, without the system prompt.
	History []llm.Message
	// Names are the model-facing names the session had shown, each with
	// its tool ID ([Session.Names]): bound again, so that every name in
	// [SessionOptions.History] keeps naming its tool whatever the catalog has become. Nil
	// means none: the names are decided afresh, as in a new session.
	Names map[string]string
}

// view is the principal's authorized view, narrowed by [Options.Filter].
func (a *Agent) view(p tools.Principal) *tools.View {
	v := a.reg.Snapshot().Authorize(p)
	if a.opts.Filter != nil {
		v = v.Filter(a.opts.Filter)
	}
	return v
}
