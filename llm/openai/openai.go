// Package openai is the [llm.Backend] for OpenAI's Chat Completions API
// (/v1/chat/completions, /v1/embeddings) and the servers that implement it
// (llama.cpp server, vLLM, Ollama's /v1), built on the official client,
// github.com/openai/openai-go/v3.
//
// How each mode is constrained:
//
//   - llm.ModeNative: `tools` with `strict: true` from
//     ToolSpec.StrictParameters and `parallel_tool_calls: false`; OpenAI
//     enforces the schemas while sampling.
//   - llm.ModeEnvelope: `response_format` {type: json_schema, strict: true}
//     with the envelope schema; the shortlist's schemas in the system
//     prompt. OpenAI wants an object at a strict schema's root, so an
//     envelope schema whose root is a union (anyOf) is sent as the
//     property "envelope" of a root object, and the reply's
//     {"envelope":{...}} is unwrapped: Response.Raw holds the envelope,
//     Response.Message.Content the reply as the model wrote it.
//   - llm.ModeGrammar: the GBNF in the request body's `grammar` field,
//     which llama.cpp's server enforces; the shortlist's schemas in the
//     system prompt.
//
// OPENAI_API_KEY and OPENAI_BASE_URL are read by openai-go itself, as in
// every OpenAI client; [Options.APIKey] and [Options.BaseURL] override them.
// openai-go's own retries are turned off: [llm.Checked] retries, with an
// injected clock.
package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/wire"
)

// Options configures a [Backend]. A nil *Options means all defaults.
type Options struct {
	// BaseURL is the API root, e.g. "http://localhost:8080/v1" for a
	// llama.cpp server. "" means OPENAI_BASE_URL, else https://api.openai.com/v1.
	BaseURL string
	// APIKey is the bearer token. "" means OPENAI_API_KEY; New refuses
	// neither for OpenAI's own API ([ErrNoAPIKey]), a local
	// OpenAI-compatible server needs none.
	APIKey string
	// HTTPClient sends the requests. nil means openai-go's default.
	HTTPClient *http.Client
	// EmbeddingModel is the model Embed uses (e.g. "text-embedding-3-small").
	// "" makes Embed fail.
	EmbeddingModel string
	// LegacyMaxTokens sends Request.MaxTokens as `max_tokens` instead of
	// `max_completion_tokens`, for servers that know only the old name.
	LegacyMaxTokens bool
	// Temperature is the sampling temperature of requests that set none.
	// nil means the server's default (1 for OpenAI, 0.8 for llama.cpp).
	Temperature *float64
	// Seed is the sampling seed of requests that set none; with
	// Temperature 0 it makes runs repeatable on servers that honour it
	// (llama.cpp; OpenAI on a best-effort basis). nil means none.
	Seed *int64
	// StreamIdleTimeout bounds the silence of a streamed reply
	// (Request.OnDelta set): the time to its first event and between two;
	// a keep-alive comment is no event. Past it the request fails with an
	// [*llm.IdleError], which [llm.Checked] retries. 0 means
	// [llm.DefaultStreamIdleTimeout] (5 minutes); negative means no bound
	// but the caller's context.
	StreamIdleTimeout time.Duration
}

// Backend talks to one Chat Completions endpoint and model. It is safe for
// concurrent use.
type Backend struct {
	client openai.Client
	model  string
	opts   Options
}

var (
	_ llm.Backend  = (*Backend)(nil)
	_ llm.Embedder = (*Backend)(nil)
)

// envelopeSchemaName is the response_format json_schema name.
const envelopeSchemaName = "turn_envelope"

// ErrNoAPIKey is wrapped by the error of New and [NewResponses] when OpenAI's
// own API would be called without a key: no [Options.APIKey] and no
// OPENAI_API_KEY. An OpenAI-compatible server at another host (llama.cpp,
// vLLM, Ollama's /v1, named by [Options.BaseURL] or OPENAI_BASE_URL) needs
// no key.
var ErrNoAPIKey = errors.New("openai: no API key")

// defaultBaseURL is where openai-go sends requests when neither
// [Options.BaseURL] nor OPENAI_BASE_URL names a server.
const defaultBaseURL = "https://api.openai.com/v1"

