// Package anthropic is the [llm.Backend] for Anthropic's Messages API
// (/v1/messages), built on the official client,
// github.com/anthropics/anthropic-sdk-go.
//
// How each mode is constrained:
//
//   - llm.ModeNative: `tools` from the shortlist, `strict: true` with
//     ToolSpec.StrictParameters (the API then guarantees the input matches
//     the schema), and `tool_choice` auto (any under Request.RequireCall)
//     with parallel tool use disabled: one call per step. With Request.Deferred, every deferred tool is
//     sent too, with `defer_loading: true`: the API keeps its definition out
//     of the model's context until a tool result references it with a
//     `tool_reference` block (Message.ToolReferences), so the tools and the
//     system prompt — the cached prefix — stay the same from step to step.
//     The runtime answers its own search tool (`find_tools`) with those
//     references: the model searches with toolgate's ranking, over the
//     authorized tools only.
//   - llm.ModeEnvelope: `output_config.format` json_schema with the
//     envelope schema (wrapped in a root object, see llm.WrapEnvelopeSchema);
//     the shortlist's schemas in the system prompt.
//   - llm.ModeGrammar: the Messages API takes no grammar; Chat returns an
//     *llm.ConstraintError, which llm.Checked can downgrade.
//
// The system messages become the request's `system` blocks, with a
// `cache_control` breakpoint ([Options.NoCache] turns it off), and the API's
// cache counters are reported in [llm.Usage] (CachedPromptTokens,
// CacheWriteTokens).
//
// ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL are read by the SDK itself;
// [Options.APIKey] and [Options.BaseURL] override them. The SDK's own retries
// are turned off: [llm.Checked] retries, with an injected clock.
package anthropic

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/wire"
)

// Options configures a [Backend]. A nil *Options means all defaults.
type Options struct {
	// BaseURL is the API root, e.g. "https://api.anthropic.com". "" means
	// ANTHROPIC_BASE_URL, else the API's.
	BaseURL string
	// APIKey is the x-api-key. "" means ANTHROPIC_API_KEY.
	APIKey string
	// HTTPClient sends the requests. nil means the SDK's default.
	HTTPClient *http.Client
	// MaxTokens is the reply budget when Request.MaxTokens is 0 (the API
	// requires one). 0 means 1024.
	MaxTokens int
	// NoCache leaves out the cache_control breakpoint on the system prompt.
	NoCache bool
	// StreamIdleTimeout bounds the silence of a streamed reply
	// (Request.OnDelta set): the time to its first event and between two;
	// a keep-alive comment is no event. Past it the request fails with an
	// [*llm.IdleError], which [llm.Checked] retries. 0 means
	// [llm.DefaultStreamIdleTimeout] (5 minutes); negative means no bound
	// but the caller's context.
	StreamIdleTimeout time.Duration
}

// Backend talks to the Messages API with one model. It is safe for
// concurrent use.
type Backend struct {
	client anthropic.Client
	model  string
	opts   Options
}

var _ llm.Backend = (*Backend)(nil)

const defaultMaxTokens = 1024

// sdk is the SDK's option constructors, for wire.
var sdk = wire.SDK[option.RequestOption]{WithMaxRetries: option.WithMaxRetries, WithBaseURL: option.WithBaseURL,
	WithAPIKey: option.WithAPIKey, WithHTTPClient: func(c *http.Client) option.RequestOption { return option.WithHTTPClient(c) }}

// New returns a [Backend] for model (e.g. "claude-sonnet-4-5"). Deferred
// loading needs a model with tool search (at its launch: Claude Opus 4.5
// and Sonnet 4.5 and later); a model or API version that refuses it fails
// with an *[llm.ConstraintError] whose Deferred is set, which the runtime
// answers by sending the shortlist as plain tools.
func New(model string, opts *Options) (*Backend, error) {
	o, err := wire.Options("anthropic", model, opts)
	if err != nil {
		return nil, err
	}
	if o.MaxTokens < 0 {
		return nil, fmt.Errorf("anthropic: Options.MaxTokens %d is negative", o.MaxTokens)
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = defaultMaxTokens
	}
	if err := wire.CheckBaseURL("anthropic", o.BaseURL); err != nil {
		return nil, err
	}
	ropts := sdk.ClientOptions(o.BaseURL, o.APIKey, o.HTTPClient)
	return &Backend{client: anthropic.NewClient(ropts...), model: model, opts: o}, nil
}

