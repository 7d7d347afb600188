package openai

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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/wire"
)

// ResponsesBackend is the [llm.Backend] for OpenAI's Responses API
// (/v1/responses). It sends the whole conversation every time (store:
// false), so the prompt cache sees one growing prefix.
//
// How each mode is constrained:
//
//   - llm.ModeNative: function tools with `strict: true` from
//     ToolSpec.StrictParameters and `parallel_tool_calls: false`. With
//     Request.Deferred, the shortlist's search tool (ToolSpec.Search) is
//     sent as a client-executed `tool_search` tool (the API names it so;
//     it has no name of its own), and every deferred tool as a function
//     with `defer_loading: true`, inside a `namespace` tool per
//     ToolSpec.Namespace (its MCP server; a tool without one stands
//     alone), as OpenAI's tool-search guide recommends: the model sees the
//     namespaces' names and descriptions, not the functions. When the
//     model searches (a tool_search_call item, returned as a call of the
//     search tool), the runtime answers with Message.ToolReferences and
//     the backend sends those tools' definitions, in their namespaces, in
//     a `tool_search_output` item, in the conversation, so the
//     instructions and the tools before it stay the same. A call of a
//     namespaced function carries its `namespace`, which goes back with
//     the call in later requests.
//   - llm.ModeEnvelope: `text.format` json_schema strict with the
//     envelope schema (wrapped in a root object, see llm.WrapEnvelopeSchema).
//   - llm.ModeGrammar: the Responses API takes no grammar; Chat returns an
//     *llm.ConstraintError.
//
// It shares [Options] with the Chat Completions [Backend] (EmbeddingModel and
// LegacyMaxTokens do not apply). It is safe for concurrent use.
type ResponsesBackend struct {
	client openai.Client
	model  string
	idle   time.Duration // Options.StreamIdleTimeout
}

var _ llm.Backend = (*ResponsesBackend)(nil)

// NewResponses returns a [ResponsesBackend] for model (e.g. "gpt-5-mini").
func NewResponses(model string, opts *Options) (*ResponsesBackend, error) {
	b, err := New(model, opts)
	if err != nil {
		return nil, err
	}
	return &ResponsesBackend{client: b.client, model: model, idle: b.opts.StreamIdleTimeout}, nil
}

// Name returns "openai-responses".
func (b *ResponsesBackend) Name() string { return "openai-responses" }

