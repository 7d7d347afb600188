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

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/lint"
)

//go:embed templates/*.html
var files embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"pct":   Percent,
	"num":   func(f float64) string { return fmt.Sprintf("%.3f", f) },
	"join":  func(s []string) string { return strings.Join(s, ", ") },
	"width": func(f float64, max int) int { return int(f*float64(max) + 0.5) },
	"add":   func(a, b int) int { return a + b },
	"mul":   func(a, b int) int { return a * b },
	"in":    slices.Contains[[]string],
}).ParseFS(files, "templates/*.html"))

// Percent is how the pages write a share: one decimal, a percent sign.
func Percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// Bar is one bar of a chart: a group's recall@k.
type Bar struct {
	Label   string
	Queries int
	Recall  float64
	MRR     float64
}

// Miss is a query whose top k lacked a relevant tool.
type Miss struct {
	Query     string
	Kind      string
	Lang      string
	Relevant  []string
	Shortlist []string
	Recall    float64
}

type evalPage struct {
	Title   string
	R       *discovery.Report
	ByKind  []Bar
	ByLang  []Bar
	Misses  []Miss
	Omitted int
}

// MaxMisses bounds the misses listed on an eval page; the rest are counted.
const MaxMisses = 500

// Eval writes the eval report of r as one HTML page: recall@1/3/5, MRR
// and latency, recall@k by kind and by language as bar charts, and the
// misses with the shortlist each got (r.Details must be filled, as
// [discovery.Evaluate] does).
func Eval(w io.Writer, title string, r *discovery.Report) error {
	p := evalPage{Title: title, R: r, ByKind: bars(r.ByKind), ByLang: bars(r.ByLang)}
	for _, d := range r.Details {
		if d.Query == nil || d.Recall[2] >= 1 {
			continue
		}
		if len(p.Misses) == MaxMisses {
			p.Omitted++
			continue
		}
		p.Misses = append(p.Misses, Miss{Query: d.Query.Query, Kind: d.Query.Kind, Lang: d.Query.Lang,
			Relevant: d.Query.Relevant, Shortlist: d.Returned, Recall: d.Recall[2]})
	}
	return pages.ExecuteTemplate(w, "eval.html", p)
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
