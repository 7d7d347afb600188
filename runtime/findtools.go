package runtime

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// findToolsSchema is the parameters schema of the native find_tools tool.
const findToolsSchema = `{"type":"object","properties":{"query":{"type":"string","description":"What you need to do, in a few words, or select:<name> to load a tool by name."}},"required":["query"],"additionalProperties":false}`

const findToolsDescription = "Search the tools you may use when none of the listed tools fits. Found tools become callable in the next step."

// findTools answers the model's search of the authorized catalog: a
// discovery query, or "select:a,b" to load tools by name. Found tools join
// the session's loaded set, so they are shown in later steps. Every search
// is a discovery miss (the shortlist did not hold what the model needed)
// and is logged and counted.
func (s *Session) findTools(ctx context.Context, step int, view *tools.View, query string, c llm.ToolCall, mode llm.Mode) {
	a := s.agent
	nm := a.names.get(view.Snapshot())
	var found []*tools.Tool
	if sel, ok := strings.CutPrefix(strings.TrimSpace(query), "select:"); ok {
		for _, name := range strings.Split(sel, ",") {
			if t, ok := lookupAuthorized(view, nm, strings.TrimSpace(name)); ok {
				found = append(found, t)
			}
		}
		a.disc.RecordOutcome(ctx, view, discovery.Outcome{Session: s.id, Source: discovery.SourceSelect, Query: query, Tools: ids(found)})
	} else {
		sl, err := a.disc.Shortlist(ctx, view, discovery.Request{Query: query, K: a.opts.K, Session: s.id, Source: discovery.SourceFindTools})
		if err != nil {
			s.toolResult(mode, c, errorResult("DISCOVERY_FAILED", "the search failed; try again", true))
			return
		}
		for _, cand := range sl.Candidates {
			found = append(found, cand.Tool)
		}
	}
	a.miss(ctx, "find_tools", s, query)

	type card struct {
		Name    string `json:"name"`
		Summary string `json:"summary"`
	}
	cards := make([]card, 0, len(found))
	for _, t := range found {
		s.load(t.ID)
		cards = append(cards, card{Name: nm.name(t.ID), Summary: t.Card.Summary})
	}
	a.observe(Event{Kind: EventFindTools, Step: step, Query: query, Found: ids(found)})
	body, _ := json.Marshal(struct {
		Found []card `json:"found"`
		Note  string `json:"note"`
	}{cards, "found tools can be called from the next step on"})
	s.toolResult(mode, c, string(body))
}

// lookupAuthorized finds an authorized tool by model-facing name, ID or
// bare name (when exactly one authorized tool has it).
func lookupAuthorized(view *tools.View, nm *names, name string) (*tools.Tool, bool) {
	if id, ok := nm.id(name); ok {
		if t, ok := view.Get(id); ok {
			return t, true
		}
	}
	if t, ok := view.Get(name); ok {
		return t, true
	}
	var match *tools.Tool
	for _, t := range view.Tools() {
		if t.Name() == name {
			if match != nil {
				return nil, false
			}
			match = t
		}
	}
	return match, match != nil
}

// load adds a tool to the loaded set, dropping the oldest beyond MaxLoaded.
func (s *Session) load(id string) {
	if i := slices.Index(s.loaded, id); i >= 0 {
		s.loaded = slices.Delete(s.loaded, i, i+1)
	}
	s.loaded = append(s.loaded, id)
	if over := len(s.loaded) - s.agent.opts.MaxLoaded; over > 0 {
		s.loaded = slices.Delete(s.loaded, 0, over)
	}
}

// miss records that the shortlist did not hold what the model needed.
func (a *Agent) miss(ctx context.Context, kind string, s *Session, detail string) {
	a.metrics.misses.WithLabelValues(kind).Inc()
	a.log.InfoContext(ctx, "runtime: discovery miss", "kind", kind, "session", s.id,
		"tenant", s.principal.Tenant, "principal", s.principal.ID, "detail", detail)
}
