package runtime

import (
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/runtime/findtools"
	"github.com/toolgate/toolgate/tools"
)

// deferredState is what a session keeps for Options.Deferred: the
// deferred specs of its view's snapshot and the tools already loaded by a
// reference.
type deferredState struct {
	version uint64
	specs   []llm.ToolSpec
	loaded  map[string]bool // tool IDs a tool result has referenced
}

// deferTools makes req a deferred-loading request: find_tools alone is
// loaded up front (the search tool), every authorized tool is deferred,
// in the view's order, and the step's shortlisted tools that no result
// has referenced yet are delivered as a search the runtime answers now.
// The tools array and the system prompt are then the same at every step
// of the session; what the step adds is appended to the conversation.
func (s *Session) deferTools(step int, view *tools.View, nm *names, comp *compiled, req *llm.Request) error {
	a := s.agent
	d := &s.deferred
	if d.specs == nil || d.version != view.Snapshot().Version() {
		all, err := a.compile(view.Tools(), nm, false, false)
		if err != nil {
			return err
		}
		d.version, d.specs = view.Snapshot().Version(), all.specs
	}
	req.Tools = []llm.ToolSpec{{Name: FindToolsName, Description: findtools.Description,
		Parameters: findtools.Schema, StrictParameters: findtools.Schema, Search: true}}
	req.Deferred = d.specs

	var fresh []*tools.Tool
	for _, spec := range comp.specs {
		if id, ok := nm.id(spec.Name); ok && !d.loaded[id] {
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
		answer := findtools.Answer(&findtools.Result{Tools: fresh}, func(t *tools.Tool) string { return nm.name(t.ID) },
			"the tools for this request; search with find_tools for others")
		s.toolResult(llm.ModeNative, call, answer, s.reference(nm, fresh)...)
		req.Messages = s.requestMessages(view, comp)
	}
	return nil
}

// reference marks ts as loaded and returns their model-facing names, for
// a tool result's ToolReferences.
func (s *Session) reference(nm *names, ts []*tools.Tool) []string {
	if s.deferred.loaded == nil {
		s.deferred.loaded = map[string]bool{}
	}
	refs := make([]string, 0, len(ts))
	for _, t := range ts {
		s.deferred.loaded[t.ID] = true
		refs = append(refs, nm.name(t.ID))
	}
	return refs
}