// outputItem is the part of a Responses output item the backend reads;
// arguments are a string for function calls and an object for tool
// searches, so they are taken raw.
type outputItem struct {
	Type      string          `json:"type"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

// Chat sends req to /responses, streaming (SSE) when req.OnDelta is set.
func (b *ResponsesBackend) Chat(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	params, ropts, search, defTokens, err := b.buildRequest(req)
	if err != nil {
		return nil, err
	}
	r, httpResp, err := wire.Send(ctx, params, ropts, req.OnDelta, option.WithResponseInto, b.client.Responses.New, b.stream)
	if err != nil {
		return nil, responsesError(ctx, req, err, httpResp)
	}
	if r.Status == "failed" {
		return nil, failedError(string(r.Error.Code), r.Error.Message)
	}
	msg := llm.Message{Role: llm.RoleAssistant}
	var text, refusal strings.Builder
	for _, raw := range r.Output {
		var it outputItem
		if err := json.Unmarshal([]byte(raw.RawJSON()), &it); err != nil {
			return nil, fmt.Errorf("openai: responses: output item: %w", err)
		}
		if it.CallID == "" {
			// A server that leaves the id out: the call's result must
			// still answer it by an id, as in Chat.
			it.CallID = "call_" + strconv.Itoa(len(msg.ToolCalls))
		}
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				text.WriteString(c.Text)
				refusal.WriteString(c.Refusal)
			}
		case "function_call":
			var args string
			if json.Unmarshal(it.Arguments, &args) != nil {
				args = string(it.Arguments)
			}
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: it.CallID, Name: it.Name, Arguments: json.RawMessage(args)})
		case "tool_search_call":
			if search == "" {
				return nil, errors.New("openai: responses: a tool_search_call without a search tool in the request")
			}
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: it.CallID, Name: search, Arguments: append(json.RawMessage(nil), it.Arguments...)})
		}
	}
	msg.Content = text.String()
	refused := msg.Content == "" && len(msg.ToolCalls) == 0 && refusal.Len() > 0
	if refused {
		msg.Content = refusal.String()
	}
	resp := &llm.Response{
		Message: msg,
		Usage: llm.Usage{
			PromptTokens:         int(r.Usage.InputTokens),
			CompletionTokens:     int(r.Usage.OutputTokens),
			ToolDefinitionTokens: defTokens,
			CatalogTokens:        req.CatalogTokens,
			CachedPromptTokens:   int(r.Usage.InputTokensDetails.CachedTokens),
			CacheWriteTokens:     int(r.Usage.InputTokensDetails.CacheWriteTokens),
		},
		FinishReason: llm.FinishStop,
	}
	switch {
	case r.Status == "incomplete" && r.IncompleteDetails.Reason == "max_output_tokens":
		resp.FinishReason = llm.FinishLength
	case r.Status == "incomplete" && r.IncompleteDetails.Reason == "content_filter", refused:
		resp.FinishReason = llm.FinishRefusal
	case r.Status == "incomplete":
		resp.FinishReason = llm.FinishReason(r.IncompleteDetails.Reason)
	case len(msg.ToolCalls) > 0:
		resp.FinishReason = llm.FinishToolCalls
	}
	if req.Constraint.Mode == llm.ModeEnvelope {
		resp.Raw = wire.EnvelopeRaw(req, msg.Content)
	}
	if refused {
		resp.Raw = msg.Content
	}
	return resp, llm.ParseReply(req, resp)
}

// errStreamEnd stops reading a stream at its terminal event.
var errStreamEnd = errors.New("openai: responses: the stream's terminal event")

func (b *ResponsesBackend) stream(ctx context.Context, params responses.ResponseNewParams, onDelta func(string), ropts []option.RequestOption) (*responses.Response, error) {
	var final *responses.Response
	ctx, idle := wire.WatchIdle(ctx, "openai-responses", b.idle)
	defer idle.Stop()
	err := wire.Drain(b.client.Responses.NewStreaming(ctx, params, ropts...), idle, func(ev responses.ResponseStreamEventUnion) error {
		switch ev.Type {
		case "response.output_text.delta":
			if ev.Delta != "" {
				onDelta(ev.Delta)
			}
		case "response.completed", "response.incomplete", "response.failed":
			r := ev.Response
			final = &r
			// The reply is complete: what a server sends after it (a
			// late delta, an error) is not part of it.
			return errStreamEnd
		case "error":
			return failedError(ev.Code, ev.Message)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStreamEnd) {
		return nil, err
	}
	if final == nil {
		return nil, errors.New("the stream ended without the response")
	}
	return final, nil
}

// inputItem is one item of the request's input, written as the API's
// JSON (easy messages, function calls and outputs, tool searches).
type inputItem struct {
	Type      string          `json:"type,omitempty"`
	Role      string          `json:"role,omitempty"`
	Content   string          `json:"content,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Namespace string          `json:"namespace,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Output    *string         `json:"output,omitempty"`
	Execution string          `json:"execution,omitempty"`
	Status    string          `json:"status,omitempty"`
	// Tools, the loaded tools of a tool_search_output, is sent even
	// empty (the API requires it); other items leave it nil.
	Tools []functionTool `json:"tools,omitzero"`
}

// functionTool is one entry of the tools array or of a tool search's
// output: a function, the client-executed tool_search, or a namespace
// holding functions (Tools).
type functionTool struct {
	Type         string          `json:"type"`
	Name         string          `json:"name,omitempty"`
	Description  string          `json:"description,omitempty"`
	Parameters   json.RawMessage `json:"parameters,omitempty"`
	Strict       *bool           `json:"strict,omitempty"`
	DeferLoading bool            `json:"defer_loading,omitempty"`
	Execution    string          `json:"execution,omitempty"`
	Tools        []functionTool  `json:"tools,omitempty"`
}

