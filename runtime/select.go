package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// selection is what one step shows the model.
type selection struct {
	strategy      Strategy
	shortlist     *discovery.Shortlist
	tools         []*tools.Tool
	tokens        int
	catalogTokens int
}

// choose picks the step's tools from the authorized view by the strategy.
func (s *Session) choose(ctx context.Context, view *tools.View) (*selection, error) {
	a := s.agent
	x, err := a.disc.Index(ctx, view.Snapshot())
	if err != nil {
		return nil, fmt.Errorf("runtime: index: %w", err)
	}
	sel := &selection{strategy: a.opts.Strategy}
	snap := view.Snapshot()
	for i := range snap.Len() {
		if view.Allowed(i) {
			sel.catalogTokens += x.ToolTokens(i)
		}
	}
	if sel.strategy == StrategyAuto {
		budget := int(float64(a.opts.ContextTokens) * a.opts.MaxToolShare)
		switch n := view.Len(); {
		case n <= a.opts.AllLimit && sel.catalogTokens <= budget:
			sel.strategy = StrategyInjectAll
		case n <= a.opts.GroupLimit && sel.catalogTokens <= budget:
			sel.strategy = StrategyByGroup
		default:
			sel.strategy = StrategyProgressive
		}
	}

	if sel.strategy == StrategyInjectAll {
		sel.tools = view.Tools()
	} else {
		query, recent := s.discoveryQuery()
		dctx, span := a.startDiscovery(ctx, query, view.Len())
		sl, err := a.disc.Shortlist(dctx, view, discovery.Request{Query: query, Context: recent, K: a.opts.K,
			Session: s.id, Source: discovery.SourceTurn})
		a.endDiscovery(span, sl, err)
		if err != nil {
			return nil, fmt.Errorf("runtime: discovery: %w", err)
		}
		sel.shortlist = sl
		cost := func(ts []*tools.Tool) int { return toolTokens(x, ts) }
		if sel.strategy == StrategyByGroup {
			sel.tools = s.stable(view, groupsOf(view, sl, a.opts.GroupLimit), cost)
		} else {
			sel.tools = s.stable(view, s.withLoaded(view, sl), cost)
		}
	}
	sel.tokens = toolTokens(x, sel.tools)
	return sel, nil
}

// toolTokens sums the o200k tokens of the tools' definitions.
func toolTokens(x *discovery.Index, ts []*tools.Tool) int {
	n := 0
	for _, t := range ts {
		if i, ok := x.Snapshot().Lookup(t.ID); ok {
			n += x.ToolTokens(i)
		}
	}
	return n
}

// discoveryQuery is the latest user input, with the earlier inputs and the
// model's last answer as context so that follow-ups ("and the other
// account?") still find their tool. Tool results are not used: they are
// data from outside and may carry injected text. An input longer than
// discovery takes is cut to its two ends ([textcut.Ends]).
func (s *Session) discoveryQuery() (string, []string) {
	var query string
	var recent []string
	for i := len(s.messages) - 1; i >= 0 && len(recent) < 3; i-- {
		m := s.messages[i]
		switch {
		case m.Role == llm.RoleUser && !strings.HasPrefix(m.Content, "<tool-result") && !strings.HasPrefix(m.Content, toolsAddedPrefix):
			if query == "" {
				query = m.Content
			} else {
				recent = append(recent, m.Content)
			}
		case m.Role == llm.RoleAssistant && query != "" && m.Content != "" && len(m.ToolCalls) == 0:
			if ans, ok := answerText(m.Content); ok {
				recent = append(recent, ans)
			}
		}
	}
	slices.Reverse(recent)
	// A message may paste a whole document before or after what it asks:
	// discovery refuses a query past its bound, so the turn would fail.
	return textcut.Ends(query, s.agent.disc.MaxQueryBytes()), recent
}

// answerText extracts the text of an envelope answer, or returns the
// content of a plain assistant message.
func answerText(content string) (string, bool) {
	if !strings.HasPrefix(strings.TrimSpace(content), "{") {
		return content, true
	}
	env, err := llm.ParseEnvelope([]byte(content))
	if err != nil || env.Action != llm.ActionAnswer {
		return "", false
	}
	return env.Text, true
}

// groupsOf returns the authorized tools of the best candidates' workflow
// groups (the group, or the namespace when a tool has none), best group
// first, at most limit tools.
func groupsOf(view *tools.View, sl *discovery.Shortlist, limit int) []*tools.Tool {
	var groups []string
	for _, c := range sl.Candidates {
		g := groupOf(c.Tool)
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
		if len(groups) == 2 {
			break
		}
	}
	all := view.Tools()
	var out []*tools.Tool
	for _, g := range groups {
		for _, t := range all {
			if groupOf(t) == g && len(out) < limit {
				out = append(out, t)
			}
		}
	}
	return out
}

func groupOf(t *tools.Tool) string {
	if t.Card.Group != "" {
		return t.Card.Group
	}
	return t.Namespace()
}

// withLoaded returns the shortlist's tools followed by the tools loaded
// through find_tools that are still authorized and not already listed.
func (s *Session) withLoaded(view *tools.View, sl *discovery.Shortlist) []*tools.Tool {
	out := make([]*tools.Tool, 0, len(sl.Candidates)+len(s.loaded))
	for _, c := range sl.Candidates {
		out = append(out, c.Tool)
	}
	for _, id := range s.loaded {
		t, ok := view.Get(id)
		if ok && !slices.ContainsFunc(out, func(u *tools.Tool) bool { return u.ID == id }) {
			out = append(out, t)
		}
	}
	return out
}
