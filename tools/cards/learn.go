package cards

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
)

// LearnOptions configures [Learn]. A nil *LearnOptions means defaults, and
// Tenant is then the only tenant of the misses.
type LearnOptions struct {
	// Tenant is the tenant learned for: only its misses are read. Empty
	// means the misses' only tenant; misses of several tenants without a
	// Tenant are refused ([ErrTenants]): learning never crosses tenants.
	Tenant string
	// MinPrincipals is how many distinct principals must have called a tool
	// after similar requests before one of those requests becomes an
	// example (or one of their words a tag). Zero means 3, so one or two
	// principals alone can never change a card.
	MinPrincipals int
	// MaxPerPrincipal bounds the requests one principal contributes per
	// tool. Zero means 3.
	MaxPerPrincipal int
	// MaxExamples bounds the examples proposed per tool. Zero means [MaxList].
	MaxExamples int
	// Similar is the share, in (0,1], of a request's analysed terms another
	// request must contain to support it. Zero means 0.5.
	Similar float64
	// MaxKeywords bounds the words proposed as tags per tool: the words of
	// its missed requests that at least MinPrincipals principals used,
	// most distinctive first (used for few other tools), numbers left out.
	// Zero means 32; negative proposes none.
	MaxKeywords int
	// Analyzer analyses requests for the similarity. Nil means analysis.New(nil).
	Analyzer *analysis.Analyzer
}

// Errors of [Learn].
var (
	// ErrTenants is returned when misses of several tenants come without
	// [LearnOptions.Tenant].
	ErrTenants = errors.New("cards: misses of several tenants: choose one")
	// ErrOptions is wrapped for an invalid option.
	ErrOptions = errors.New("cards: invalid options")
)

// LearnReport says what [Learn] used and left out.
type LearnReport struct {
	// Tenant is the tenant learned for.
	Tenant string
	// Misses counts the tenant's misses read; Skipped those of tools the
	// catalog lacks or the tenant may not use.
	Misses, Skipped int
	// Proposed counts the examples proposed; Unsupported the requests left
	// out for lack of support from MinPrincipals principals; Capped those
	// left out by MaxPerPrincipal or MaxExamples.
	Proposed, Unsupported, Capped int
	// Keywords counts the words proposed as tags.
	Keywords int
}