// buildRequest translates req; it returns the name of the search tool
// (deferred mode) and the tokens of the tool definitions.
func (b *ResponsesBackend) buildRequest(req *llm.Request) (responses.ResponseNewParams, []option.RequestOption, string, int, error) {
	var p responses.ResponseNewParams
	if err := req.Validate(); err != nil {
		return p, nil, "", 0, err
	}
	p.Model = shared.ResponsesModel(b.model)
	p.Store = param.NewOpt(false)
	if req.MaxTokens > 0 {
		p.MaxOutputTokens = param.NewOpt(int64(req.MaxTokens))
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	var (
		ropts     []option.RequestOption
		defTokens int
		search    string
		tools     []functionTool
		msgs      = req.Messages
	)
	strict := !req.Constraint.BestEffort
	function := func(t llm.ToolSpec) (functionTool, error) {
		schema, err := wire.ToolSchema(t, strict)
		if err != nil {
			return functionTool{}, err
		}
		return functionTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema, Strict: &strict}, nil
	}
	switch req.Constraint.Mode {
	case llm.ModeGrammar:
		return p, nil, "", 0, wire.NoGrammar("openai-responses", "Responses API")
	case llm.ModeEnvelope:
		msgs = llm.WithToolPrompt(req)
		schema, tokens, err := wire.EnvelopeSchema(req)
		if err != nil {
			return p, nil, "", 0, err
		}
		format := map[string]any{"type": "json_schema", "name": envelopeSchemaName, "strict": true, "schema": schema}
		ropts = append(ropts, option.WithJSONSet("text", map[string]any{"format": format}))
		defTokens = tokens
	case llm.ModeNative:
		for _, t := range req.Tools {
			if t.Search && len(req.Deferred) > 0 {
				search = t.Name
				schema, err := wire.Compact(t.Parameters, "Tools "+t.Name)
				if err != nil {
					return p, nil, "", 0, err
				}
				tools = append(tools, functionTool{Type: "tool_search", Execution: "client", Description: t.Description, Parameters: schema})
				continue
			}
			ft, err := function(t)
			if err != nil {
				return p, nil, "", 0, err
			}
			tools = append(tools, ft)
		}
		if len(req.Deferred) > 0 && search == "" {
			return p, nil, "", 0, fmt.Errorf("%w: Deferred tools need a search tool (ToolSpec.Search) among Tools", llm.ErrInvalidRequest)
		}
		deferred, err := grouped(req.Deferred, req.Deferred, true, function)
		if err != nil {
			return p, nil, "", 0, err
		}
		tools = append(tools, deferred...)
		if len(tools) > 0 {
			p.ParallelToolCalls = param.NewOpt(false)
			if req.RequireCall {
				p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{
					OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptionsRequired)}
			}
			data, _ := json.Marshal(tools)
			defTokens = tokens.Estimate(string(data))
			ropts = append(ropts, option.WithJSONSet("tools", json.RawMessage(data)))
		}
	}

	var instructions []string
	var input []inputItem
	// searchCalls says, by call id, whether the latest call with that id
	// is a search: a result answers the call it follows, also when a
	// server gives a function call the id of an earlier search.
	searchCalls := map[string]bool{}
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleSystem:
			if m.Content != "" {
				instructions = append(instructions, m.Content)
			}
		case llm.RoleAssistant:
			if m.Content != "" {
				input = append(input, inputItem{Type: "message", Role: "assistant", Content: m.Content})
			}
			for _, c := range m.ToolCalls {
				searchCalls[c.ID] = search != "" && c.Name == search
				if searchCalls[c.ID] {
					args := c.Arguments
					if !json.Valid(args) {
						args = json.RawMessage(`{}`)
					}
					input = append(input, inputItem{Type: "tool_search_call", CallID: c.ID, Arguments: args, Execution: "client", Status: "completed"})
					continue
				}
				args, _ := json.Marshal(string(c.Arguments))
				input = append(input, inputItem{Type: "function_call", CallID: c.ID, Name: c.Name, Namespace: namespaceOf(req.Deferred, c.Name), Arguments: args})
			}
		case llm.RoleTool:
			if searchCalls[m.ToolCallID] {
				var loaded []llm.ToolSpec
				for _, name := range m.ToolReferences {
					if d, ok := wire.DeferredTool(req.Deferred, name); ok {
						loaded = append(loaded, d)
					}
				}
				out := inputItem{Type: "tool_search_output", CallID: m.ToolCallID, Execution: "client", Status: "completed", Tools: []functionTool{}}
				fts, err := grouped(loaded, req.Deferred, false, function)
				if err != nil {
					return p, nil, "", 0, err
				}
				out.Tools = append(out.Tools, fts...)
				input = append(input, out)
				continue
			}
			content := m.Content
			input = append(input, inputItem{Type: "function_call_output", CallID: m.ToolCallID, Output: &content})
		default:
			input = append(input, inputItem{Type: "message", Role: "user", Content: m.Content})
		}
	}
	if len(instructions) > 0 {
		p.Instructions = param.NewOpt(strings.Join(instructions, "\n\n"))
	}
	data, err := json.Marshal(input)
	if err != nil {
		return p, nil, "", 0, fmt.Errorf("%w: %v", llm.ErrInvalidRequest, err)
	}
	ropts = append(ropts, option.WithJSONSet("input", json.RawMessage(data)))
	return p, ropts, search, defTokens, nil
}