// Name returns "anthropic".
func (b *Backend) Name() string { return "anthropic" }

// Chat sends req to /v1/messages, streaming (SSE) when req.OnDelta is set.
func (b *Backend) Chat(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	params, ropts, defTokens, err := b.buildRequest(req)
	if err != nil {
		return nil, err
	}
	m, httpResp, err := wire.Send(ctx, params, ropts, req.OnDelta, option.WithResponseInto, b.client.Messages.New, b.stream)
	if err != nil {
		return nil, chatError(ctx, req, err, httpResp)
	}
	msg := llm.Message{Role: llm.RoleAssistant}
	var text strings.Builder
	for _, block := range m.Content {
		switch block.Type {
		case "text":
			text.WriteString(block.Text)
		case "tool_use":
			id := block.ID
			if id == "" {
				// A server that leaves the id out: the call's result must
				// still answer it by an id, as in the OpenAI adapters.
				id = "toolu_" + strconv.Itoa(len(msg.ToolCalls))
			}
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: id, Name: block.Name, Arguments: append(json.RawMessage(nil), block.Input...)})
		}
	}
	msg.Content = text.String()
	resp := &llm.Response{
		Message: msg,
		Usage: llm.Usage{
			// input_tokens counts only what was neither read from nor
			// written to the cache; the prompt is the sum.
			PromptTokens:         int(m.Usage.InputTokens + m.Usage.CacheReadInputTokens + m.Usage.CacheCreationInputTokens),
			CompletionTokens:     int(m.Usage.OutputTokens),
			ToolDefinitionTokens: defTokens,
			CatalogTokens:        req.CatalogTokens,
			CachedPromptTokens:   int(m.Usage.CacheReadInputTokens),
			CacheWriteTokens:     int(m.Usage.CacheCreationInputTokens),
		},
		FinishReason: finishReason(m.StopReason),
	}
	if req.Constraint.Mode == llm.ModeEnvelope {
		resp.Raw = wire.EnvelopeRaw(req, msg.Content)
	}
	return resp, llm.ParseReply(req, resp)
}

