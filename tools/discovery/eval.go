package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/internal/fileline"
)

// Query is one labeled request of an evaluation set (a line of a queries
// file: {"query","relevant","scopes"?,"kind"?,"lang"?}).
type Query struct {
	ID    string `json:"id,omitempty"`
	Query string `json:"query"`
	// Relevant lists tool IDs or bare names; a bare name matches every tool
	// with that name.
	Relevant []string `json:"relevant"`
	// Scopes the caller holds; nil means every scope of the catalog.
	Scopes []string `json:"scopes,omitempty"`
	// Context is earlier conversation, as in [Request.Context].
	Context []string `json:"context,omitempty"`
	Kind    string   `json:"kind,omitempty"`
	Lang    string   `json:"lang,omitempty"`
	// Subset is the dataset's own grouping; it stands in for [Query.Kind] when
	// Kind is empty.
	Subset string `json:"subset,omitempty"`
}

// QueryError is a malformed line of a queries file.
type QueryError struct {
	File   string
	Line   int
	Reason string
}

func (e *QueryError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// ReadQueries parses a JSON Lines queries file; file names it in errors.
// Blank lines are skipped. Every other line must be one JSON object with a
// non-empty "query" and no member name repeated at any depth; the first bad
// line is returned as a [*QueryError]. A line may hold at most 16 MiB.
func ReadQueries(r io.Reader, file string) ([]Query, error) {
	sc := fileline.NewScanner(r, 16<<20)
	var out []Query
	for sc.Scan() {
		b, line := sc.Bytes(), sc.Line()
		var q Query
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&q); err != nil {
			return nil, &QueryError{file, line, "invalid JSON: " + err.Error()}
		}
		if dec.More() {
			return nil, &QueryError{file, line, "more than one JSON value on the line"}
		}
		if err := jcs.Check(b); err != nil {
			// One meaning per line: {"query":"a","scopes":["x"],"scopes":[]}
			// is refused, not read as its last member.
			var se *jcs.SyntaxError
			if errors.As(err, &se) {
				return nil, &QueryError{file, line, se.Msg}
			}
			return nil, &QueryError{file, line, err.Error()}
		}
		if q.Query == "" {
			return nil, &QueryError{file, line, `missing or empty "query"`}
		}
		if reason := queryMemberNearMiss(b); reason != "" {
			return nil, &QueryError{file, line, reason}
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, &QueryError{file, sc.Line(), err.Error()}
	}
	return out, nil
}

// queryMembers are the members of a queries file's line that [Query] reads.
var queryMembers = fileline.NewMembers("id", "query", "relevant", "scopes", "context", "kind", "lang", "subset")

// queryMemberNearMiss returns why the line obj (one valid JSON object) is
// refused for a misspelt member, or "": a query's "scope" ignored would
// run a denied query as the holder of every scope. encoding/json reads a
// member in another letter case ("Scopes") as the field, so that is no
// miss; other members (a dataset's own) are ignored.
func queryMemberNearMiss(obj []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return ""
	}
	return queryMembers.NearMiss(func(yield func(string) bool) {
		for k := range m {
			if !queryMembers.Reads(k) && !yield(k) {
				return
			}
		}
	})
}

// EvalOptions configures Evaluate. A nil *EvalOptions means defaults.
type EvalOptions struct {
	// K is the shortlist size. Zero means 5 (recall@5 needs K ≥ 5; recall
	// at 1 and 3 come from the same shortlist).
	K int
	// Clock times each [Shortlist] for the latency percentiles. Nil means [time.Now].
	Clock func() time.Time
	// RankDepth, when above [EvalOptions.K], ranks each query whose top K lacks a
	// relevant tool again, this deep, to fill [QueryResult.Rank] (not
	// timed). Zero ranks only within the top K.
	RankDepth int
}

// Report is the result of Evaluate; its JSON is the `toolgate eval`
// contract.
type Report struct {
	// Queries counts the scored queries: those with relevant tools that
	// exist in the catalog and that the caller may use at least one of.
	Queries     int     `json:"queries"`
	K           int     `json:"k"`
	RecallAt1   float64 `json:"recall_at_1"`
	RecallAt3   float64 `json:"recall_at_3"`
	RecallAt5   float64 `json:"recall_at_5"`
	MRR         float64 `json:"mrr"`
	DeniedLeaks int     `json:"denied_leaks"`
	P50us       float64 `json:"p50_us"`
	P99us       float64 `json:"p99_us"`
	// ByKind and [Report.ByLang] break recall@5 and [Report.MRR] down by the queries' kind
	// (or subset) and language; queries without one are not grouped.
	ByKind map[string]Group `json:"by_kind"`
	ByLang map[string]Group `json:"by_lang"`
	// The fields below are not part of the JSON contract.

	// Denied counts queries whose relevant tools the caller may not use;
	// [Report.Unanswerable] those with no relevant tool (BFCL's irrelevance sets).
	Denied, Unanswerable int `json:"-"`
	// Details holds each scored query's outcome, in input order.
	Details []QueryResult `json:"-"`
}