// Learn proposes an overlay from a log's linked calls ([discovery.Misses]:
// the misses, and the hits too, which confirm what users call a tool): for
// each tool called, the requests that led to it as examples and their most
// distinctive words as tags, for a person to review before use. It never
// applies anything.
//
// What it may propose is bounded so that a hostile principal's queries
// cannot take over a card:
//
//   - only misses of one tenant are read, and only tools that tenant may use
//     get entries (a miss already names only tools its principal could
//     call: discovery.Discoverer.RecordOutcome drops the others);
//   - a request becomes an example only when at least MinPrincipals
//     distinct principals missed the same tool with requests sharing most
//     of its words (Similar), so one principal can never add anything;
//   - each principal contributes at most MaxPerPrincipal requests per tool,
//     and each tool gets at most MaxExamples, so k colluding principals add
//     at most k·MaxPerPrincipal examples to a tool;
//   - an overlay only adds words to cards of tools already in the catalog:
//     it has no field for scopes, tenants or risk, so it can make no tool
//     visible that a principal's view hides.
//
// Entries are returned sorted by tool ID, with the tools' current hashes.
func Learn(snap *tools.Snapshot, misses []discovery.Miss, opts *LearnOptions) ([]Entry, *LearnReport, error) {
	var o LearnOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.MinPrincipals < 0 || o.MaxPerPrincipal < 0 || o.MaxExamples < 0:
		return nil, nil, fmt.Errorf("%w: MinPrincipals, MaxPerPrincipal and MaxExamples must not be negative", ErrOptions)
	case o.MaxExamples > MaxList || o.MaxKeywords > MaxList:
		return nil, nil, fmt.Errorf("%w: MaxExamples and MaxKeywords must be at most %d", ErrOptions, MaxList)
	case o.Similar < 0 || o.Similar > 1:
		return nil, nil, fmt.Errorf("%w: Similar %v is outside (0,1]", ErrOptions, o.Similar)
	}
	o.MinPrincipals = cmp.Or(o.MinPrincipals, 3)
	o.MaxPerPrincipal = cmp.Or(o.MaxPerPrincipal, 3)
	o.MaxExamples = cmp.Or(o.MaxExamples, MaxList)
	o.Similar = cmp.Or(o.Similar, 0.5)
	o.MaxKeywords = cmp.Or(o.MaxKeywords, 32)
	if o.Analyzer == nil {
		o.Analyzer = analysis.New(nil)
	}
	if o.Tenant == "" {
		for _, m := range misses {
			if o.Tenant == "" {
				o.Tenant = m.Tenant
			} else if m.Tenant != o.Tenant {
				return nil, nil, ErrTenants
			}
		}
	}
	rep := &LearnReport{Tenant: o.Tenant}

	// The requests of each tool, per principal, in log order.
	byTool := map[string][]*learnRequest{}
	seen := map[[3]string]*learnRequest{}
	perPrincipal := map[[2]string]int{}
	for _, m := range misses {
		if m.Tenant != o.Tenant {
			continue
		}
		rep.Misses++
		i, ok := snap.Lookup(m.Called)
		if !ok || !tenantMayUse(snap.Tool(i), o.Tenant) {
			rep.Skipped++
			continue
		}
		text := strings.Join(strings.Fields(m.Query), " ")
		if text == "" || checkText(text) != "" {
			rep.Skipped++
			continue
		}
		k := [3]string{m.Called, m.Principal, strings.ToLower(text)}
		if r := seen[k]; r != nil {
			r.count++
			continue
		}
		pk := [2]string{m.Called, m.Principal}
		if perPrincipal[pk] >= o.MaxPerPrincipal {
			rep.Capped++
			continue
		}
		perPrincipal[pk]++
		r := &learnRequest{text: text, principal: m.Principal, count: 1, terms: uniqueTerms(o.Analyzer, text)}
		seen[k] = r
		byTool[m.Called] = append(byTool[m.Called], r)
	}

	ids := make([]string, 0, len(byTool))
	for id := range byTool {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	// Which principals used each term for each tool, and for how many
	// tools each term was used at all.
	termPrincipals := map[string]map[string]map[string]bool{}
	termTools := map[string]int{}
	for _, id := range ids {
		tp := map[string]map[string]bool{}
		for _, r := range byTool[id] {
			for _, t := range r.terms {
				if tp[t] == nil {
					tp[t] = map[string]bool{}
				}
				tp[t][r.principal] = true
			}
		}
		for t := range tp {
			termTools[t]++
		}
		termPrincipals[id] = tp
	}
	var out []Entry
	for _, id := range ids {
		reqs := byTool[id]
		type scored struct {
			r       *learnRequest
			support int
		}
		var kept []scored
		for _, r := range reqs {
			supporters := map[string]bool{}
			for _, other := range reqs {
				if shares(other.terms, r.terms, o.Similar) {
					supporters[other.principal] = true
				}
			}
			if len(supporters) < o.MinPrincipals {
				rep.Unsupported++
				continue
			}
			kept = append(kept, scored{r, len(supporters)})
		}
		sort.SliceStable(kept, func(a, b int) bool {
			if kept[a].support != kept[b].support {
				return kept[a].support > kept[b].support
			}
			return kept[a].r.count > kept[b].r.count
		})
		var examples []string
		for _, s := range kept {
			if len(examples) == o.MaxExamples {
				rep.Capped++
				continue
			}
			if !slices.ContainsFunc(examples, func(x string) bool { return strings.EqualFold(x, s.r.text) }) {
				examples = append(examples, s.r.text)
			}
		}
		keywords := o.keywords(termPrincipals[id], termTools, texts(reqs))
		if len(examples) == 0 && len(keywords) == 0 {
			continue
		}
		i, _ := snap.Lookup(id)
		out = append(out, Entry{Tool: id, Hash: Hash(snap.Tool(i)), Examples: examples, Tags: keywords})
		rep.Proposed += len(examples)
		rep.Keywords += len(keywords)
	}
	return out, rep, nil
}

// learnRequest is one principal's distinct request for one tool.
type learnRequest struct {
	text      string
	principal string
	terms     []string
	count     int
}

func texts(rs []*learnRequest) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.text
	}
	return out
}

