// Package ollama is the [llm.Backend] for Ollama's /api/chat and /api/embed,
// built on Ollama's own client, github.com/ollama/ollama/api.
//
// In [llm.ModeEnvelope] (the default) the request carries the envelope JSON
// Schema in `format`, which Ollama enforces while sampling, and the
// shortlist's schemas in the system prompt. It also clears the model's stop
// sequences (options.stop = []): under `format` the constraint decides
// where the reply ends (the model's end-of-generation token is still
// honoured once the JSON object is complete), while a stop string matched
// as text cuts the reply wherever the model happens to write it. A chat
// template's "<|user|>" written inside an answer's JSON string cut
// TinyLlama's reply to `{"action":"answer","text": "`, which no repair can
// fix at temperature 0. A reply that Ollama ends without its final message
// (its server stops a generation that repeats one token more than 30 times
// and answers with the text so far and "done": false) is a truncated
// *[llm.OutputError], repaired like one cut off at the token limit. In
// [llm.ModeNative] it carries
// the shortlist as `tools` and reads `message.tool_calls`; Ollama does not
// enforce tool schemas (and its tool type keeps only type, description,
// enum, items, properties, required and anyOf of each parameter), so use
// [llm.Checked] with a Validate hook there. Ollama's API takes no GBNF:
// [llm.ModeGrammar] is a *[llm.ConstraintError].
//
// The server is OLLAMA_HOST, read exactly as [api.ClientFromEnvironment]
// reads it, unless [Options.BaseURL] is set.
package ollama

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"

	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/wire"
)

// Options configures a [Backend]. A nil *Options means all defaults.
type Options struct {
	// BaseURL is the server, e.g. "http://localhost:11434". "" means
	// OLLAMA_HOST (default http://127.0.0.1:11434).
	BaseURL string
	// HTTPClient sends the requests. nil means [http.DefaultClient].
	HTTPClient *http.Client
	// EmbedModel is the model Embed uses. "" makes Embed fail.
	EmbedModel string
	// NumCtx is the context window to request (num_ctx). 0 means the
	// model's default.
	NumCtx int
	// KeepAlive is how long the server keeps the model loaded after a
	// request. 0 means the server's default.
	KeepAlive time.Duration
	// Temperature is the sampling temperature of requests that set none
	// (options.temperature). nil means the model's default (0.8 for most).
	Temperature *float64
	// Seed is the sampling seed of requests that set none (options.seed);
	// with Temperature 0 it makes runs repeatable. nil means none.
	Seed *int64
	// StreamIdleTimeout bounds the silence of a streamed reply
	// (Request.OnDelta set): the time to its first event and between two;
	// a keep-alive comment is no event. Past it the request fails with an
	// [*llm.IdleError], which [llm.Checked] retries. 0 means
	// [llm.DefaultStreamIdleTimeout] (5 minutes); negative means no bound
	// but the caller's context.
	StreamIdleTimeout time.Duration
}

// Backend talks to one Ollama server and model. It is safe for concurrent use.
type Backend struct {
	client *api.Client
	model  string
	opts   Options
}

var (
	_ llm.Backend  = (*Backend)(nil)
	_ llm.Embedder = (*Backend)(nil)
)

// New returns a [Backend] for model (e.g. "qwen3:8b") on the server that
// [Options.BaseURL] or OLLAMA_HOST names.
func New(model string, opts *Options) (*Backend, error) {
	o, err := wire.Options("ollama", model, opts)
	if err != nil {
		return nil, err
	}
	if o.NumCtx < 0 || o.KeepAlive < 0 {
		return nil, errors.New("ollama: Options.NumCtx and Options.KeepAlive must not be negative")
	}
	if err := wire.CheckTemperature("ollama", o.Temperature); err != nil {
		return nil, err
	}
	base := envconfig.Host() // what api.ClientFromEnvironment uses
	if o.BaseURL != "" {
		u, err := url.Parse(o.BaseURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("ollama: Options.BaseURL %q is not an absolute URL", o.BaseURL)
		}
		base = u
	}
	hc := wire.LimitReplies(o.HTTPClient, wire.MaxReplyBytes)
	// A copy whose transport notes Retry-After: api.StatusError drops headers.
	wrapped := *hc
	wrapped.Transport = retryAfterTransport{base: hc.Transport}
	return &Backend{client: api.NewClient(base, &wrapped), model: model, opts: o}, nil
}

