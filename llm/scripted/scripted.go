// Package scripted is a deterministic [llm.Backend] that plays a script of
// replies, for tests, demos and users' tests of their own agents.
//
// A script is a list of Replies, played in order, one per Chat call. Each
// reply is rendered for the request's mode (an envelope in envelope modes,
// a native tool call in ModeNative) and then parsed exactly as the real
// adapters parse replies ([llm.ParseReply]), so a scripted model that names
// an unlisted tool or emits malformed JSON exercises the same failure
// paths as a real one. The backend records every Request it receives, so
// a test can assert what would have been sent to a model (for example
// that no unauthorized tool ever was). When the script runs out, Chat
// returns [ErrScriptExhausted].
package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/llm"
)

// ErrScriptExhausted is returned by Chat when every reply has been played.
var ErrScriptExhausted = errors.New("scripted: the script has no more replies")

// Reply is one scripted model reply. Build it with [Call], [Answer],
// [FindTools], [Text], [NativeCalls] or [Fail].
type Reply struct {
	render func(mode llm.Mode) (content string, calls []llm.ToolCall, err error)
	finish llm.FinishReason
	err    error
	desc   string
}

// Truncated returns r marked as cut off at the token limit
// (finish reason "length"), as a model that ran out of tokens is.
func (r Reply) Truncated() Reply {
	r.finish = llm.FinishLength
	r.desc += " (truncated)"
	return r
}

// String describes the reply, for failure messages.
func (r Reply) String() string { return r.desc }

// Call is a reply calling tool with args (a JSON object): the envelope
// {"action":"call",...} in envelope modes, a native tool call in ModeNative.
func Call(tool, args string) Reply {
	return Reply{desc: "call " + tool, render: func(mode llm.Mode) (string, []llm.ToolCall, error) {
		if mode == llm.ModeNative {
			return "", []llm.ToolCall{{ID: "call_0", Name: tool, Arguments: json.RawMessage(args)}}, nil
		}
		raw, err := json.Marshal(struct {
			Action    string          `json:"action"`
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
		}{"call", tool, json.RawMessage(args)})
		if err != nil {
			return "", nil, fmt.Errorf("scripted: Call(%q): arguments are not JSON: %w", tool, err)
		}
		return string(raw), nil, nil
	}}
}

// Answer is a reply answering the user: the envelope {"action":"answer",...}
// in envelope modes, plain content in ModeNative.
func Answer(text string) Reply {
	return Reply{desc: "answer", render: func(mode llm.Mode) (string, []llm.ToolCall, error) {
		if mode == llm.ModeNative {
			return text, nil, nil
		}
		raw, _ := json.Marshal(map[string]string{"action": "answer", "text": text})
		return string(raw), nil, nil
	}}
}

// FindTools is a reply asking for more tools: the envelope
// {"action":"find_tools",...}. In ModeNative it is a call to a tool named
// "find_tools" with {"query": query}, which the request must list.
func FindTools(query string) Reply {
	return Reply{desc: "find_tools", render: func(mode llm.Mode) (string, []llm.ToolCall, error) {
		if mode == llm.ModeNative {
			args, _ := json.Marshal(map[string]string{"query": query})
			return "", []llm.ToolCall{{ID: "call_0", Name: "find_tools", Arguments: args}}, nil
		}
		raw, _ := json.Marshal(map[string]string{"action": "find_tools", "query": query})
		return string(raw), nil, nil
	}}
}

// Text is a reply whose output is raw, verbatim, in every mode: use it for
// malformed or hostile output.
func Text(raw string) Reply {
	return Reply{desc: "text", render: func(llm.Mode) (string, []llm.ToolCall, error) { return raw, nil, nil }}
}

// NativeCalls is a reply made of these native tool calls, verbatim, in
// every mode.
func NativeCalls(calls ...llm.ToolCall) Reply {
	return Reply{desc: "native calls", render: func(llm.Mode) (string, []llm.ToolCall, error) { return "", calls, nil }}
}