// checkAPIKey refuses, with [ErrNoAPIKey], options that would call OpenAI's
// own API without a key: every request would fail with a 401 only at the
// first turn, far from the mistake.
func checkAPIKey(o Options) error {
	if o.APIKey != "" || os.Getenv("OPENAI_API_KEY") != "" {
		return nil
	}
	base := cmp.Or(o.BaseURL, os.Getenv("OPENAI_BASE_URL"), defaultBaseURL)
	u, err := url.Parse(base)
	if err != nil {
		return nil // openai-go reports a bad OPENAI_BASE_URL itself
	}
	host := strings.ToLower(u.Hostname())
	if host != "openai.com" && !strings.HasSuffix(host, ".openai.com") {
		return nil
	}
	return fmt.Errorf("%w for %s: set Options.APIKey or OPENAI_API_KEY (an OpenAI-compatible server, set by Options.BaseURL or OPENAI_BASE_URL, needs none)", ErrNoAPIKey, base)
}

// sdk is the SDK's option constructors, for wire.
var sdk = wire.SDK[option.RequestOption]{WithMaxRetries: option.WithMaxRetries, WithBaseURL: option.WithBaseURL,
	WithAPIKey: option.WithAPIKey, WithHTTPClient: func(c *http.Client) option.RequestOption { return option.WithHTTPClient(c) }}

// New returns a [Backend] for model (e.g. "gpt-4.1-mini"). It fails with
// [ErrNoAPIKey] when the server is OpenAI's own and no key is given.
func New(model string, opts *Options) (*Backend, error) {
	o, err := wire.Options("openai", model, opts)
	if err != nil {
		return nil, err
	}
	if err := wire.CheckTemperature("openai", o.Temperature); err != nil {
		return nil, err
	}
	if err := wire.CheckBaseURL("openai", o.BaseURL); err != nil {
		return nil, err
	}
	if err := checkAPIKey(o); err != nil {
		return nil, err
	}
	ropts := sdk.ClientOptions(o.BaseURL, o.APIKey, o.HTTPClient)
	return &Backend{client: openai.NewClient(ropts...), model: model, opts: o}, nil
}

// Name returns "openai".
func (b *Backend) Name() string { return "openai" }

// Chat sends req to /chat/completions, streaming (SSE) when req.OnDelta is set.
func (b *Backend) Chat(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	params, ropts, defTokens, err := b.buildRequest(req)
	if err != nil {
		return nil, err
	}
	cc, httpResp, err := wire.Send(ctx, params, ropts, req.OnDelta, option.WithResponseInto, b.client.Chat.Completions.New, b.stream)
	if err != nil {
		return nil, chatError(ctx, req, err, httpResp)
	}
	if len(cc.Choices) == 0 {
		if se := bodyError(cc.RawJSON()); se != nil {
			return nil, se
		}
		return nil, errors.New("openai: chat: the response has no choices")
	}
	choice := cc.Choices[0]
	msg := llm.Message{Role: llm.RoleAssistant, Content: choice.Message.Content}
	for i, tc := range choice.Message.ToolCalls {
		id := tc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(i)
		}
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: id, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
	}
	resp := &llm.Response{
		Message: msg,
		Usage: llm.Usage{
			PromptTokens:         int(cc.Usage.PromptTokens),
			CompletionTokens:     int(cc.Usage.CompletionTokens),
			ToolDefinitionTokens: defTokens,
			CatalogTokens:        req.CatalogTokens,
		},
		FinishReason: finishReason(choice.FinishReason),
	}
	if req.Constraint.Mode != llm.ModeNative {
		resp.Raw = msg.Content
		if req.Constraint.Mode == llm.ModeEnvelope {
			resp.Raw = wire.EnvelopeRaw(req, msg.Content)
		}
	}
	if choice.Message.Refusal != "" && msg.Content == "" && len(msg.ToolCalls) == 0 {
		resp.Message.Content = choice.Message.Refusal
		resp.Raw = choice.Message.Refusal
		resp.FinishReason = llm.FinishRefusal
	}
	return resp, llm.ParseReply(req, resp)
}