// grouped returns specs as Responses tools, deferLoading set on each:
// the specs with a Namespace inside one namespace tool per namespace, at
// the place of its first tool, the others as they are. A namespace's
// description is the same wherever it is sent, made from every tool of
// all (the request's deferred tools) in it.
func grouped(specs, all []llm.ToolSpec, deferLoading bool, function func(llm.ToolSpec) (functionTool, error)) ([]functionTool, error) {
	var out []functionTool
	at := map[string]int{}
	for _, s := range specs {
		ft, err := function(s)
		if err != nil {
			return nil, err
		}
		ft.DeferLoading = deferLoading
		if s.Namespace == "" {
			out = append(out, ft)
			continue
		}
		i, ok := at[s.Namespace]
		if !ok {
			i = len(out)
			at[s.Namespace] = i
			out = append(out, functionTool{Type: "namespace", Name: s.Namespace, Description: namespaceDescription(s.Namespace, all)})
		}
		out[i].Tools = append(out[i].Tools, ft)
	}
	return out, nil
}

// namespaceDescription is what the model reads of a namespace before a
// search loads its functions: the names of the tools in it.
func namespaceDescription(ns string, all []llm.ToolSpec) string {
	var names []string
	for _, t := range all {
		if t.Namespace == ns {
			names = append(names, t.Name)
		}
	}
	return fmt.Sprintf("Tools of %s, loaded by tool_search: %s.", ns, strings.Join(names, ", "))
}

// namespaceOf is the Namespace of the deferred tool named name, "" when
// there is none.
func namespaceOf(deferred []llm.ToolSpec, name string) string {
	d, _ := wire.DeferredTool(deferred, name)
	return d.Namespace
}

// failedError is the *[llm.StatusError] of an error the Responses API
// reports after HTTP 200 (a failed response, a stream's `error` event),
// with the status the request would have had had it failed at once, so
// that [llm.Checked] retries a server error and not an invalid prompt.
func failedError(code, message string) *llm.StatusError {
	status := errorTypeStatus(code)
	switch {
	case code == "vector_store_timeout":
		status = http.StatusGatewayTimeout
	case code == "invalid_prompt", code == "data_residency_mismatch", strings.HasSuffix(code, "_policy"),
		strings.HasSuffix(code, "_policy_violation"), strings.Contains(code, "image"):
		// About the request (its prompt, its images, the usage
		// policies): asked again, it fails again.
		status = http.StatusBadRequest
	}
	msg := cmp.Or(message, code, "the response failed")
	return &llm.StatusError{Backend: "openai-responses", StatusCode: status, Message: wire.ServerMessage(msg)}
}

// responsesError maps openai-go's errors to llm's. A refusal of deferred
// loading (a model without tool_search, an API without namespaces) is a
// *[llm.ConstraintError] with Deferred set.
func responsesError(ctx context.Context, req *llm.Request, err error, httpResp *http.Response) error {
	err = apiError(ctx, "openai-responses", "responses", req.Constraint.Mode, err, httpResp, func(msg string) bool {
		return rejectsConstraint(req.Constraint, msg) || wire.RejectsDeferred(req, msg)
	})
	if ce := (*llm.ConstraintError)(nil); errors.As(err, &ce) && wire.RejectsDeferred(req, ce.Message) {
		ce.Deferred = true
	}
	return err
}
