package discovery

import (
	"slices"
	"sort"
	"time"
)

// Miss is a request whose first shortlist did not hold the tool the model
// finally called (after a find_tools search or a select: by name), or,
// with Hit, a linked call whose tool the first shortlist held.
type Miss struct {
	// Hit reports that the first shortlist held the tool: not a miss.
	Hit                        bool
	Tenant, Principal, Session string
	// Query is the request; [Miss.Shortlist] the tool IDs its first shortlist held.
	Query     string
	Shortlist []string
	// Called is the tool called.
	Called string
	// Via is how the tool was found: [SourceFindTools], [SourceSelect], or
	// empty when it was loaded earlier in the session.
	Via string
	// Search is the find_tools query that found it, when [Miss.Via] says so.
	Search string
	Time   time.Time
}

// MissReport is what Misses found in a log.
type MissReport struct {
	// Calls counts the calls linked to a request of their session; [MissReport.Hits]
	// those whose tool the first shortlist held. [MissReport.Unlinked] counts calls
	// with no earlier request in their session (or no session at all).
	Calls, Hits, Unlinked int
	// Misses lists each miss in log order.
	Misses []Miss
	// Linked lists every linked call in log order, hits (Hit) and misses:
	// what cards.Learn learns from.
	Linked []Miss
}

// ToolMisses groups the misses of one tool.
type ToolMisses struct {
	Tenant string `json:"tenant"`
	Tool   string `json:"tool"`
	// Count is the number of misses; [ToolMisses.Principals] the distinct principals
	// who had them.
	Count      int `json:"count"`
	Principals int `json:"principals"`
	// Queries are the distinct requests, most frequent first.
	Queries []QueryCount `json:"queries"`
}

// QueryCount is a request and how often it missed.
type QueryCount struct {
	Query string `json:"query"`
	Count int    `json:"count"`
}

// Misses reads a discovery log, in the order it was recorded, and finds
// each call whose tool the first shortlist of its request lacked.
//
// A session is keyed by tenant, principal and session id together, so
// entries of different tenants or principals are never linked, whatever
// session ids they carry. Within a session, a turn starts at the first
// [SourceTurn] entry whose query differs from the current turn's (later
// steps of the same request repeat its query and are not first
// shortlists); a call is attributed to the current turn. A client that
// only searches (an MCP client of `toolgate mcp serve`, whose requests the
// server never sees) has its requests started by [SourceFindTools] entries
// instead: a search starts one when the session has none, or when the
// current one was started by a search and a call followed it; the
// searches before the next call refine it (Via). Entries without a
// session cannot be linked and are skipped.
func Misses(entries []Entry) *MissReport {
	type key struct{ tenant, principal, session string }
	type turn struct {
		entry  *Entry
		via    string
		search string
		// searched: a find_tools search started the turn; called: a
		// call followed it.
		searched, called bool
	}
	turns := map[key]*turn{}
	rep := &MissReport{}
	for i := range entries {
		e := &entries[i]
		if e.Session == "" {
			if e.source() == SourceCall {
				rep.Unlinked++
			}
			continue
		}
		k := key{e.Tenant, e.Principal, e.Session}
		cur := turns[k]
		switch e.source() {
		case SourceTurn:
			if cur == nil || cur.entry.Query != e.Query {
				turns[k] = &turn{entry: e}
			}
		case SourceFindTools, SourceSelect:
			if e.source() == SourceFindTools && (cur == nil || cur.searched && cur.called) {
				turns[k] = &turn{entry: e, searched: true}
				continue
			}
			if cur != nil {
				cur.via, cur.search = e.source(), e.Query
			}
		case SourceCall:
			if cur == nil {
				rep.Unlinked++
				continue
			}
			rep.Calls++
			cur.called = true
			first := make([]string, len(cur.entry.Candidates))
			for j, c := range cur.entry.Candidates {
				first[j] = c.ID
			}
			m := Miss{Tenant: e.Tenant, Principal: e.Principal, Session: e.Session, Query: cur.entry.Query,
				Shortlist: first, Called: e.Called, Time: e.Time, Hit: slices.Contains(first, e.Called)}
			if cur.via != "" {
				m.Via, m.Search = cur.via, cur.search
			}
			rep.Linked = append(rep.Linked, m)
			if m.Hit {
				rep.Hits++
				continue
			}
			rep.Misses = append(rep.Misses, m)
		}
	}
	return rep
}

// ByTool groups the misses by tenant and tool, the most missed first (ties
// by tenant, then tool ID).
func (r *MissReport) ByTool() []ToolMisses {
	type key struct{ tenant, tool string }
	idx := map[key]int{}
	var out []ToolMisses
	principals := map[key]map[string]bool{}
	queries := map[key]map[string]int{}
	for _, m := range r.Misses {
		k := key{m.Tenant, m.Called}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, ToolMisses{Tenant: m.Tenant, Tool: m.Called})
			principals[k] = map[string]bool{}
			queries[k] = map[string]int{}
		}
		out[i].Count++
		principals[k][m.Principal] = true
		queries[k][m.Query]++
	}
	for k, i := range idx {
		out[i].Principals = len(principals[k])
		for q, n := range queries[k] {
			out[i].Queries = append(out[i].Queries, QueryCount{q, n})
		}
		sort.Slice(out[i].Queries, func(a, b int) bool {
			qa, qb := out[i].Queries[a], out[i].Queries[b]
			if qa.Count != qb.Count {
				return qa.Count > qb.Count
			}
			return qa.Query < qb.Query
		})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Count != out[b].Count {
			return out[a].Count > out[b].Count
		}
		if out[a].Tenant != out[b].Tenant {
			return out[a].Tenant < out[b].Tenant
		}
		return out[a].Tool < out[b].Tool
	})
	return out
}
