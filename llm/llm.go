package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
)

// Backend is a chat model behind some API. Chat sends one request and
// returns the model's reply, parsed according to the request's constraint.
//
// Implementations are safe for concurrent use by multiple goroutines. Chat
// does not retain req or anything it points to after it returns; the
// returned [Response] belongs to the caller.
//
// Errors: a reply the model produced but that cannot be acted on (it does
// not parse, names a tool outside req.Tools, is truncated) is an
// *[OutputError], returned together with a non-nil Response whose Calls are
// empty; a server that refuses the constraint is a *[ConstraintError]; an
// HTTP failure is a *[StatusError]. Chat returns ctx.Err() (possibly wrapped)
// when ctx ends. Wrap a Backend with [Checked] to get repair, retries,
// downgrade and metrics.
type Backend interface {
	Chat(ctx context.Context, req *Request) (*Response, error)
}

// Embedder turns texts into vectors, one per text, in order. It matches
// discovery's Embedder interface; the Ollama and OpenAI adapters implement it.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Role is the author of a message.
type Role string

// The message roles every backend understands.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation.
type Message struct {
	Role    Role
	Content string
	// ToolCalls are the native tool calls of an assistant message.
	ToolCalls []ToolCall
	// ToolCallID links a [RoleTool] message to the call it answers.
	ToolCallID string
	// Name is the tool name of a [RoleTool] message (Ollama's tool_name).
	Name string
	// ToolReferences, on a [RoleTool] message, names [Request.Deferred] tools
	// that this result loads (the answer to a tool search). Backends with
	// deferred loading send them as references the API expands (Anthropic's
	// tool_reference blocks); the model may call a deferred tool only once
	// a tool result has referenced it.
	ToolReferences []string
}

// ToolCall is one call of a tool by the model.
type ToolCall struct {
	// ID is the backend's call id (OpenAI), or one the adapter made up
	// when the backend gives none; empty for an envelope call, whose result
	// goes back as a [RoleUser] message (there is no native call to answer).
	// It is never an idempotency key.
	ID string
	// Name is the model-facing tool name, one of [Request.Tools].
	Name string
	// Arguments is a JSON object.
	Arguments json.RawMessage
}

// ToolSpec is one tool of the turn's shortlist as shown to the model.
type ToolSpec struct {
	// Name is the model-facing name; it must match ^[a-zA-Z0-9_-]{1,64}$.
	Name        string
	Description string
	// Parameters is the tool's full JSON Schema (an object schema).
	Parameters json.RawMessage
	// StrictParameters is the OpenAI strict form of [ToolSpec.Parameters] (every
	// property required, additionalProperties false). Needed by the OpenAI
	// adapter in [ModeNative]; ignored elsewhere.
	StrictParameters json.RawMessage
	// Search marks the tool search of deferred loading ([Request.Deferred]):
	// the model calls it with a query and its result names the deferred
	// tools to load ([Message.ToolReferences]). OpenAI's Responses API gets
	// it as a client-executed tool_search tool; elsewhere it is a tool like
	// the others.
	Search bool
	// Namespace, on a [Request.Deferred] tool, names the group it belongs to
	// (its MCP server or tool namespace, e.g. "github"). Backends that
	// group deferred tools send it as the group (OpenAI Responses'
	// namespace tools); others ignore it. "" leaves the tool ungrouped;
	// else it must match ^[a-zA-Z0-9_-]{1,64}$.
	Namespace string
}

// Mode says how a request constrains the model's output.
type Mode int

const (
	// ModeEnvelope (the zero value) asks for the turn envelope, enforced
	// by the backend's structured-output feature with
	// [Constraint.EnvelopeSchema]: Ollama `format`, OpenAI `response_format`
	// json_schema strict. The shortlist's schemas go in the system prompt.
	ModeEnvelope Mode = iota
	// ModeGrammar asks for the turn envelope, enforced by
	// [Constraint.GBNF] in the request's `grammar` field (llama.cpp server
	// behind the OpenAI adapter). The shortlist's schemas go in the
	// system prompt.
	ModeGrammar
	// ModeNative sends the shortlist as the backend's native tools and
	// reads its native tool calls (OpenAI with strict: true; Ollama's
	// tools, which Ollama does not enforce, so the Validate hook of
	// Checked is the check there).
	ModeNative
)

