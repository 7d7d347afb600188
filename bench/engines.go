package main

import (
	"context"
	"database/sql"
	"regexp"
	"sort"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
	_ "modernc.org/sqlite"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// k is the shortlist size every engine returns.
const k = 5

// search returns the IDs of up to k tools for a request, best first.
type search func(q string) ([]string, error)

// engine is one retrieval system under comparison: its name and a
// constructor that indexes a snapshot and returns its search function and a
// function releasing what it holds.
type engine struct {
	name string
	open func(snap *tools.Snapshot) (search, func(), error)
}

// engines lists the systems compared, in table order.
var engines = []engine{
	{"toolgate", func(s *tools.Snapshot) (search, func(), error) { return newToolgate(s, nil) }},
	{"toolgate lexical", func(s *tools.Snapshot) (search, func(), error) {
		return newToolgate(s, &discovery.Options{Method: discovery.MethodLexical})
	}},
	{"sqlite fts5", newFTS},
	{"bleve", func(s *tools.Snapshot) (search, func(), error) { return newBleve(s, "") }},
	{"bleve bm25", func(s *tools.Snapshot) (search, func(), error) { return newBleve(s, index.BM25Scoring) }},
}

// card is the text every lexical baseline indexes for a tool: its name split
// on separators and its description (the card summary when empty).
func card(t *tools.Tool) (name, desc string) {
	name = strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(t.Name())
	desc = t.Description
	if desc == "" {
		desc = t.Card.Summary
	}
	return name, desc
}

// newToolgate indexes the snapshot with a Discoverer of opts (nil: the
// default, no model) and shortlists for one principal that sees every tool.
func newToolgate(snap *tools.Snapshot, opts *discovery.Options) (search, func(), error) {
	d, err := discovery.New(opts)
	if err != nil {
		return nil, nil, err
	}
	if _, err := d.Index(context.Background(), snap); err != nil {
		return nil, nil, err
	}
	view := snap.Authorize(tools.Principal{ID: "b", Tenant: "b"})
	fn := func(q string) ([]string, error) {
		sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: q, K: k})
		if err != nil {
			return nil, err
		}
		out := make([]string, len(sl.Candidates))
		for i, c := range sl.Candidates {
			out[i] = c.Tool.ID
		}
		return out, nil
	}
	return fn, func() {}, nil
}

var words = regexp.MustCompile(`[\pL\pN]+`)

// newFTS indexes the snapshot's tools in an in-memory FTS5 table (name split
// on separators, description; porter stemming) and returns a search
// function ranking by FTS5's bm25() over the request's words, ORed.
func newFTS(snap *tools.Snapshot) (search, func(), error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, name, description, tokenize = 'porter unicode61')`); err != nil {
		db.Close()
		return nil, nil, err
	}
	tx, err := db.Begin()
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	for _, t := range snap.Tools() {
		name, desc := card(t)
		if _, err := tx.Exec(`INSERT INTO t(id, name, description) VALUES (?, ?, ?)`, t.ID, name, desc); err != nil {
			tx.Rollback()
			db.Close()
			return nil, nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		db.Close()
		return nil, nil, err
	}
	stmt, err := db.Prepare(`SELECT id FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 5`)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	fn := func(q string) ([]string, error) {
		ws := words.FindAllString(strings.ToLower(q), -1)
		if len(ws) == 0 {
			return nil, nil
		}
		for i, w := range ws {
			ws[i] = `"` + w + `"`
		}
		rows, err := stmt.Query(strings.Join(ws, " OR "))
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return nil, err
			}
			out = append(out, id)
		}
		return out, rows.Err()
	}
	return fn, func() { stmt.Close(); db.Close() }, nil
}

// bleveDoc is the document Bleve indexes per tool: the same text as the FTS5
// table (split name, description) plus the raw name as a keyword.
type bleveDoc struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Tool        string `json:"tool"`
}

// newBleve indexes the snapshot's tools in an in-memory Scorch index (English
// analyzer — possessives, lower case, stop words, Porter stemming — on the
// split name and the description; the raw name as a keyword field) and
// returns a search function: a disjunction of match queries (terms ORed)
// over the three fields, top k by score then ID. scoring is the index's scoring model: "" for
// Bleve's default (TF-IDF) or index.BM25Scoring.
func newBleve(snap *tools.Snapshot, scoring string) (search, func(), error) {
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = false
	text.IncludeTermVectors = false
	kw := bleve.NewKeywordFieldMapping()
	kw.Analyzer = keyword.Name
	kw.Store = false
	doc := bleve.NewDocumentMapping()
	doc.AddFieldMappingsAt("name", text)
	doc.AddFieldMappingsAt("description", text)
	doc.AddFieldMappingsAt("tool", kw)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = en.AnalyzerName
	m.ScoringModel = scoring
	// Scorch, Bleve's default index type, kept in memory (an empty path).
	// bleve.NewMemOnly's upsidedown store has no field statistics, so
	// BM25 would silently fall back to TF-IDF there.
	idx, err := bleve.NewUsing("", m, scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, nil, err
	}
	b := idx.NewBatch()
	for _, t := range snap.Tools() {
		name, desc := card(t)
		if err := b.Index(t.ID, bleveDoc{Name: name, Description: desc, Tool: t.Name()}); err != nil {
			idx.Close()
			return nil, nil, err
		}
	}
	if err := idx.Batch(b); err != nil {
		idx.Close()
		return nil, nil, err
	}
	fn := func(q string) ([]string, error) {
		var qs []query.Query
		for _, f := range []string{"name", "description", "tool"} {
			mq := bleve.NewMatchQuery(q)
			mq.SetField(f)
			qs = append(qs, mq)
		}
		// Scores of near-duplicate tools differ only in their last bits,
		// and those bits vary between runs (a Bleve batch is a Go map, so
		// documents land in Scorch in a different order each run), so
		// scores are compared at float32 precision and ties broken by ID,
		// over twice k hits.
		req := bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(qs...), 2*k, 0, false)
		res, err := idx.Search(req)
		if err != nil {
			return nil, err
		}
		hits := res.Hits
		sort.SliceStable(hits, func(i, j int) bool {
			si, sj := float32(hits[i].Score), float32(hits[j].Score)
			if si != sj {
				return si > sj
			}
			return hits[i].ID < hits[j].ID
		})
		out := make([]string, 0, k)
		for _, h := range hits[:min(k, len(hits))] {
			out = append(out, h.ID)
		}
		return out, nil
	}
	return fn, func() { idx.Close() }, nil
}
