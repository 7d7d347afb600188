// Package report renders the reports people look at: `toolgate eval
// --format html` and `toolgate lint --format html`. Each is one
// self-contained page (inline CSS and SVG, no script, nothing fetched), so
// it can be mailed, attached to a CI run or opened offline.
//
// The data comes from tools/discovery's Report and tools/lint's findings;
// the page shows them as they are, with html/template escaping every
// string (tool names, descriptions and queries come from catalogs and
// users).
package report

import (
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/lint"
)

//go:embed templates/*.html
var files embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"pct":   Percent,
	"num":   func(f float64) string { return fmt.Sprintf("%.3f", f) },
	"dur":   Micros,
	"join":  func(s []string) string { return strings.Join(s, ", ") },
	"width": func(f float64, max int) int { return int(f*float64(max) + 0.5) },
	"add":   func(a, b int) int { return a + b },
	"mul":   func(a, b int) int { return a * b },
	"in":    slices.Contains[[]string],
}).ParseFS(files, "templates/*.html"))

// Percent is how the pages write a share: one decimal, a percent sign.
func Percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// Micros is how the pages write a duration given in microseconds: three
// significant digits in µs, ms or s ("870 µs", "28.7 ms", "1.52 s").
func Micros(us float64) string {
	d := time.Duration(us * float64(time.Microsecond))
	switch {
	case us < 0 || us != us: // NaN
		return "–"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", us)
	case d < time.Second:
		return sig3(us/1e3) + " ms"
	default:
		return sig3(us/1e6) + " s"
	}
}

// sig3 writes f (≥ 1) with three significant digits, or more integer ones.
func sig3(f float64) string {
	switch {
	case f < 10:
		return fmt.Sprintf("%.2f", f)
	case f < 100:
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprintf("%.0f", f)
}

// Bar is one bar of a chart: a group's recall@k.
type Bar struct {
	Label   string
	Queries int
	Recall  float64
	MRR     float64
}

// Miss is a query whose top k lacked a relevant tool.
type Miss struct {
	// ID is the query's ID in its file ("" when it has none); Line its
	// position among the scored queries (1-based).
	ID        string
	Line      int
	Query     string
	Kind      string
	Lang      string
	Relevant  []string
	Shortlist []string
	Recall    float64
	// Rank is where the first relevant tool ranked (0: not within the
	// depth ranked; see [discovery.EvalOptions.RankDepth]).
	Rank int
}

// EvalInfo is what an eval page says was measured, so that two pages can
// be compared.
type EvalInfo struct {
	// Version is the program's version line (toolgate version).
	Version string
	// Catalogs are the catalog sources, as given (files, servers, overlays).
	Catalogs []string
	// Queries is the queries file.
	Queries string
	// Date is when the eval ran.
	Date time.Time
	// RankDepth is how deep misses were ranked (0: only the top k).
	RankDepth int
}

// Server is one namespace's row: the queries whose relevant tools are
// among its tools.
type Server struct {
	Name                 string
	Queries              int
	RecallAt1, RecallAt5 float64
	MRR                  float64
	Misses               int
}

type evalPage struct {
	Title   string
	R       *discovery.Report
	Info    EvalInfo
	Date    string
	ByKind  []Bar
	ByLang  []Bar
	Servers []Server
	Misses  []Miss
	Omitted int
}

// MaxMisses bounds the misses listed on an eval page; the rest are counted.
const MaxMisses = 500

// Eval writes the eval report of r as one HTML page: what was measured
// (info: version, catalogs, queries file, k, date), recall@1/3/5, MRR and
// latency, recall@5 by kind and by language as bar charts, recall@1,
// recall@5 and MRR by server (the relevant tools' namespace), and the
// misses with their query IDs, the rank of the right tool and the
// shortlist each got (r.Details must be filled, as [discovery.Evaluate]
// does). A nil info leaves what was measured out.
func Eval(w io.Writer, title string, r *discovery.Report, info *EvalInfo) error {
	p := evalPage{Title: title, R: r, ByKind: bars(r.ByKind), ByLang: bars(r.ByLang), Servers: servers(r.Details)}
	if info != nil {
		p.Info = *info
		if !info.Date.IsZero() {
			p.Date = info.Date.UTC().Format("2006-01-02 15:04 MST")
		}
	}
	for i, d := range r.Details {
		if d.Query == nil || d.Recall[2] >= 1 {
			continue
		}
		if len(p.Misses) == MaxMisses {
			p.Omitted++
			continue
		}
		p.Misses = append(p.Misses, Miss{ID: d.Query.ID, Line: i + 1, Query: d.Query.Query, Kind: d.Query.Kind, Lang: d.Query.Lang,
			Relevant: d.Query.Relevant, Shortlist: d.Returned, Recall: d.Recall[2], Rank: d.Rank})
	}
	return pages.ExecuteTemplate(w, "eval.html", p)
}

// servers groups the scored queries by the namespaces of their relevant
// tools (a query with tools of two servers counts in both; a bare name is
// its own group, "(any)").
func servers(details []discovery.QueryResult) []Server {
	acc := map[string]*Server{}
	for _, d := range details {
		if d.Query == nil {
			continue
		}
		seen := map[string]bool{}
		for _, id := range d.Query.Relevant {
			ns := "(any)"
			if i := strings.IndexByte(id, '/'); i > 0 {
				ns = id[:i]
			}
			if seen[ns] {
				continue
			}
			seen[ns] = true
			s := acc[ns]
			if s == nil {
				s = &Server{Name: ns}
				acc[ns] = s
			}
			s.Queries++
			s.RecallAt1 += d.Recall[0]
			s.RecallAt5 += d.Recall[2]
			s.MRR += d.RR
			if d.Recall[2] < 1 {
				s.Misses++
			}
		}
	}
	out := make([]Server, 0, len(acc))
	for _, ns := range slices.Sorted(maps.Keys(acc)) {
		s := *acc[ns]
		n := float64(s.Queries)
		s.RecallAt1, s.RecallAt5, s.MRR = s.RecallAt1/n, s.RecallAt5/n, s.MRR/n
		out = append(out, s)
	}
	return out
}

func bars(groups map[string]discovery.Group) []Bar {
	var out []Bar
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		label := k
		if label == "" {
			label = "(none)"
		}
		out = append(out, Bar{Label: label, Queries: g.Queries, Recall: g.RecallAt5, MRR: g.MRR})
	}
	return out
}

