package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidOutput marks a reply that cannot be acted on. Every
// *[OutputError] and *[RepairError] matches it with [errors.Is].
var ErrInvalidOutput = errors.New("llm: invalid model output")

// OutputProblem classifies an *[OutputError]. The values are stable and
// bounded: they label metrics.
type OutputProblem string

// The kinds of unusable replies.
const (
	ProblemMalformed        OutputProblem = "malformed"         // not the expected shape (not an envelope, bad JSON)
	ProblemUnknownTool      OutputProblem = "unknown_tool"      // names a tool outside [Request.Tools]
	ProblemTruncated        OutputProblem = "truncated"         // stopped at the token limit
	ProblemTooManyCalls     OutputProblem = "too_many_calls"    // more than one native tool call
	ProblemEmpty            OutputProblem = "empty"             // no text and no call
	ProblemInvalidArguments OutputProblem = "invalid_arguments" // rejected by the Validate hook
	ProblemCallRequired     OutputProblem = "call_required"     // an answer where [Request.RequireCall] asked for a call
	ProblemRefused          OutputProblem = "refused"           // the model refused ([FinishRefusal]); not repaired
)

// OutputError is a reply the model produced that must not be acted on.
type OutputError struct {
	Problem OutputProblem
	// Reason is one line for the model and the log. It never names a tool
	// outside the request's shortlist.
	Reason string
	// Raw is the model's output as received, for the audit.
	Raw string
	// Err is the underlying error, if any (a parse error, the Validate
	// hook's error).
	Err error
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("llm: invalid model output (%s): %s", e.Problem, e.Reason)
}

// Unwrap returns [ErrInvalidOutput] and the underlying error.
func (e *OutputError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidOutput}
	}
	return []error{ErrInvalidOutput, e.Err}
}

// ParseReply interprets resp, as received for req, into resp.Action and
// the matching field (Calls, Answer or FindTools). Backends call it on
// every reply; Raw, [Message], [FinishReason] and, in [ModeNative],
// [Message.ToolCalls] must be set before.
//
// In [ModeNative] an empty resp.Raw is filled from the message: its content
// when it made no call, else {"content","tool_calls":[{"name","arguments"}]}.
// A native call's arguments sent as "" or null (a no-argument call, as vLLM
// and other OpenAI-compatible servers send it) are read as {}.
// A native reply without calls whose text is a call in a chat template's
// own syntax (Hermes/Qwen <tool_call>, Llama <|python_tag|>, Mistral
// [TOOL_CALLS]), as a server without a tool-call parser for the model
// passes it on, is read as that call, with the same checks, and
// resp.Message becomes the call.
//
// A truncated reply, a reply that is not of the mode's shape, or one that
// names a tool outside req.Tools is an *[OutputError], and then resp.Calls,
// Answer and FindTools are cleared: nothing in resp can be executed.
func ParseReply(req *Request, resp *Response) error {
	resp.Action, resp.Calls, resp.Answer, resp.FindTools = "", nil, "", ""
	if req.Constraint.Mode == ModeNative && resp.Raw == "" {
		resp.Raw = nativeRaw(resp.Message)
	}
	err := parseReply(req, resp)
	if err != nil {
		resp.Action, resp.Calls, resp.Answer, resp.FindTools = "", nil, "", ""
	}
	return err
}

func parseReply(req *Request, resp *Response) error {
	if resp.FinishReason == FinishLength {
		reason := "the reply was cut off at the token limit before it was complete; reply again, shorter"
		if req.MaxTokens > 0 {
			reason = fmt.Sprintf("the reply was cut off at the token limit (%d tokens) before it was complete; reply again, shorter", req.MaxTokens)
		}
		return &OutputError{Problem: ProblemTruncated, Reason: reason, Raw: resp.Raw}
	}
	if resp.FinishReason == FinishRefusal && !refusalAnswer(req, resp) {
		return &OutputError{Problem: ProblemRefused, Raw: resp.Raw,
			Reason: "the model refused to reply (finish reason refusal); nothing in the reply can be used"}
	}
	if req.Constraint.Mode == ModeNative {
		return parseNative(req, resp)
	}
	if len(resp.Message.ToolCalls) > 0 {
		return &OutputError{Problem: ProblemMalformed, Raw: resp.Raw,
			Reason: "reply with one JSON object as described, not a native tool call"}
	}
	env, err := ParseEnvelope([]byte(resp.Raw))
	if err != nil {
		return &OutputError{Problem: ProblemMalformed, Raw: resp.Raw, Err: err,
			Reason: strings.TrimPrefix(err.Error(), "llm: ") + "; reply with exactly one JSON object as described"}
	}
	resp.Action = env.Action
	switch env.Action {
	case ActionCall:
		if _, ok := req.Tool(env.Tool); !ok {
			return unknownTool(req, resp.Raw)
		}
		resp.Calls = []ToolCall{{Name: env.Tool, Arguments: env.Arguments}}
	case ActionAnswer:
		if req.RequireCall {
			return callRequired(resp.Raw)
		}
		resp.Answer = env.Text
	case ActionFindTools:
		resp.FindTools = env.Query
	}
	return nil
}