func (b *Backend) stream(ctx context.Context, params openai.ChatCompletionNewParams, onDelta func(string), ropts []option.RequestOption) (*openai.ChatCompletion, error) {
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
	var (
		acc      openai.ChatCompletionAccumulator
		calls    callIndexes
		finished bool
	)
	ctx, idle := wire.WatchIdle(ctx, "openai", b.opts.StreamIdleTimeout)
	defer idle.Stop()
	err := wire.Drain(b.client.Chat.Completions.NewStreaming(ctx, params, ropts...), idle, func(chunk openai.ChatCompletionChunk) error {
		if len(chunk.Choices) == 0 {
			if se := bodyError(chunk.RawJSON()); se != nil {
				return se
			}
		}
		calls.renumber(&chunk)
		if !acc.AddChunk(chunk) {
			return errors.New("the stream sent an inconsistent chunk")
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			if c.Delta.Content != "" {
				onDelta(c.Delta.Content)
			}
			finished = finished || c.FinishReason != ""
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !finished {
		// A dropped connection or a proxy's timeout: the text so far would
		// pass for a complete answer, the arguments so far for a call.
		return nil, errors.New("the stream ended before its final chunk (one with a finish_reason)")
	}
	cc := acc.ChatCompletion
	return &cc, nil
}

// callIndexes numbers the tool calls of a streamed reply's first choice
// by their ids, for openai-go's accumulator, which joins every delta of one
// index into one call. Servers that stream parallel calls without an
// "index", or all under index 0, would have them joined into one call
// named "get_balanceget_balance" with arguments "{..}{..}": refused as an
// unknown tool rather than as the several calls it was. A delta with an id
// the call at its index does not have starts a new call; a delta without
// an id continues the call of its index, or, without an index, the last
// call.
type callIndexes struct {
	ids    []string        // by our index: the call's id ("" until one is sent)
	byWire map[int64]int64 // the server's index → ours
}

func (c *callIndexes) renumber(chunk *openai.ChatCompletionChunk) {
	for i := range chunk.Choices {
		if chunk.Choices[i].Index != 0 {
			continue // only the first choice is read
		}
		tcs := chunk.Choices[i].Delta.ToolCalls
		for j := range tcs {
			tcs[j].Index = c.index(tcs[j])
		}
	}
}

func (c *callIndexes) index(tc openai.ChatCompletionChunkChoiceDeltaToolCall) int64 {
	hasIndex := tc.JSON.Index.Valid()
	ours, known := c.byWire[tc.Index]
	switch {
	case hasIndex && known && (tc.ID == "" || c.ids[ours] == "" || c.ids[ours] == tc.ID):
		if c.ids[ours] == "" {
			c.ids[ours] = tc.ID
		}
		return ours
	case !hasIndex && tc.ID == "" && len(c.ids) > 0:
		return int64(len(c.ids) - 1)
	case !hasIndex && len(c.ids) > 0 && c.ids[len(c.ids)-1] == tc.ID:
		return int64(len(c.ids) - 1)
	}
	ours = int64(len(c.ids))
	c.ids = append(c.ids, tc.ID)
	if hasIndex {
		if c.byWire == nil {
			c.byWire = map[int64]int64{}
		}
		c.byWire[tc.Index] = ours
	}
	return ours
}

func finishReason(r string) llm.FinishReason {
	switch r {
	case "length":
		return llm.FinishLength
	case "tool_calls", "function_call":
		return llm.FinishToolCalls
	case "", "stop":
		return llm.FinishStop
	case "content_filter":
		return llm.FinishRefusal
	}
	return llm.FinishReason(r)
}

// buildRequest translates req and counts the tokens of its tool definitions.
func (b *Backend) buildRequest(req *llm.Request) (openai.ChatCompletionNewParams, []option.RequestOption, int, error) {
	var p openai.ChatCompletionNewParams
	if err := req.Validate(); err != nil {
		return p, nil, 0, err
	}
	p.Model = shared.ChatModel(b.model)
	if req.MaxTokens > 0 {
		if b.opts.LegacyMaxTokens {
			p.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			p.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	if t := cmp.Or(req.Temperature, b.opts.Temperature); t != nil {
		p.Temperature = param.NewOpt(*t)
	}
	if seed := cmp.Or(req.Seed, b.opts.Seed); seed != nil {
		p.Seed = param.NewOpt(*seed)
	}
	var (
		ropts     []option.RequestOption
		defTokens int
		msgs      = req.Messages
	)
	switch req.Constraint.Mode {
	case llm.ModeEnvelope:
		msgs = llm.WithToolPrompt(req)
		schema, _ := llm.WrapEnvelopeSchema(req.Constraint.EnvelopeSchema)
		p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name:   envelopeSchemaName,
				Strict: param.NewOpt(true),
				Schema: schema,
			}},
		}
		rf, _ := json.Marshal(p.ResponseFormat)
		defTokens = tokens.Estimate(string(rf)) + llm.ToolPromptTokens(req.Tools)
	case llm.ModeGrammar:
		msgs = llm.WithToolPrompt(req)
		ropts = append(ropts, option.WithJSONSet("grammar", req.Constraint.GBNF))
		defTokens = tokens.Estimate(req.Constraint.GBNF) + llm.ToolPromptTokens(req.Tools)
	case llm.ModeNative:
		strict := !req.Constraint.BestEffort
		for i, t := range req.Tools {
			schema, err := wire.ToolSchema(t, strict)
			if err != nil {
				return p, nil, 0, err
			}
			fn := shared.FunctionDefinitionParam{Name: t.Name, Strict: param.NewOpt(strict)}
			if t.Description != "" {
				fn.Description = param.NewOpt(t.Description)
			}
			tool := openai.ChatCompletionFunctionTool(fn)
			p.Tools = append(p.Tools, tool)
			data, _ := json.Marshal(tool)
			defTokens += tokens.Estimate(string(data))
			// The schema goes in verbatim, keys in their order: strict
			// decoding emits properties in schema order.
			ropts = append(ropts, option.WithJSONSet("tools."+strconv.Itoa(i)+".function.parameters", schema))
			defTokens += tokens.Estimate(string(schema))
		}
		if len(p.Tools) > 0 {
			p.ParallelToolCalls = param.NewOpt(false)
		}
		if req.RequireCall {
			p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{
				OfAuto: param.NewOpt(string(openai.ChatCompletionToolChoiceOptionAutoRequired))}
		}
	}
	for _, m := range msgs {
		p.Messages = append(p.Messages, message(m))
	}
	return p, ropts, defTokens, nil
}

func message(m llm.Message) openai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case llm.RoleSystem:
		return openai.SystemMessage(m.Content)
	case llm.RoleTool:
		return openai.ToolMessage(m.Content, m.ToolCallID)
	case llm.RoleAssistant:
		am := openai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" {
			am.Content.OfString = param.NewOpt(m.Content)
		}
		for _, c := range m.ToolCalls {
			am.ToolCalls = append(am.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(c.Arguments)},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &am}
	}
	return openai.UserMessage(m.Content)
}