// Name returns "ollama".
func (b *Backend) Name() string { return "ollama" }

// Chat sends req to /api/chat, streaming when req.OnDelta is set.
func (b *Backend) Chat(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	creq, defTokens, err := b.buildRequest(req)
	if err != nil {
		return nil, err
	}
	slot := &retryAfterSlot{}
	ctx = context.WithValue(ctx, retryAfterKey{}, slot)

	var (
		content   strings.Builder
		calls     []llm.ToolCall
		final     api.ChatResponse
		sawFinal  bool
		argsError error
	)
	// Only a stream is watched: a plain reply's first byte comes when the
	// whole reply is written.
	d := b.opts.StreamIdleTimeout
	if req.OnDelta == nil {
		d = -1
	}
	sctx, idle := wire.WatchIdle(ctx, "ollama", d)
	defer idle.Stop()
	err = b.client.Chat(sctx, creq, func(r api.ChatResponse) error {
		idle.Event()
		if r.Message.Content != "" {
			content.WriteString(r.Message.Content)
			if req.OnDelta != nil {
				req.OnDelta(r.Message.Content)
			}
		}
		for _, tc := range r.Message.ToolCalls {
			args, err := json.Marshal(tc.Function.Arguments)
			if err != nil && argsError == nil {
				argsError = err
			}
			id := tc.ID
			if id == "" {
				id = "call_" + strconv.Itoa(len(calls))
			}
			calls = append(calls, llm.ToolCall{ID: id, Name: tc.Function.Name, Arguments: args})
		}
		if r.Done {
			final, sawFinal = r, true
		}
		return nil
	})
	if err == nil && !sawFinal || err != nil && ctx.Err() == nil {
		// The client ends a stream quietly when its context ends.
		if ierr := idle.Err(nil); ierr != nil {
			return nil, fmt.Errorf("ollama: chat: %w", ierr)
		}
	}
	if err != nil {
		return nil, b.chatError(ctx, req, err, slot)
	}
	if argsError != nil {
		return nil, fmt.Errorf("ollama: chat: tool call arguments: %w", argsError)
	}
	if !sawFinal {
		// The client ends a stream quietly when the body breaks off
		// (cancellation included), so the missing done message is the sign.
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ollama: chat: %w", ctx.Err())
		}
		if content.Len() == 0 {
			return nil, errors.New("ollama: chat: the response ended before its final (done) message")
		}
		// Ollama's server stops a generation that repeats one token
		// (spaces trimmed) more than 30 times in a row without sending its
		// final message (llm/server.go, "token repeat limit reached"), and
		// then answers a non-streaming request with the text so far and
		// "done": false. A weak model looping inside a free string under
		// `format` does that. The reply is cut off, as at the token limit,
		// and is repaired the same way (CheckedBackend asks again under a
		// tighter constraint).
		raw := content.String()
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: raw}, Raw: raw,
				FinishReason: llm.FinishLength},
			&llm.OutputError{Problem: llm.ProblemTruncated, Raw: raw,
				Reason: "the reply was cut off before it was complete (the engine stopped it, as it does when a reply repeats itself); reply again, shorter"}
	}
	resp := &llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: content.String(), ToolCalls: calls},
		Usage: llm.Usage{
			PromptTokens:         final.PromptEvalCount,
			CompletionTokens:     final.EvalCount,
			ToolDefinitionTokens: defTokens,
			CatalogTokens:        req.CatalogTokens,
		},
		FinishReason: finishReason(final.DoneReason, len(calls) > 0),
	}
	if req.Constraint.Mode != llm.ModeNative {
		resp.Raw = resp.Message.Content
	}
	return resp, llm.ParseReply(req, resp)
}

func finishReason(done string, called bool) llm.FinishReason {
	switch {
	case done == "length":
		return llm.FinishLength
	case called:
		return llm.FinishToolCalls
	case done == "" || done == "stop":
		return llm.FinishStop
	}
	return llm.FinishReason(done)
}