// Group is recall@5 and MRR over a subset of queries.
type Group struct {
	Queries   int     `json:"queries"`
	RecallAt5 float64 `json:"recall_at_5"`
	MRR       float64 `json:"mrr"`
}

// QueryResult is one scored query's outcome.
type QueryResult struct {
	Query      *Query
	Returned   []string // tool IDs, best first
	Recall     [3]float64
	RR         float64 // reciprocal rank of the first relevant tool
	Confidence float64
	Tokens     int // shortlist tokens
	Authorized int
	Catalog    int // catalog tokens
	// Rank is the 1-based rank of the first relevant tool: within the top
	// K, or within [EvalOptions.RankDepth] for a query whose top K lacks
	// one; 0 when it is not that deep.
	Rank int
}

// Evaluate runs every query through d over snap and scores the
// shortlists. The caller of a query is a principal holding q.Scopes (every
// scope in snap when nil). A query is "denied" when all its relevant tools
// exist but none is authorized for that principal; it is excluded from
// recall, but what it returns still counts toward DeniedLeaks, as does any
// returned tool the principal may not use. Queries whose relevant list is
// empty are counted in Unanswerable and otherwise skipped.
func Evaluate(ctx context.Context, d *Discoverer, snap *tools.Snapshot, queries []Query, opts *EvalOptions) (*Report, error) {
	var o EvalOptions
	if opts != nil {
		o = *opts
	}
	if o.K == 0 {
		o.K = 5
	}
	if o.K < 0 {
		return nil, fmt.Errorf("%w: EvalOptions.K %d is negative", ErrOptions, o.K)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if _, err := d.Index(ctx, snap); err != nil {
		return nil, err
	}
	byName := map[string][]string{}
	for _, t := range snap.Tools() {
		byName[t.Name()] = append(byName[t.Name()], t.ID)
	}
	allScopes := snap.Scopes()
	rep := &Report{K: o.K, ByKind: map[string]Group{}, ByLang: map[string]Group{}}
	var lat []float64
	views := map[string]*tools.View{}
	for qi := range queries {
		q := &queries[qi]
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(q.Relevant) == 0 {
			rep.Unanswerable++
			continue
		}
		scopes := q.Scopes
		if scopes == nil {
			scopes = allScopes
		}
		key := fmt.Sprint(scopes)
		view := views[key]
		if view == nil {
			view = snap.Authorize(tools.Principal{ID: "eval", Tenant: "eval", Scopes: scopes})
			views[key] = view
		}
		// Each relevant entry is the set of tools it matches; it is found
		// when any of them is returned. Entries matching no tool the caller
		// may use cannot be found and are left out of recall's denominator.
		var entries []map[string]bool
		usable := 0
		for _, r := range q.Relevant {
			ids := byName[r]
			if _, ok := snap.Lookup(r); ok {
				ids = []string{r}
			}
			e := map[string]bool{}
			ok := len(ids) == 0 // an unknown tool still counts: a miss
			for _, id := range ids {
				e[id] = true
				if _, auth := view.Get(id); auth {
					ok = true
				}
			}
			if ok {
				usable++
				entries = append(entries, e)
			}
		}
		start := o.Clock()
		sl, err := d.Shortlist(ctx, view, Request{Query: q.Query, Context: q.Context, K: o.K})
		if err != nil {
			return nil, fmt.Errorf("discovery: eval %q: %w", q.Query, err)
		}
		lat = append(lat, float64(o.Clock().Sub(start).Nanoseconds())/1e3)
		returned := make([]string, len(sl.Candidates))
		for i, c := range sl.Candidates {
			returned[i] = c.Tool.ID
			if _, ok := view.Get(c.Tool.ID); !ok {
				rep.DeniedLeaks++
			}
		}
		if usable == 0 {
			rep.Denied++
			continue
		}
		qr := QueryResult{Query: q, Returned: returned, Confidence: sl.Confidence, Tokens: sl.ShortlistTokens, Authorized: sl.Authorized, Catalog: sl.CatalogTokens}
		for j, at := range [3]int{1, 3, 5} {
			top := returned[:min(at, len(returned))]
			hits := 0
			for _, e := range entries {
				for _, id := range top {
					if e[id] {
						hits++
						break
					}
				}
			}
			qr.Recall[j] = float64(hits) / float64(usable)
		}
		qr.Rank = firstRelevant(returned, entries)
		if qr.Rank > 0 {
			qr.RR = 1 / float64(qr.Rank)
		} else if o.RankDepth > o.K {
			deep, err := d.Shortlist(ctx, view, Request{Query: q.Query, Context: q.Context, K: o.RankDepth})
			if err != nil {
				return nil, fmt.Errorf("discovery: eval %q: %w", q.Query, err)
			}
			ids := make([]string, len(deep.Candidates))
			for i, c := range deep.Candidates {
				ids[i] = c.Tool.ID
			}
			qr.Rank = firstRelevant(ids, entries)
		}
		rep.Details = append(rep.Details, qr)
	}
	var sum [3]float64
	var mrr float64
	kinds := map[string][]QueryResult{}
	langs := map[string][]QueryResult{}
	for _, qr := range rep.Details {
		for j := range sum {
			sum[j] += qr.Recall[j]
		}
		mrr += qr.RR
		kind := qr.Query.Kind
		if kind == "" {
			kind = qr.Query.Subset
		}
		if kind != "" {
			kinds[kind] = append(kinds[kind], qr)
		}
		if qr.Query.Lang != "" {
			langs[qr.Query.Lang] = append(langs[qr.Query.Lang], qr)
		}
	}
	rep.Queries = len(rep.Details)
	if n := float64(rep.Queries); n > 0 {
		rep.RecallAt1, rep.RecallAt3, rep.RecallAt5 = sum[0]/n, sum[1]/n, sum[2]/n
		rep.MRR = mrr / n
	}
	group := func(rs []QueryResult) Group {
		g := Group{Queries: len(rs)}
		for _, r := range rs {
			g.RecallAt5 += r.Recall[2]
			g.MRR += r.RR
		}
		g.RecallAt5 /= float64(len(rs))
		g.MRR /= float64(len(rs))
		return g
	}
	for k, rs := range kinds {
		rep.ByKind[k] = group(rs)
	}
	for l, rs := range langs {
		rep.ByLang[l] = group(rs)
	}
	sort.Float64s(lat)
	rep.P50us, rep.P99us = percentile(lat, 0.50), percentile(lat, 0.99)
	return rep, nil
}

func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// SampleQueries returns n of queries spread evenly over them (every
// len(queries)/n-th, the first included), in input order, so that a run over
// a large set still sees each of its parts; queries itself when n <= 0 or n
// >= len(queries).
func SampleQueries(queries []Query, n int) []Query {
	if n <= 0 || n >= len(queries) {
		return queries
	}
	step := float64(len(queries)) / float64(n)
	out := make([]Query, n)
	for i := range out {
		out[i] = queries[int(float64(i)*step)]
	}
	return out
}

// SplitHistory splits a labeled set for a history evaluation: the queries
// of each tool (grouped by their first relevant entry), in input order, go
// first to history (the first frac of them, rounded down) and then to
// measured. Queries with no relevant tool go to measured. frac must be in
// [0,1); each part keeps the input order.
func SplitHistory(queries []Query, frac float64) (history, measured []Query, err error) {
	if frac < 0 || frac >= 1 {
		return nil, nil, fmt.Errorf("%w: history fraction %v is outside [0,1)", ErrOptions, frac)
	}
	total := map[string]int{}
	for _, q := range queries {
		if len(q.Relevant) > 0 {
			total[q.Relevant[0]]++
		}
	}
	taken := map[string]int{}
	for _, q := range queries {
		if len(q.Relevant) == 0 {
			measured = append(measured, q)
			continue
		}
		key := q.Relevant[0]
		if taken[key] < int(frac*float64(total[key])) {
			taken[key]++
			history = append(history, q)
			continue
		}
		measured = append(measured, q)
	}
	return history, measured, nil
}

// firstRelevant is the 1-based rank of the first of ids in one of entries,
// 0 when none is.
func firstRelevant(ids []string, entries []map[string]bool) int {
	for i, id := range ids {
		for _, e := range entries {
			if e[id] {
				return i + 1
			}
		}
	}
	return 0
}