// chatError maps openai-go's errors to llm's.
func chatError(ctx context.Context, req *llm.Request, err error, httpResp *http.Response) error {
	return apiError(ctx, "openai", "chat", req.Constraint.Mode, err, httpResp, func(msg string) bool {
		return rejectsConstraint(req.Constraint, msg)
	})
}

// apiError maps an error of op (chat, responses) to llm's: a
// *[llm.ConstraintError] for a 400 that rejects says is about the
// constraint, else an *[llm.StatusError] of backend for an API error.
func apiError(ctx context.Context, backend, op string, mode llm.Mode, err error, httpResp *http.Response, rejects func(msg string) bool) error {
	if ctx.Err() != nil {
		return fmt.Errorf("openai: %s: %w", op, ctx.Err())
	}
	var (
		ae  *openai.Error
		sse *ssestream.StreamError
		se  *llm.StatusError
	)
	if errors.As(err, &se) {
		se.Backend = backend
		return se
	}
	if errors.As(err, &sse) {
		if se := bodyError(string(sse.Event.Data)); se != nil {
			se.Backend, se.Err = backend, err
			return se
		}
	}
	if !errors.As(err, &ae) {
		return fmt.Errorf("openai: %s: %w", op, err)
	}
	msg := ae.Message
	if msg == "" {
		msg = strings.TrimSpace(ae.RawJSON())
	}
	if ae.StatusCode == http.StatusBadRequest && rejects(msg) {
		return &llm.ConstraintError{Backend: backend, Mode: mode, Message: msg, Err: err}
	}
	se = statusError(ae, msg, httpResp)
	se.Backend = backend
	return se
}