// Fail is a reply that is the error err instead of a model output (an
// *[llm.StatusError] for a 429, an *[llm.ConstraintError], ...).
func Fail(err error) Reply {
	return Reply{desc: "error: " + err.Error(), err: err}
}

// Options configures a [Backend]. A nil *Options means all defaults.
type Options struct {
	// Check, when set, is called with each request before its reply is
	// played (i counts from 0). Its error is returned by Chat, and the
	// reply is still consumed.
	Check func(i int, req *llm.Request) error
}

// Backend plays a script. It is safe for concurrent use; concurrent Chat
// calls take replies in the order they lock the script.
type Backend struct {
	mu       sync.Mutex
	script   []Reply
	next     int
	requests []*llm.Request
	check    func(int, *llm.Request) error
}

var _ llm.Backend = (*Backend)(nil)

// New returns a [Backend] that plays replies in order.
func New(replies []Reply, opts *Options) *Backend {
	b := &Backend{script: append([]Reply(nil), replies...)}
	if opts != nil {
		b.check = opts.Check
	}
	return b
}

// Name returns "scripted".
func (b *Backend) Name() string { return "scripted" }

// Chat records req, runs the Check hook and plays the next reply.
func (b *Backend) Chat(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	i := len(b.requests)
	b.requests = append(b.requests, req.Clone())
	var (
		reply Reply
		ok    = b.next < len(b.script)
	)
	if ok {
		reply = b.script[b.next]
		b.next++
	}
	b.mu.Unlock()

	if b.check != nil {
		if err := b.check(i, req); err != nil {
			return nil, fmt.Errorf("scripted: request %d: %w", i, err)
		}
	}
	if !ok {
		return nil, fmt.Errorf("%w (request %d; the script had %d)", ErrScriptExhausted, i, len(b.script))
	}
	if reply.err != nil {
		return nil, reply.err
	}
	content, calls, err := reply.render(req.Constraint.Mode)
	if err != nil {
		return nil, err
	}
	if req.OnDelta != nil && content != "" {
		req.OnDelta(content)
	}
	finish := reply.finish
	if finish == "" {
		finish = llm.FinishStop
		if len(calls) > 0 {
			finish = llm.FinishToolCalls
		}
	}
	resp := &llm.Response{
		Message:      llm.Message{Role: llm.RoleAssistant, Content: content, ToolCalls: calls},
		FinishReason: finish,
		Usage: llm.Usage{
			ToolDefinitionTokens: toolDefinitionTokens(req),
			CatalogTokens:        req.CatalogTokens,
			CompletionTokens:     tokens.Estimate(content),
		},
	}
	if req.Constraint.Mode != llm.ModeNative {
		resp.Raw = content
	}
	return resp, llm.ParseReply(req, resp)
}

// toolDefinitionTokens counts what an envelope-mode adapter would send for
// the tools: the system-prompt tool list and the envelope schema (in
// ModeNative: the tools' names, descriptions and schemas as JSON).
func toolDefinitionTokens(req *llm.Request) int {
	if req.Constraint.Mode == llm.ModeNative {
		n := 0
		for _, t := range req.Tools {
			data, _ := json.Marshal(t)
			n += tokens.Estimate(string(data))
		}
		return n
	}
	n := llm.ToolPromptTokens(req.Tools)
	if req.Constraint.Mode == llm.ModeGrammar {
		return n + tokens.Estimate(req.Constraint.GBNF)
	}
	return n + tokens.Estimate(string(req.Constraint.EnvelopeSchema))
}

// Requests returns copies of every request received, in order.
func (b *Backend) Requests() []*llm.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*llm.Request, len(b.requests))
	for i, r := range b.requests {
		out[i] = r.Clone()
	}
	return out
}

// Remaining returns how many replies have not been played.
func (b *Backend) Remaining() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.script) - b.next
}

// String describes the script's position, for failure messages.
func (b *Backend) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return "scripted backend at reply " + strconv.Itoa(b.next) + " of " + strconv.Itoa(len(b.script))
}
