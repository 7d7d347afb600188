package docsnippets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/cards"
	"github.com/toolgate/toolgate/tools/catalog"
	"github.com/toolgate/toolgate/tools/discovery"
)

// discoverMarker is a documented discovery example made machine-readable:
// an HTML comment (invisible on the rendered page) next to the command it
// checks,
//
//	<!-- discover-example {"query":"…","tools":["NS=FILE or a glob"],"cards":[{…}],"first":"ns/tool"} -->
//
// whose request, run through the default discoverer over the catalog
// files (relative to the repository root) with the card overlay entries
// (a missing hash is the tool's, as `toolgate cards hash` writes it), by
// a caller holding every scope (or "scopes"), must rank "first" first.
var discoverMarker = regexp.MustCompile(`<!-- discover-example (\{.*?\}) -->`)

type discoverExample struct {
	Query  string        `json:"query"`
	Tools  []string      `json:"tools"`
	Cards  []cards.Entry `json:"cards"`
	Scopes []string      `json:"scopes"`
	First  string        `json:"first"`
}

// TestDocumentedDiscoveries runs every discover-example of README.md and
// docs/*.md: each documented request must put its documented tool first.
func TestDocumentedDiscoveries(t *testing.T) {
	repo := root(t)
	docs, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	docs = append([]string{filepath.Join(repo, "README.md")}, docs...)
	d, err := discovery.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repo, doc)
		for _, m := range discoverMarker.FindAllSubmatchIndex(text, -1) {
			line := 1 + bytes.Count(text[:m[0]], []byte("\n"))
			var ex discoverExample
			dec := json.NewDecoder(bytes.NewReader(text[m[2]:m[3]]))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&ex); err != nil || ex.Query == "" || len(ex.Tools) == 0 || ex.First == "" {
				t.Errorf("%s:%d: discover-example wants query, tools and first (%v)", rel, line, err)
				continue
			}
			n++
			t.Run(fmt.Sprintf("%s:%d", rel, line), func(t *testing.T) {
				view, err := exampleView(repo, &ex)
				if err != nil {
					t.Fatalf("%s:%d: %v", rel, line, err)
				}
				sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: ex.Query, K: 5})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, c := range sl.Candidates {
					got = append(got, c.Tool.ID)
				}
				if len(got) == 0 || got[0] != ex.First {
					t.Errorf("%s:%d: %q ranks %v, the docs say %s first", rel, line, ex.Query, got, ex.First)
				}
			})
		}
	}
	if n < 4 {
		t.Errorf("found %d discover-example markers in README.md and docs/*.md, want the documented ones (at least 4)", n)
	}
}

// exampleView is the catalog of ex with its overlay, as its caller sees it.
func exampleView(repo string, ex *discoverExample) (*tools.View, error) {
	var specs []string
	for _, spec := range ex.Tools {
		path, ns := catalog.ParseSpec(spec)
		files, err := filepath.Glob(filepath.Join(repo, path))
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("tools %q: no such file", spec)
		}
		for _, f := range files {
			if strings.Contains(spec, "=") {
				f = ns + "=" + f
			}
			specs = append(specs, f)
		}
	}
	ts, err := catalog.LoadAll(specs...)
	if err != nil {
		return nil, err
	}
	if len(ex.Cards) > 0 {
		byID := map[string]*tools.Tool{}
		for i := range ts {
			byID[ts[i].ID] = &ts[i]
		}
		entries := append([]cards.Entry(nil), ex.Cards...)
		for i := range entries {
			if t, ok := byID[entries[i].Tool]; ok && entries[i].Hash == "" {
				entries[i].Hash = cards.Hash(t)
			}
		}
		ov, err := cards.New(entries)
		if err != nil {
			return nil, err
		}
		var rep *cards.Report
		if ts, rep = ov.Apply(ts); len(rep.Problems()) > 0 {
			return nil, fmt.Errorf("cards: %v", rep.Problems())
		}
	}
	reg := tools.NewRegistry()
	if err := reg.Add(ts...); err != nil {
		return nil, err
	}
	snap := reg.Snapshot()
	scopes := ex.Scopes
	if scopes == nil {
		scopes = snap.Scopes()
	}
	return snap.Authorize(tools.Principal{ID: "docs", Tenant: "docs", Scopes: scopes}), nil
}
