package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/tools"
)

// Cache-stable prompts. Hosted APIs and local servers (llama.cpp's slots,
// vLLM's prefix cache) reuse the work of a request's longest prefix that
// equals an earlier request's. A session keeps that prefix long: the system
// prompt is the same every step, the tools it has shown stay in the order
// they were first shown (stable), tools found later are appended after
// them, and the conversation only grows at its end. In the envelope modes
// the system prompt's tool section stays as the session's first step
// listed it, and a tool shown later is introduced by a message appended to
// the conversation where it was found (announce); in native mode the tools
// array is the API's, and a tool found later is appended to it. Each request's
// rendering (promptText) is compared with the previous request's, and the
// shared leading bytes are reported ([EventRequest], and the
// toolgate_runtime_prompt_*_bytes_total counters).

// stable returns the step's tools in cache-stable order: the tools shown
// earlier in the session that the view still authorizes, in the order they
// were first shown, then the step's tools not among them, in the step's
// order. When that would exceed [Options.MaxShown] tools (or the step's own
// count, if larger) or, with earlier tools in it, MaxToolShare of
// ContextTokens in definitions' tokens (cost), the list starts again from
// the step's tools: one request without a cached prefix, and the
// definitions stay bounded, so that a long session on a small window
// keeps room for its conversation.
func (s *Session) stable(view *tools.View, step []*tools.Tool, cost func([]*tools.Tool) int) []*tools.Tool {
	out := make([]*tools.Tool, 0, len(s.shown)+len(step))
	for _, id := range s.shown {
		if t, ok := view.Get(id); ok {
			out = append(out, t)
		}
	}
	for _, t := range step {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	o := s.agent.opts
	if len(out) > max(o.MaxShown, len(step)) {
		out = step
	} else if len(out) > len(step) && cost(out) > int(float64(o.ContextTokens)*o.MaxToolShare) {
		out = step // out holds every tool of step, and more
	}
	s.shown = s.shown[:0]
	for _, t := range out {
		s.shown = append(s.shown, t.ID)
	}
	return out
}

// promptText renders what a request puts before the model's reply, in the
// order chat templates and hosted APIs lay it out: the native tools' definitions
// (native mode) first, then the messages, the envelope modes' tool section
// inside the system message as the adapters send it ([llm.WithToolPrompt]),
// one compact JSON line each. Constraints are not part of it: GBNF and
// Ollama's format steer sampling and are not prompt tokens.
func promptText(req *llm.Request, mode llm.Mode) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	msgs := req.Messages
	if mode == llm.ModeNative {
		for _, t := range req.Tools {
			params := t.StrictParameters
			if len(params) == 0 {
				params = t.Parameters
			}
			_ = enc.Encode(struct {
				Name        string          `json:"name"`
				Description string          `json:"description,omitempty"`
				Parameters  json.RawMessage `json:"parameters"`
			}{t.Name, t.Description, compact(params)})
		}
	} else {
		msgs = llm.WithToolPrompt(req)
	}
	for _, m := range msgs {
		_ = enc.Encode(m)
	}
	return b.Bytes()
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return json.RawMessage(`{}`)
	}
	return b.Bytes()
}

// sharedPrefix returns the number of leading bytes a and b share.
func sharedPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// notePrompt reports how much of req's prompt the previous request of the
// session had as its start, and keeps req's for the next.
func (s *Session) notePrompt(ctx context.Context, step int, req *llm.Request) {
	a := s.agent
	prompt := promptText(req, a.opts.Mode)
	shared := sharedPrefix(s.lastPrompt, prompt)
	s.lastPrompt = prompt
	a.metrics.promptBytes.Add(float64(len(prompt)))
	a.metrics.prefixBytes.Add(float64(shared))
	a.observe(ctx, Event{Kind: EventRequest, Step: step, PromptBytes: len(prompt), PrefixBytes: shared})
}

// toolsAddedPrefix starts the message that introduces tools found after
// the system prompt was written.
const toolsAddedPrefix = "<tools-added>"

// announce keeps the envelope modes' system prompt stable: the first step
// (or the first after stable started its list again) fixes the tools its
// tool section lists; a later step's further tools are introduced once, by
// a message appended to the conversation. It returns Request.PromptTools.
func (s *Session) announce(comp *compiled) int {
	if s.agent.opts.Mode == llm.ModeNative {
		return 0
	}
	names := make([]string, len(comp.specs))
	for i, sp := range comp.specs {
		names[i] = sp.Name
	}
	if len(s.promptNames) == 0 || len(names) < len(s.promptNames) || !slices.Equal(names[:len(s.promptNames)], s.promptNames) {
		s.promptNames = names
		s.announced = nil
		return 0
	}
	var lines []string
	for i, sp := range comp.specs[len(s.promptNames):] {
		if name := names[len(s.promptNames)+i]; !slices.Contains(s.announced, name) {
			s.announced = append(s.announced, name)
			lines = append(lines, llm.ToolLine(sp))
		}
	}
	if len(lines) > 0 {
		s.messages = append(s.messages, llm.Message{Role: llm.RoleUser, Content: toolsAddedPrefix +
			"More tools you can call from now on, in the same form as the system prompt's:\n" + strings.Join(lines, "\n") + "</tools-added>"})
	}
	return len(s.promptNames)
}