// buildRequest translates req and counts the tokens of its tool definitions.
func (b *Backend) buildRequest(req *llm.Request) (*api.ChatRequest, int, error) {
	if err := req.Validate(); err != nil {
		return nil, 0, err
	}
	stream := req.OnDelta != nil
	creq := &api.ChatRequest{Model: b.model, Stream: &stream, Options: map[string]any{}}
	if req.MaxTokens > 0 {
		creq.Options["num_predict"] = req.MaxTokens
	}
	if t := cmp.Or(req.Temperature, b.opts.Temperature); t != nil {
		creq.Options["temperature"] = *t
	}
	if seed := cmp.Or(req.Seed, b.opts.Seed); seed != nil {
		creq.Options["seed"] = *seed
	}
	if b.opts.NumCtx > 0 {
		creq.Options["num_ctx"] = b.opts.NumCtx
	}
	if b.opts.KeepAlive > 0 {
		creq.KeepAlive = &api.Duration{Duration: b.opts.KeepAlive}
	}
	var (
		msgs      []llm.Message
		defTokens int
	)
	switch req.Constraint.Mode {
	case llm.ModeGrammar:
		return nil, 0, &llm.ConstraintError{Backend: "ollama", Mode: llm.ModeGrammar,
			Message: "the Ollama API takes no GBNF grammar; use ModeEnvelope (format) or ModeNative"}
	case llm.ModeEnvelope:
		msgs = llm.WithToolPrompt(req)
		creq.Format = req.Constraint.EnvelopeSchema
		creq.Options["stop"] = []string{}
		defTokens = tokens.Estimate(string(creq.Format)) + llm.ToolPromptTokens(req.Tools)
	case llm.ModeNative:
		msgs = req.Messages
		for _, t := range req.Tools {
			tool := api.Tool{Type: "function", Function: api.ToolFunction{Name: t.Name, Description: t.Description}}
			if err := json.Unmarshal(t.Parameters, &tool.Function.Parameters); err != nil {
				return nil, 0, fmt.Errorf("%w: Tools %s: Ollama cannot read the parameters schema: %v", llm.ErrInvalidRequest, t.Name, err)
			}
			creq.Tools = append(creq.Tools, tool)
			data, _ := json.Marshal(tool)
			defTokens += tokens.Estimate(string(data))
		}
	}
	for _, m := range msgs {
		am, err := apiMessage(m)
		if err != nil {
			return nil, 0, err
		}
		creq.Messages = append(creq.Messages, am)
	}
	return creq, defTokens, nil
}

func apiMessage(m llm.Message) (api.Message, error) {
	am := api.Message{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID}
	if m.Role == llm.RoleTool {
		am.ToolName = m.Name
	}
	for _, c := range m.ToolCalls {
		tc := api.ToolCall{ID: c.ID, Function: api.ToolCallFunction{Name: c.Name}}
		if err := json.Unmarshal(c.Arguments, &tc.Function.Arguments); err != nil {
			return api.Message{}, fmt.Errorf("%w: a message's call to %s has arguments that are not a JSON object", llm.ErrInvalidRequest, c.Name)
		}
		am.ToolCalls = append(am.ToolCalls, tc)
	}
	return am, nil
}

// chatError maps the client's errors to llm's.
func (b *Backend) chatError(ctx context.Context, req *llm.Request, err error, slot *retryAfterSlot) error {
	if ctx.Err() != nil {
		return fmt.Errorf("ollama: chat: %w", ctx.Err())
	}
	var se api.StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusBadRequest && rejectsConstraint(req.Constraint.Mode, se.ErrorMessage) {
		return &llm.ConstraintError{Backend: "ollama", Mode: req.Constraint.Mode, Message: se.ErrorMessage, Err: err}
	}
	return apiError("chat", err, slot)
}