func (b *Backend) stream(ctx context.Context, params anthropic.MessageNewParams, onDelta func(string), ropts []option.RequestOption) (*anthropic.Message, error) {
	var (
		acc     anthropic.Message
		stopped bool
	)
	ctx, idle := wire.WatchIdle(ctx, "anthropic", b.opts.StreamIdleTimeout)
	defer idle.Stop()
	err := wire.Drain(b.client.Messages.NewStreaming(ctx, params, ropts...), idle, func(ev anthropic.MessageStreamEventUnion) error {
		if err := acc.Accumulate(ev); err != nil {
			return fmt.Errorf("the stream sent an inconsistent event: %w", err)
		}
		stopped = stopped || ev.Type == "message_stop"
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
			onDelta(ev.Delta.Text)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !stopped {
		// A dropped connection or a proxy's timeout: the text so far would
		// pass for a complete answer.
		return nil, errors.New("the stream ended before its message_stop event")
	}
	return &acc, nil
}

func finishReason(r anthropic.StopReason) llm.FinishReason {
	switch r {
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return llm.FinishLength
	case anthropic.StopReasonToolUse:
		return llm.FinishToolCalls
	case "", anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
		return llm.FinishStop
	case anthropic.StopReasonRefusal:
		return llm.FinishRefusal
	}
	return llm.FinishReason(r)
}

// buildRequest translates req and counts the tokens of its tool
// definitions (deferred tools count too: they are sent, though the model
// sees them only once referenced).
func (b *Backend) buildRequest(req *llm.Request) (anthropic.MessageNewParams, []option.RequestOption, int, error) {
	var p anthropic.MessageNewParams
	if err := req.Validate(); err != nil {
		return p, nil, 0, err
	}
	p.Model = anthropic.Model(b.model)
	p.MaxTokens = int64(b.opts.MaxTokens)
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	var (
		ropts     []option.RequestOption
		defTokens int
		msgs      = req.Messages
	)
	switch req.Constraint.Mode {
	case llm.ModeGrammar:
		return p, nil, 0, wire.NoGrammar("anthropic", "Messages API")
	case llm.ModeEnvelope:
		msgs = llm.WithToolPrompt(req)
		schema, tokens, err := wire.EnvelopeSchema(req)
		if err != nil {
			return p, nil, 0, err
		}
		// The schema goes in verbatim (keys in their order) rather than
		// through the SDK's map[string]any.
		p.OutputConfig.Format.Schema = map[string]any{}
		ropts = append(ropts, option.WithJSONSet("output_config.format.schema", schema))
		defTokens = tokens
	case llm.ModeNative:
		strict := !req.Constraint.BestEffort
		specs := append(append([]llm.ToolSpec(nil), req.Tools...), req.Deferred...)
		for i, t := range specs {
			deferred := i >= len(req.Tools)
			useStrict := strict && !deferred
			schema, err := wire.ToolSchema(t, useStrict)
			if err != nil {
				return p, nil, 0, err
			}
			tp := anthropic.ToolParam{Name: t.Name, InputSchema: anthropic.ToolInputSchemaParam{}}
			if t.Description != "" {
				tp.Description = param.NewOpt(t.Description)
			}
			if useStrict {
				tp.Strict = param.NewOpt(true)
			}
			if deferred {
				tp.DeferLoading = param.NewOpt(true)
			}
			p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tp})
			ropts = append(ropts, option.WithJSONSet("tools."+strconv.Itoa(i)+".input_schema", schema))
			data, _ := json.Marshal(tp)
			defTokens += tokens.Estimate(string(data)) + tokens.Estimate(string(schema))
		}
		switch {
		case len(req.Tools) > 0 && req.RequireCall:
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{DisableParallelToolUse: param.NewOpt(true)}}
		case len(req.Tools) > 0:
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{DisableParallelToolUse: param.NewOpt(true)}}
		}
	}
	system, conv := splitSystem(msgs)
	for i, s := range system {
		block := anthropic.TextBlockParam{Text: s}
		if i == len(system)-1 && !b.opts.NoCache {
			block.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		p.System = append(p.System, block)
	}
	p.Messages = messages(conv, req.Deferred)
	if len(p.Messages) == 0 {
		return p, nil, 0, fmt.Errorf("%w: no user or assistant message (the Messages API needs one)", llm.ErrInvalidRequest)
	}
	return p, ropts, defTokens, nil
}

// splitSystem separates the system messages (the API's top-level
// `system`) from the conversation.
func splitSystem(msgs []llm.Message) (system []string, conv []llm.Message) {
	for _, m := range msgs {
		if m.Role == llm.RoleSystem {
			if m.Content != "" {
				system = append(system, m.Content)
			}
			continue
		}
		conv = append(conv, m)
	}
	return system, conv
}