// Pair is a near-duplicate pair of cards shown side by side.
type Pair struct {
	A, B       Card
	Similarity float64
	Message    string
}

// Card is what the lint page shows of a tool.
type Card struct {
	ID, Summary, Aliases, NotFor string
}

// ToolFindings are the findings of one tool.
type ToolFindings struct {
	Tool     string
	Findings []lint.Finding
}

type lintPage struct {
	Title  string
	Tools  int
	Counts []KindCount
	Pairs  []Pair
	ByTool []ToolFindings
}

// KindCount is how many findings one kind has.
type KindCount struct {
	Kind  lint.Kind
	Count int
}

// Lint writes the lint report of findings over snap's tools as one HTML
// page: counts by kind, the near-duplicate pairs side by side (summary,
// aliases, not_for of each) and every tool's findings.
func Lint(w io.Writer, title string, snap *tools.Snapshot, findings []lint.Finding) error {
	card := func(id string) Card {
		c := Card{ID: id}
		if i, ok := snap.Lookup(id); ok {
			t := snap.Tool(i)
			c.Summary, c.Aliases, c.NotFor = t.Card.Summary, strings.Join(t.Card.Aliases, "; "), t.Card.NotFor
		}
		return c
	}
	p := lintPage{Title: title, Tools: snap.Len()}
	counts := map[lint.Kind]int{}
	byTool := map[string][]lint.Finding{}
	seen := map[[2]string]bool{}
	for _, f := range findings {
		counts[f.Kind]++
		byTool[f.Tool] = append(byTool[f.Tool], f)
		if f.Kind == lint.NearDuplicate && f.Other != "" {
			key := [2]string{min(f.Tool, f.Other), max(f.Tool, f.Other)}
			if !seen[key] {
				seen[key] = true
				p.Pairs = append(p.Pairs, Pair{A: card(f.Tool), B: card(f.Other), Similarity: f.Similarity, Message: f.Message})
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		p.Counts = append(p.Counts, KindCount{k, counts[k]})
	}
	slices.SortStableFunc(p.Pairs, func(a, b Pair) int { return cmp.Compare(b.Similarity, a.Similarity) })
	for _, id := range slices.Sorted(maps.Keys(byTool)) {
		p.ByTool = append(p.ByTool, ToolFindings{id, byTool[id]})
	}
	return pages.ExecuteTemplate(w, "lint.html", p)
}