func tenantMayUse(t *tools.Tool, tenant string) bool {
	return len(t.Tenants) == 0 || slices.Contains(t.Tenants, tenant)
}

func uniqueTerms(a *analysis.Analyzer, text string) []string {
	terms := a.Terms(nil, text, "")
	slices.Sort(terms)
	return slices.Compact(terms)
}

// shares reports whether have holds at least share of want's terms (both
// sorted and unique). A request with no terms supports only itself.
func shares(have, want []string, share float64) bool {
	if len(want) == 0 {
		return len(have) == 0
	}
	n := 0
	for _, w := range want {
		if _, ok := slices.BinarySearch(have, w); ok {
			n++
		}
	}
	return float64(n) >= share*float64(len(want))
}

// Replay runs each query of history through d as its own principal's
// first shortlist (principal "history-<n>", tenant "history", holding the
// query's scopes) and returns, for every relevant tool the principal may
// use, the linked call the log would show had the request ended in a call
// of that tool (Hit when the shortlist of K held it). It is how `toolgate
// eval --history` learns before it measures.
func Replay(ctx context.Context, d *discovery.Discoverer, snap *tools.Snapshot, history []discovery.Query, k int) ([]discovery.Miss, error) {
	byName := map[string][]string{}
	for _, t := range snap.Tools() {
		byName[t.Name()] = append(byName[t.Name()], t.ID)
	}
	all := snap.Scopes()
	var out []discovery.Miss
	for n, q := range history {
		scopes := q.Scopes
		if scopes == nil {
			scopes = all
		}
		p := tools.Principal{ID: fmt.Sprintf("history-%d", n), Tenant: "history", Scopes: scopes}
		view := snap.Authorize(p)
		sl, err := d.Shortlist(ctx, view, discovery.Request{Query: q.Query, Context: q.Context, K: k})
		if err != nil {
			return nil, err
		}
		got := make([]string, len(sl.Candidates))
		for i, c := range sl.Candidates {
			got[i] = c.Tool.ID
		}
		for _, r := range q.Relevant {
			ids := byName[r]
			if _, ok := snap.Lookup(r); ok {
				ids = []string{r}
			}
			for _, id := range ids {
				if _, ok := view.Get(id); !ok {
					continue
				}
				out = append(out, discovery.Miss{Tenant: p.Tenant, Principal: p.ID, Query: q.Query, Shortlist: got, Called: id,
					Hit: slices.Contains(got, id)})
			}
		}
	}
	return out, nil
}

// keywords picks a tool's tags: the terms at least MinPrincipals
// principals used, scored by principals over the number of tools the term
// was used for, each given as the word users typed most often for it.
func (o *LearnOptions) keywords(tp map[string]map[string]bool, termTools map[string]int, texts []string) []string {
	if o.MaxKeywords < 0 {
		return nil
	}
	type scored struct {
		term  string
		score float64
	}
	var cands []scored
	for t, ps := range tp {
		// A number (an issue, an amount, an account) names what a request
		// was about, not what the tool does.
		if len(ps) < o.MinPrincipals || !strings.ContainsFunc(t, unicode.IsLetter) {
			continue
		}
		cands = append(cands, scored{t, float64(len(ps)) / float64(termTools[t])})
	}
	sort.Slice(cands, func(a, b int) bool {
		if cands[a].score != cands[b].score {
			return cands[a].score > cands[b].score
		}
		return cands[a].term < cands[b].term
	})
	if len(cands) > o.MaxKeywords {
		cands = cands[:o.MaxKeywords]
	}
	if len(cands) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, c := range cands {
		want[c.term] = true
	}
	// The surface word of each term: the folded token users typed most.
	surface := map[string]map[string]int{}
	for _, text := range texts {
		toks, lang := o.Analyzer.TokensLang(nil, text)
		for _, tok := range toks {
			for _, t := range o.Analyzer.Terms(nil, tok, lang) {
				if want[t] {
					if surface[t] == nil {
						surface[t] = map[string]int{}
					}
					surface[t][tok]++
				}
			}
		}
	}
	var out []string
	for _, c := range cands {
		best, n := c.term, 0
		for w, k := range surface[c.term] {
			if k > n || (k == n && w < best) {
				best, n = w, k
			}
		}
		if checkText(best) == "" && !slices.Contains(out, best) {
			out = append(out, best)
		}
	}
	return out
}