// bodyError reads an error that a server sent with HTTP 200, as a body or
// a stream's event, into the *[llm.StatusError] it would have been before
// the response began: {"error":{"message","type","code"}} (OpenAI's
// chunk after a stream began, OpenRouter's body) or
// {"object":"error","message","type","code"} (vLLM). Its status is the
// code where that is an HTTP error status, else the one the type names
// ([errorTypeStatus]), so that [llm.Checked] retries an overload and not an
// invalid request. nil when raw is not such an error.
func bodyError(raw string) *llm.StatusError {
	type apiErr struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	var body struct {
		apiErr
		Object string  `json:"object"`
		Error  *apiErr `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) != nil {
		return nil
	}
	e := body.Error
	if e == nil {
		if body.Object != "error" {
			return nil
		}
		e = &body.apiErr
	}
	status := errorTypeStatus(e.Type)
	if code, err := strconv.Atoi(strings.Trim(string(e.Code), `"`)); err == nil && code >= 400 && code <= 599 {
		status = code
	}
	msg := cmp.Or(e.Message, e.Type, "the server sent an error with HTTP 200")
	return &llm.StatusError{Backend: "openai", StatusCode: status, Message: wire.ServerMessage(msg)}
}

// errorTypeStatus is the HTTP status of an error type as OpenAI and the
// servers that imitate it (vLLM's exception names, OpenRouter) name them.
// An unknown type is a server error: worth a retry, like the server_error
// it most likely is.
func errorTypeStatus(typ string) int {
	t := strings.ToLower(strings.ReplaceAll(typ, "_", ""))
	switch {
	case strings.Contains(t, "ratelimit"), strings.Contains(t, "toomanyrequests"), t == "insufficientquota":
		return http.StatusTooManyRequests
	case strings.Contains(t, "overload"), strings.Contains(t, "unavailable"):
		return http.StatusServiceUnavailable
	case strings.Contains(t, "invalidrequest"), strings.Contains(t, "badrequest"), t == "invalidvalue":
		return http.StatusBadRequest
	case strings.Contains(t, "authentication"), strings.Contains(t, "unauthorized"), t == "invalidapikey":
		return http.StatusUnauthorized
	case strings.Contains(t, "permission"):
		return http.StatusForbidden
	case strings.Contains(t, "notfound"):
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// statusError turns an API error into an *[llm.StatusError] with the
// server's Retry-After (or OpenAI's Retry-After-Ms).
func statusError(ae *openai.Error, msg string, httpResp *http.Response) *llm.StatusError {
	res := cmp.Or(ae.Response, httpResp)
	retryAfter := wire.RetryAfter(res)
	if res != nil && retryAfter == 0 {
		if ms, perr := strconv.ParseFloat(res.Header.Get("Retry-After-Ms"), 64); perr == nil && ms > 0 {
			retryAfter = time.Duration(ms * float64(time.Millisecond))
		}
	}
	return &llm.StatusError{Backend: "openai", StatusCode: ae.StatusCode, RetryAfter: retryAfter, Message: msg, Err: ae}
}

// rejectsConstraint recognizes a 400 about the constraint: a server
// without json_schema response formats, strict tools or grammars.
func rejectsConstraint(c llm.Constraint, msg string) bool {
	msg = strings.ToLower(msg)
	switch c.Mode {
	case llm.ModeEnvelope:
		return strings.Contains(msg, "response_format") || strings.Contains(msg, "json_schema")
	case llm.ModeGrammar:
		return strings.Contains(msg, "grammar")
	case llm.ModeNative:
		return !c.BestEffort && strings.Contains(msg, "strict")
	}
	return false
}

// Embed returns one vector per text from /embeddings with
// [Options.EmbeddingModel].
func (b *Backend) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	data, err := wire.Embed(ctx, "openai", "EmbeddingModel", b.opts.EmbeddingModel, texts, func(ctx context.Context) ([]openai.Embedding, error) {
		var httpResp *http.Response
		res, err := b.client.Embeddings.New(ctx, openai.EmbeddingNewParams{
			Model:          openai.EmbeddingModel(b.opts.EmbeddingModel),
			Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
			EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
		}, option.WithResponseInto(&httpResp))
		if ae := (*openai.Error)(nil); errors.As(err, &ae) {
			return nil, statusError(ae, ae.Message, httpResp)
		}
		if err != nil {
			return nil, err
		}
		return res.Data, nil
	})
	if err != nil || data == nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for _, d := range data {
		if d.Index < 0 || int(d.Index) >= len(texts) || out[d.Index] != nil {
			return nil, fmt.Errorf("openai: embed: bad or repeated index %d", d.Index)
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		out[d.Index] = v
	}
	return out, nil
}