// apiError maps an error of Ollama's client to llm's: a status the server
// answered is an *[llm.StatusError] (with the Retry-After slot recorded);
// anything else is wrapped, prefixed with the operation.
func apiError(op string, err error, slot *retryAfterSlot) error {
	if se := (api.StatusError{}); errors.As(err, &se) {
		return &llm.StatusError{Backend: "ollama", StatusCode: se.StatusCode, Message: se.ErrorMessage,
			RetryAfter: slot.get(), Err: err}
	}
	if ae := (api.AuthorizationError{}); errors.As(err, &ae) {
		return &llm.StatusError{Backend: "ollama", StatusCode: ae.StatusCode, Message: ae.Error(), Err: err}
	}
	return fmt.Errorf("ollama: %s: %w", op, err)
}

// ContextSize returns the context window, in tokens, that this Backend's
// requests run with: [Options.NumCtx] when set, else the model's num_ctx
// parameter (its Modelfile's PARAMETER num_ctx) as /api/show reports it.
// It returns 0 when neither says: the server then applies its own default
// (OLLAMA_CONTEXT_LENGTH), which no endpoint reports. runtime.Options'
// ContextTokens and FitContext take the result.
func (b *Backend) ContextSize(ctx context.Context) (int, error) {
	if b.opts.NumCtx > 0 {
		return b.opts.NumCtx, nil
	}
	slot := &retryAfterSlot{}
	resp, err := b.client.Show(context.WithValue(ctx, retryAfterKey{}, slot), &api.ShowRequest{Model: b.model})
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("ollama: show: %w", ctx.Err())
		}
		return 0, apiError("show", err, slot)
	}
	return numCtxParameter(resp.Parameters)
}

// numCtxParameter reads num_ctx from /api/show's parameters, one "name
// value" line each (the server writes values with Go's %#v, so a whole
// number may come as 2048 or 2048.0): 0 when the model sets none.
func numCtxParameter(params string) (int, error) {
	for line := range strings.Lines(params) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "num_ctx" {
			continue
		}
		var n float64
		var err error
		if len(f) == 2 {
			n, err = strconv.ParseFloat(f[1], 64)
		}
		if len(f) != 2 || err != nil || n < 1 || n > maxContextSize || n != math.Trunc(n) {
			return 0, fmt.Errorf("ollama: show: the model's num_ctx parameter %.40q is not a context size", strings.TrimSpace(line))
		}
		return int(n), nil
	}
	return 0, nil
}

// maxContextSize bounds a num_ctx the server reports: 2^24 tokens, above
// any model's window.
const maxContextSize = 1 << 24

// rejectsConstraint recognizes a 400 about the constraint: a server too
// old for a schema in `format` fails to decode it, and a model without
// tool support says "does not support tools".
func rejectsConstraint(mode llm.Mode, msg string) bool {
	msg = strings.ToLower(msg)
	switch mode {
	case llm.ModeEnvelope:
		return strings.Contains(msg, "format")
	case llm.ModeNative:
		return strings.Contains(msg, "does not support tools")
	}
	return false
}

// Embed returns one vector per text from /api/embed with [Options.EmbedModel].
func (b *Backend) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return wire.Embed(ctx, "ollama", "EmbedModel", b.opts.EmbedModel, texts, func(ctx context.Context) ([][]float32, error) {
		slot := &retryAfterSlot{}
		ctx = context.WithValue(ctx, retryAfterKey{}, slot)
		resp, err := b.client.Embed(ctx, &api.EmbedRequest{Model: b.opts.EmbedModel, Input: texts})
		if se := (api.StatusError{}); errors.As(err, &se) {
			return nil, &llm.StatusError{Backend: "ollama", StatusCode: se.StatusCode, Message: se.ErrorMessage,
				RetryAfter: slot.get(), Err: err}
		}
		if err != nil {
			return nil, err
		}
		return resp.Embeddings, nil
	})
}

// retryAfterTransport records the Retry-After header of the response into
// the slot its request's context carries.
type retryAfterTransport struct{ base http.RoundTripper }

type retryAfterKey struct{}

type retryAfterSlot struct {
	mu sync.Mutex
	d  time.Duration
}

func (s *retryAfterSlot) get() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.d
}

func (t retryAfterTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err == nil {
		if slot, ok := r.Context().Value(retryAfterKey{}).(*retryAfterSlot); ok {
			slot.mu.Lock()
			slot.d = llm.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
			slot.mu.Unlock()
		}
	}
	return resp, err
}