// refusalAnswer reports whether a refused reply is an answer to pass on:
// in native mode, a text without calls (OpenAI's `refusal` message, a
// model's own "I can't help with that") where an answer may be given.
// A refusal with no text, a call, or text where an envelope was asked for
// is not: a stopped stream's partial call or envelope must not be read.
func refusalAnswer(req *Request, resp *Response) bool {
	return req.Constraint.Mode == ModeNative && !req.RequireCall && len(resp.Message.ToolCalls) == 0 &&
		strings.TrimSpace(resp.Message.Content) != ""
}

func parseNative(req *Request, resp *Response) error {
	calls := resp.Message.ToolCalls
	if len(calls) == 0 {
		written, err := textCalls(resp.Message.Content)
		if err != nil {
			return &OutputError{Problem: ProblemMalformed, Raw: resp.Raw, Err: err,
				Reason: "the reply wrote a tool call as text that could not be read (" + err.Error() + "); call the tool with its name and a JSON object of arguments"}
		}
		if written != nil {
			// The conversation keeps it as the call it is, so that its
			// result can follow it.
			resp.Message.Content, resp.Message.ToolCalls, calls = "", written, written
		}
	}
	switch {
	case len(calls) == 0 && strings.TrimSpace(resp.Message.Content) == "":
		return &OutputError{Problem: ProblemEmpty, Raw: resp.Raw, Reason: "the reply was empty; call one tool or answer"}
	case len(calls) == 0 && req.RequireCall:
		return callRequired(resp.Raw)
	case len(calls) == 0:
		resp.Action, resp.Answer = ActionAnswer, resp.Message.Content
		return nil
	case len(calls) > 1:
		return &OutputError{Problem: ProblemTooManyCalls, Raw: resp.Raw,
			Reason: fmt.Sprintf("the reply made %d tool calls; make exactly one call per step", len(calls))}
	}
	call := calls[0]
	if _, ok := req.Callable(call.Name); !ok {
		return unknownTool(req, resp.Raw)
	}
	args := bytes.TrimSpace(call.Arguments)
	if len(args) == 0 || string(args) == "null" {
		// A no-argument call as vLLM, Gemini's OpenAI-compatible API and
		// other servers send it: "" or null where OpenAI sends "{}".
		args = []byte("{}")
	}
	if err := checkJSON(args); err != nil || !bytes.HasPrefix(args, []byte("{")) {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return &OutputError{Problem: ProblemMalformed, Raw: resp.Raw, Err: err,
			Reason: fmt.Sprintf("the arguments of the call to %s are not a valid JSON object: %v", call.Name, err)}
	}
	call.Arguments = args
	resp.Action, resp.Calls = ActionCall, []ToolCall{call}
	return nil
}

func callRequired(raw string) error {
	return &OutputError{Problem: ProblemCallRequired, Raw: raw,
		Reason: "this step must call one of the available tools, not answer; call one"}
}

// unknownTool is the repair of a call of a tool the request does not
// offer. It names what the model may call: the shortlist, and in deferred
// loading the tools a search has loaded, not the search tool, which some
// APIs show under another name (the Responses API's tool_search); it says
// to search when there is a search.
func unknownTool(req *Request, raw string) error {
	avail := "none"
	if names := req.CallableNames(); len(names) > 0 {
		avail = strings.Join(names, ", ")
	}
	reason := "the reply named a tool that is not available for this step; available tools: " + avail
	if req.searches() {
		reason += "; search for the tool you need before calling it"
	}
	return &OutputError{Problem: ProblemUnknownTool, Raw: raw, Reason: reason}
}

func nativeRaw(m Message) string {
	if len(m.ToolCalls) == 0 {
		return m.Content
	}
	type call struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	body := struct {
		Content   string `json:"content,omitempty"`
		ToolCalls []call `json:"tool_calls"`
	}{Content: m.Content}
	for _, c := range m.ToolCalls {
		body.ToolCalls = append(body.ToolCalls, call{c.Name, string(c.Arguments)})
	}
	data, _ := json.Marshal(body)
	return string(data)
}