// String returns the mode's name as used in logs and errors.
func (m Mode) String() string {
	switch m {
	case ModeEnvelope:
		return "envelope"
	case ModeGrammar:
		return "grammar"
	case ModeNative:
		return "native"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Constraint is the turn's compiled output constraint, produced by the
// grammar package as plain data.
type Constraint struct {
	Mode Mode
	// GBNF is the llama.cpp grammar of the turn envelope ([ModeGrammar]).
	GBNF string
	// EnvelopeSchema is the JSON Schema of the turn envelope ([ModeEnvelope]).
	EnvelopeSchema json.RawMessage
	// BestEffort, in [ModeNative], sends the tools without server-side
	// enforcement (no OpenAI strict flag). Only [Checked] sets it, on a
	// downgrade the caller opted into; the reply is then validated by
	// the Validate hook.
	BestEffort bool
	// Bounds are the size limits the constraint enforces where the tools'
	// schemas set none (the envelope's answer and query; free strings and
	// arrays of a call's arguments), as its compiler reports them.
	// [TokenBudget] sizes a request from them, so that the constraint closes
	// a reply before the budget runs out. A zero field: not bounded or not
	// known (TokenBudget's fixed allowances).
	Bounds Bounds
	// Tighten, when set, compiles the same constraint again with smaller
	// bounds (never below what the schemas themselves allow). [Checked] calls
	// it with Bounds.Tighter() when a reply was cut off at the token
	// budget, so that the repair's constraint forces a shorter reply. nil:
	// the repair only asks for a shorter reply.
	Tighten func(Bounds) (Constraint, error) `json:"-"`
}

// Request is one chat request: the conversation, the turn's shortlist and
// its constraint.
type Request struct {
	Messages []Message
	// Tools is the turn's shortlist, and the only tools the backend sends
	// to the model. A reply naming any other tool is an [*OutputError].
	Tools []ToolSpec
	// Deferred are further authorized tools that the backend may send for
	// deferred loading ([ModeNative] only): their definitions are part of
	// every request, in the caller's order, but stay out of the model's
	// context until a tool result names them in [Message.ToolReferences], so
	// the prompt prefix stays the same from step to step and the API's
	// prompt cache holds. Backends without deferred loading ignore them.
	// The caller must put only tools the principal may use here.
	Deferred []ToolSpec
	// PromptTools, when above 0, is how many of [Request.Tools] (the first ones) the
	// system prompt's tool section lists in the envelope modes
	// ([WithToolPrompt]); the caller has shown the others in the
	// conversation itself, where they were found, so the system prompt
	// stays the same from step to step and the prompt cache holds. 0 lists
	// all of Tools.
	PromptTools int
	// NoToolPrompt leaves the messages as the caller wrote them in the
	// envelope modes: [WithToolPrompt] adds no tool section and no envelope
	// instructions (which offer answer and find_tools). For a request whose
	// constraint is its own, not a turn's (a rewrite of a search request),
	// and whose system prompt says what to write.
	NoToolPrompt bool
	Constraint   Constraint
	// RequireCall asks for a call of one of [Request.Tools] (or, where the
	// constraint offers it, a find_tools search) instead of an answer, as
	// OpenAI's tool_choice "required" does. In the envelope modes the
	// caller's [Request.Constraint] must already leave out the answer branch
	// (grammar.Options.NoAnswer: the runtime does); the envelope prompt
	// stays the same, so that a prompt cache keeps its prefix from a step
	// that requires a call to one that does not. In [ModeNative] the backend
	// sends the API's own: tool_choice "required" (OpenAI, the Responses
	// API) or {"type":"any"} (Anthropic); Ollama's API has none. In every mode a
	// reply that answers anyway is an [*OutputError] ([ProblemCallRequired]),
	// which [Checked] repairs.
	RequireCall bool
	// MaxTokens caps the reply's length; 0 means the backend's default.
	// [Checked] sets it, when it is 0, to TokenBudget(req) bounded by
	// [Options.MaxTokens], so every request it sends carries a budget.
	MaxTokens int
	// Temperature is the sampling temperature; nil means the backend's
	// Options.Temperature, else the server's default.
	Temperature *float64
	// Seed is the sampling seed, for reproducible runs (with [Request.Temperature]
	// 0, the same server and model answer the same request the same way);
	// nil means the backend's Options.Seed, else none (the server picks).
	Seed *int64
	// CatalogTokens is the caller's count of the tokens the whole
	// authorized catalog's definitions would take; 0 means unknown. It is
	// reported in [Usage] and the metrics, next to what the request sent.
	CatalogTokens int
	// OnDelta, when set, makes streaming backends stream and receive each
	// piece of the reply's text as it arrives, on the calling goroutine.
	// In envelope modes the pieces are fragments of JSON. Through [Checked]
	// it sees every attempt, including ones later rejected.
	OnDelta func(delta string)
}

// Action is what a reply asks for.
type Action string

// The actions of the turn envelope.
const (
	ActionCall      Action = "call"
	ActionAnswer    Action = "answer"
	ActionFindTools Action = "find_tools"
)

// FinishReason is why the model stopped, normalized across backends.
type FinishReason string

// Normalized finish reasons. Backends' other values pass through verbatim.
const (
	FinishStop      FinishReason = "stop"
	FinishLength    FinishReason = "length"
	FinishToolCalls FinishReason = "tool_calls"
	// FinishRefusal is a reply the model (or the provider's safety
	// system) refused: Anthropic's stop_reason "refusal", OpenAI's
	// "content_filter" or a message whose text is its `refusal`.
	FinishRefusal FinishReason = "refusal"
)

// Usage is the token accounting of one request.
type Usage struct {
	// PromptTokens and [Usage.CompletionTokens] are as the backend reports them
	// (0 when it reports none).
	PromptTokens     int
	CompletionTokens int
	// ToolDefinitionTokens is the o200k_base count of the tool
	// definitions the request carried: the tools array, the format or
	// response_format schema, the grammar and the system-prompt section
	// listing the shortlist.
	ToolDefinitionTokens int
	// CatalogTokens echoes [Request.CatalogTokens].
	CatalogTokens int
	// CachedPromptTokens is how many prompt tokens the backend read from
	// its prompt cache (OpenAI's cached_tokens, Anthropic's
	// cache_read_input_tokens); 0 when it reports none.
	CachedPromptTokens int
	// CacheWriteTokens is how many prompt tokens the backend wrote to its
	// prompt cache (Anthropic's cache_creation_input_tokens); 0 when it
	// reports none.
	CacheWriteTokens int
}

// Response is a backend's reply to one request.
type Response struct {
	// Message is the assistant message to append to the conversation.
	Message Message
	// Action says which of [Response.Calls], [Response.Answer] or [Response.FindTools] holds the reply.
	Action Action
	// Calls holds exactly one call when [Response.Action] is [ActionCall]; its Name is
	// one of [Request.Tools].
	Calls []ToolCall
	// Answer is the text of an [ActionAnswer] reply.
	Answer string
	// FindTools is the query of an [ActionFindTools] reply.
	FindTools    string
	Usage        Usage
	Raw          string // the raw model output, for the audit
	FinishReason FinishReason
	// Downgraded reports that [Checked] fell back to validated native tools
	// because the backend rejected the constraint; [Response.DowngradeReason] says why.
	Downgraded      bool
	DowngradeReason string
}

// ErrInvalidRequest marks a [Request] that cannot be sent as it is.
var ErrInvalidRequest = errors.New("llm: invalid request")

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidToolName reports whether name fits the model-facing rule
// ^[a-zA-Z0-9_-]{1,64}$.
func ValidToolName(name string) bool { return toolNameRE.MatchString(name) }

// Validate checks what every backend needs: tool names valid and unique,
// parameters that are JSON objects, and the constraint's data for its
// mode. The error wraps [ErrInvalidRequest].
func (r *Request) Validate() error {
	if r == nil {
		return fmt.Errorf("%w: nil request", ErrInvalidRequest)
	}
	if len(r.Messages) == 0 {
		return fmt.Errorf("%w: no messages", ErrInvalidRequest)
	}
	seen := make(map[string]bool, len(r.Tools)+len(r.Deferred))
	if err := validateTools("Tools", r.Tools, seen); err != nil {
		return err
	}
	if err := validateTools("Deferred", r.Deferred, seen); err != nil {
		return err
	}
	if r.RequireCall && r.Constraint.Mode == ModeNative && len(r.Tools) == 0 {
		return fmt.Errorf("%w: RequireCall with no Tools to call", ErrInvalidRequest)
	}
	if len(r.Deferred) > 0 && r.Constraint.Mode != ModeNative {
		return fmt.Errorf("%w: Deferred tools need ModeNative, not %s", ErrInvalidRequest, r.Constraint.Mode)
	}
	switch r.Constraint.Mode {
	case ModeEnvelope:
		if !isJSONObject(r.Constraint.EnvelopeSchema) {
			return fmt.Errorf("%w: Constraint.EnvelopeSchema is not a JSON object (ModeEnvelope needs it)", ErrInvalidRequest)
		}
	case ModeGrammar:
		if r.Constraint.GBNF == "" {
			return fmt.Errorf("%w: Constraint.GBNF is empty (ModeGrammar needs it)", ErrInvalidRequest)
		}
	case ModeNative:
	default:
		return fmt.Errorf("%w: unknown Constraint.Mode %d", ErrInvalidRequest, int(r.Constraint.Mode))
	}
	if r.MaxTokens < 0 {
		return fmt.Errorf("%w: MaxTokens %d is negative", ErrInvalidRequest, r.MaxTokens)
	}
	return nil
}

// validateTools checks the tools of the request's field (Tools or
// Deferred): names valid and not in seen, which it adds them to, and
// parameters that are JSON objects.
func validateTools(field string, tools []ToolSpec, seen map[string]bool) error {
	for i, t := range tools {
		if !ValidToolName(t.Name) {
			return fmt.Errorf("%w: %s[%d].Name %q does not match ^[a-zA-Z0-9_-]{1,64}$", ErrInvalidRequest, field, i, t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("%w: %s[%d].Name %q is listed twice", ErrInvalidRequest, field, i, t.Name)
		}
		seen[t.Name] = true
		if !isJSONObject(t.Parameters) {
			return fmt.Errorf("%w: %s[%d] (%s).Parameters is not a JSON object", ErrInvalidRequest, field, i, t.Name)
		}
		if len(t.StrictParameters) > 0 && !isJSONObject(t.StrictParameters) {
			return fmt.Errorf("%w: %s[%d] (%s).StrictParameters is not a JSON object", ErrInvalidRequest, field, i, t.Name)
		}
		if t.Namespace != "" && !ValidToolName(t.Namespace) {
			return fmt.Errorf("%w: %s[%d] (%s).Namespace %q does not match ^[a-zA-Z0-9_-]{1,64}$", ErrInvalidRequest, field, i, t.Name, t.Namespace)
		}
	}
	return nil
}

func isJSONObject(raw json.RawMessage) bool {
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) && json.Valid(raw)
}

// ToolNames returns the names of the request's tools, in order.
func (r *Request) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

// Tool returns the shortlisted tool with the given name.
func (r *Request) Tool(name string) (ToolSpec, bool) {
	for _, t := range r.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return ToolSpec{}, false
}

// Callable returns the tool a reply may call by name: one of Tools, or a
// Deferred tool that a [RoleTool] message of the conversation has referenced.
func (r *Request) Callable(name string) (ToolSpec, bool) {
	if t, ok := r.Tool(name); ok {
		return t, true
	}
	for _, t := range r.Deferred {
		if t.Name == name && r.referenced(name) {
			return t, true
		}
	}
	return ToolSpec{}, false
}

// CallableNames returns the names a reply may call, in order: Tools, then
// the Deferred tools the conversation has referenced. The search tool
// ([ToolSpec.Search]) is left out: it finds tools, and some APIs show it
// under a name of their own.
func (r *Request) CallableNames() []string {
	var names []string
	for _, t := range r.Tools {
		if !t.Search {
			names = append(names, t.Name)
		}
	}
	for _, t := range r.Deferred {
		if r.referenced(t.Name) {
			names = append(names, t.Name)
		}
	}
	return names
}

// searches reports whether Tools holds the search tool of deferred loading.
func (r *Request) searches() bool {
	return slices.ContainsFunc(r.Tools, func(t ToolSpec) bool { return t.Search })
}

func (r *Request) referenced(name string) bool {
	for _, m := range r.Messages {
		if m.Role == RoleTool && slices.Contains(m.ToolReferences, name) {
			return true
		}
	}
	return false
}

// Clone returns a deep copy of r, except OnDelta, which is shared.
func (r *Request) Clone() *Request {
	c := *r
	c.Messages = make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		m.ToolCalls = cloneEach(m.ToolCalls, func(tc ToolCall) ToolCall {
			tc.Arguments = cloneRaw(tc.Arguments)
			return tc
		})
		m.ToolReferences = slices.Clone(m.ToolReferences)
		c.Messages[i] = m
	}
	c.Tools = cloneEach(r.Tools, cloneSpec)
	c.Deferred = cloneEach(r.Deferred, cloneSpec)
	c.Constraint.EnvelopeSchema = cloneRaw(r.Constraint.EnvelopeSchema)
	if r.Temperature != nil {
		temp := *r.Temperature
		c.Temperature = &temp
	}
	if r.Seed != nil {
		seed := *r.Seed
		c.Seed = &seed
	}
	return &c
}

func cloneSpec(t ToolSpec) ToolSpec {
	t.Parameters = cloneRaw(t.Parameters)
	t.StrictParameters = cloneRaw(t.StrictParameters)
	return t
}

// cloneEach returns a copy of s with each element through clone; nil
// stays nil.
func cloneEach[T any](s []T, clone func(T) T) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = clone(v)
	}
	return out
}

func cloneRaw(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}
