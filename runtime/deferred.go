package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/findtools"
)

// deferredState is what a session keeps for [Options.Deferred]: the
// deferred specs of its view's snapshot, where each tool was last loaded
// by a reference, and whether the backend refused deferred loading (off).
type deferredState struct {
	version uint64
	specs   []llm.ToolSpec
	// loaded maps the tool IDs a tool result has referenced to the index
	// in Session.messages of the latest such result. A tool is loaded for
	// a request only while that result is sent: [Options.FitContext] may
	// leave it out (Session.from past it).
	loaded map[string]int
	// off: the backend refused deferred loading (a model or API version
	// without tool search); the session sends its shortlists as plain
	// native tools from then on.
	off bool
}

// deferring reports whether the session's requests use deferred loading.
func (s *Session) deferring() bool { return s.agent.opts.Deferred && !s.deferred.off }

// deferredSearchNote is what a tool search's answer adds in deferred
// loading. It names no search tool: Anthropic shows find_tools under its
// name, the Responses API as its built-in tool_search.
const deferredSearchNote = "the tools for this request; search again for others"

// deferTools makes req a deferred-loading request: the search tool alone
// is loaded up front, every authorized tool is deferred, in the view's
// order, with its namespace (the Responses API groups by it), and the
// step's shortlisted tools that no result the request sends has
// referenced are delivered as a search the runtime answers now. The tools array and the
// system prompt are then the same at every step of the session; what the
// step adds is appended to the conversation.
func (s *Session) deferTools(step int, view *tools.View, nm names, comp *compiled, req *llm.Request) error {
	a := s.agent
	d := &s.deferred
	if d.specs == nil || d.version != view.Snapshot().Version() {
		all, err := a.compile(view.Tools(), nm, false, false)
		if err != nil {
			return err
		}
		for i := range all.specs {
			if id, ok := nm.id(all.specs[i].Name); ok {
				if t, ok := view.Get(id); ok && llm.ValidToolName(t.Namespace()) {
					all.specs[i].Namespace = t.Namespace()
				}
			}
		}
		d.version, d.specs = view.Snapshot().Version(), all.specs
	}
	req.Tools = []llm.ToolSpec{{Name: FindToolsName, Description: findtools.DeferredDescription,
		Parameters: findtools.Schema, StrictParameters: findtools.Schema, Search: true}}
	req.Deferred = d.specs

	var fresh []*tools.Tool
	for _, spec := range comp.specs {
		if id, ok := nm.id(spec.Name); ok && !s.isLoaded(id) {
			if i, ok := view.Snapshot().Lookup(id); ok {
				fresh = append(fresh, view.Snapshot().Tool(i))
			}
		}
	}
	if len(fresh) > 0 {
		query, _ := s.discoveryQuery()
		args, err := json.Marshal(map[string]string{"query": query})
		if err != nil {
			return fmt.Errorf("runtime: step %d: %w", step, err)
		}
		call := llm.ToolCall{ID: fmt.Sprintf("toolgate_shortlist_%d", step), Name: FindToolsName, Arguments: args}
		s.messages = append(s.messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}})
		answer := findtools.Answer(&findtools.Result{Tools: fresh}, func(t *tools.Tool) string { return nm.name(t) }, deferredSearchNote)
		s.toolResult(llm.ModeNative, call, answer, s.reference(nm, fresh)...)
		req.Messages = s.requestMessages(view, comp)
	}
	return nil
}

// refusedDeferred reports whether err is the backend's refusal of
// deferred loading for a request that had deferred tools. If so, the
// session stops deferring: the messages the step added for it (the
// shortlist's search, from index mark on) are dropped, a warning is
// logged and observed ([EventDeferredOff]), and the caller sends the step
// again with the shortlist as plain native tools.
func (s *Session) refusedDeferred(ctx context.Context, step int, req *llm.Request, mark int, err error) bool {
	var ce *llm.ConstraintError
	if len(req.Deferred) == 0 || !errors.As(err, &ce) || !ce.Deferred {
		return false
	}
	s.deferred.off = true
	s.messages = s.messages[:mark]
	// The dropped messages' token estimates go too: the messages that take
	// their places are counted afresh.
	s.msgTokens = s.msgTokens[:min(len(s.msgTokens), mark)]
	s.agent.log.WarnContext(ctx, "runtime: the backend refused deferred loading; sending the shortlist as native tools",
		"session", s.id, "step", step, "backend", ce.Backend, "reason", ce.Message)
	s.agent.observe(ctx, Event{Kind: EventDeferredOff, Step: step, Reason: ce.Message})
	return true
}

// isLoaded reports whether a tool result the request sends (from
// Session.from on) has referenced the tool id.
func (s *Session) isLoaded(id string) bool {
	i, ok := s.deferred.loaded[id]
	return ok && i >= s.from
}

// reference marks ts as loaded by the tool result appended next and
// returns their model-facing names, for its ToolReferences.
func (s *Session) reference(nm names, ts []*tools.Tool) []string {
	if s.deferred.loaded == nil {
		s.deferred.loaded = map[string]int{}
	}
	refs := make([]string, 0, len(ts))
	for _, t := range ts {
		s.deferred.loaded[t.ID] = len(s.messages)
		refs = append(refs, nm.name(t))
	}
	return refs
}
