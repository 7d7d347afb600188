package runtime

import (
	"github.com/toolgate/toolgate/internal/tracing"

	"context"
	"slices"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery/findtools"
)

// findTools answers the model's search of the authorized catalog (see
// package findtools). Found tools join the session's loaded set, so they
// are shown in later steps. Every search is a discovery miss (the
// shortlist did not hold what the model needed) and is logged and counted.
func (s *Session) findTools(ctx context.Context, step int, view *tools.View, query string, c llm.ToolCall, mode llm.Mode) {
	a := s.agent
	nm := s.names(view.Snapshot())
	dctx, span := a.startDiscovery(ctx, query, view.Len())
	res, err := findtools.Search(dctx, a.disc, view, query, &findtools.Options{K: a.opts.K, Alias: nm.id, Session: s.id})
	if err == nil {
		span.SetAttributes(tracing.Candidates.StringSlice(ids(res.Tools)))
	}
	tracing.End(span, err, errorType(err))
	if err != nil {
		s.toolResult(mode, c, errorResult("DISCOVERY_FAILED", "the search failed; try again", true))
		return
	}
	a.miss(ctx, "find_tools", s, query)
	for _, t := range res.Tools {
		s.load(t.ID)
	}
	a.observe(ctx, Event{Kind: EventFindTools, Step: step, Query: query, Found: ids(res.Tools)})
	var refs []string
	if s.deferring() {
		refs = s.reference(nm, res.Tools)
	}
	s.toolResult(mode, c, findtools.Answer(res, func(t *tools.Tool) string { return nm.name(t) },
		"found tools can be called from the next step on"), refs...)
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
