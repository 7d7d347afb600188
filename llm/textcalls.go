package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// textCalls reads the tool calls a model wrote into its reply's text in
// its chat template's own syntax, which a server without a tool-call
// parser for that template (vLLM without --tool-call-parser, llama-server
// without --jinja, a proxy) passes on as content:
//
//	<tool_call>{"name": …, "arguments": {…}}</tool_call>   Hermes, Qwen
//	<|python_tag|>{"name": …, "parameters": {…}}             Llama 3.1+
//	[TOOL_CALLS][{"name": …, "arguments": {…}}]               Mistral
//
// It returns nil, nil when the text does not start with one of these
// markers (it is an answer), and an error when it does but is not one or
// more calls of that syntax. Nothing is trusted here: the calls go through
// the same shortlist and argument checks as the server's own.
func textCalls(content string) ([]ToolCall, error) {
	text := strings.TrimSpace(content)
	var raws []string
	switch {
	case strings.HasPrefix(text, "<tool_call>"):
		parts := strings.Split(text, "<tool_call>")[1:]
		for i, part := range parts {
			// The last closing tag may be missing: the server stopped at
			// the model's end token.
			body, rest, closed := strings.Cut(part, "</tool_call>")
			if strings.TrimSpace(rest) != "" || (!closed && i < len(parts)-1) {
				return nil, errors.New("text outside the <tool_call> tags")
			}
			raws = append(raws, body)
		}
	case strings.HasPrefix(text, "<|python_tag|>"):
		body := strings.TrimPrefix(text, "<|python_tag|>")
		body = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(body), "<|eom_id|>"), "<|eot_id|>")
		raws = append(raws, body)
	case strings.HasPrefix(text, "[TOOL_CALLS]"):
		body := strings.TrimSpace(strings.TrimPrefix(text, "[TOOL_CALLS]"))
		if !strings.HasPrefix(body, "[") {
			raws = append(raws, body)
			break
		}
		if err := checkJSON([]byte(body)); err != nil {
			return nil, err
		}
		var list []json.RawMessage
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			return nil, err
		}
		for _, r := range list {
			raws = append(raws, string(r))
		}
	default:
		return nil, nil
	}
	if len(raws) == 0 {
		return nil, errors.New("no call after the tool-call marker")
	}
	calls := make([]ToolCall, 0, len(raws))
	for i, raw := range raws {
		call, err := textCall([]byte(strings.TrimSpace(raw)))
		if err != nil {
			return nil, err
		}
		call.ID = "call_" + strconv.Itoa(i)
		calls = append(calls, call)
	}
	return calls, nil
}

// textCall reads one {"name", "arguments" | "parameters"} object; the
// arguments may be an object or a string holding one.
func textCall(raw []byte) (ToolCall, error) {
	if err := checkJSON(raw); err != nil {
		return ToolCall{}, err
	}
	var c struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(raw, &c); err != nil || c.Name == "" {
		return ToolCall{}, errors.New(`not a {"name", "arguments"} object`)
	}
	if len(c.Arguments) > 0 && len(c.Parameters) > 0 {
		return ToolCall{}, errors.New(`both "arguments" and "parameters"`)
	}
	args := c.Arguments
	if len(args) == 0 {
		args = c.Parameters
	}
	if bytes.HasPrefix(args, []byte(`"`)) {
		var s string
		if err := json.Unmarshal(args, &s); err != nil {
			return ToolCall{}, fmt.Errorf("arguments: %w", err)
		}
		args = json.RawMessage(s)
	}
	return ToolCall{Name: c.Name, Arguments: args}, nil
}