// messages translates the conversation. Tool results are content blocks
// of a user message; consecutive messages of one side are merged into one
// message, as the API wants the sides to alternate. Tool references go
// out only to the request's deferred tools: without them there is nothing
// to load, and a model without tool search refuses the blocks; a
// reference to a tool not deferred (removed from the view since the
// search) the API would refuse, with a 400 that names tool_reference.
func messages(conv []llm.Message, deferred []llm.ToolSpec) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	add := func(role anthropic.MessageParamRole, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for _, m := range conv {
		switch m.Role {
		case llm.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				input := c.Arguments
				if !json.Valid(input) {
					input = json.RawMessage(`{}`)
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input, c.Name))
			}
			add(anthropic.MessageParamRoleAssistant, blocks...)
		case llm.RoleTool:
			add(anthropic.MessageParamRoleUser, toolResult(m, deferred))
		default:
			if m.Content != "" {
				add(anthropic.MessageParamRoleUser, anthropic.NewTextBlock(m.Content))
			}
		}
	}
	return out
}

// toolResult is a tool_result block: the result's text, then one
// tool_reference block per tool of deferred it loads.
func toolResult(m llm.Message, deferred []llm.ToolSpec) anthropic.ContentBlockParamUnion {
	tr := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if m.Content != "" {
		tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: m.Content}})
	}
	for _, name := range m.ToolReferences {
		if _, ok := wire.DeferredTool(deferred, name); ok {
			tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfToolReference: &anthropic.ToolReferenceBlockParam{ToolName: name}})
		}
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &tr}
}

// chatError maps the SDK's errors to llm's.
func chatError(ctx context.Context, req *llm.Request, err error, httpResp *http.Response) error {
	if ctx.Err() != nil {
		return fmt.Errorf("anthropic: chat: %w", ctx.Err())
	}
	var ae *anthropic.Error
	if !errors.As(err, &ae) {
		return fmt.Errorf("anthropic: chat: %w", err)
	}
	typ, msg := apiMessage(ae)
	status := ae.StatusCode
	if status == http.StatusOK {
		// An `event: error` in a stream that began with 200.
		status = streamErrorStatus(typ)
	}
	if ae.StatusCode == http.StatusBadRequest && wire.RejectsDeferred(req, msg) {
		return &llm.ConstraintError{Backend: "anthropic", Mode: req.Constraint.Mode, Message: msg, Err: err, Deferred: true}
	}
	if ae.StatusCode == http.StatusBadRequest && rejectsConstraint(req, msg) {
		return &llm.ConstraintError{Backend: "anthropic", Mode: req.Constraint.Mode, Message: msg, Err: err}
	}
	retryAfter := wire.RetryAfter(cmp.Or(ae.Response, httpResp))
	return &llm.StatusError{Backend: "anthropic", StatusCode: status, RetryAfter: retryAfter, Message: msg, Err: ae}
}

// streamErrorStatus is the HTTP status the API sends an error of type typ
// with before a stream begins (docs.claude.com/en/api/errors), for the
// same error sent as an `event: error` inside a stream, whose response
// said 200. An unknown type is a server error, worth a retry like the
// api_error it most likely is.
func streamErrorStatus(typ string) int {
	switch typ {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "billing_error":
		return http.StatusPaymentRequired
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "overloaded_error":
		return 529
	}
	return http.StatusInternalServerError
}

// apiMessage is the type and message of the API's error body
// {"type":"error","error":{"type","message"}}; no type and the body itself
// when it is not one.
func apiMessage(ae *anthropic.Error) (typ, msg string) {
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	raw := ae.RawJSON()
	if json.Unmarshal([]byte(raw), &body) == nil && body.Error.Message != "" {
		return body.Error.Type, body.Error.Message
	}
	return "", strings.TrimSpace(raw)
}

// rejectsConstraint recognizes a 400 about the constraint: a model
// without structured outputs or strict tools. (A refusal of deferred
// loading is wire.RejectsDeferred's.)
func rejectsConstraint(req *llm.Request, msg string) bool {
	msg = strings.ToLower(msg)
	switch req.Constraint.Mode {
	case llm.ModeEnvelope:
		return strings.Contains(msg, "output_config") || strings.Contains(msg, "output format") || strings.Contains(msg, "json_schema")
	case llm.ModeNative:
		return !req.Constraint.BestEffort && strings.Contains(msg, "strict")
	}
	return false
}
