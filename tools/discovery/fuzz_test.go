package discovery_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// FuzzReadQueries: any input either parses into queries with a non-empty
// text or fails with a *QueryError naming a line of the input.
func FuzzReadQueries(f *testing.F) {
	for _, s := range []string{
		"{\"query\":\"a\",\"relevant\":[\"x\"]}\n",
		"\n\n{\"query\":\"b\",\"relevant\":[],\"scopes\":[\"s\"],\"kind\":\"k\",\"lang\":\"es\"}",
		"{\"query\":\"\"}", "not json", "{\"query\":1}", "{} {}", "[1,2]",
		"{\"query\":\"a\",\"scopes\":[\"admin\"],\"scopes\":[]}", "{\"query\":\"a\",\"x\":{\"y\":1,\"y\":2}}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		qs, err := discovery.ReadQueries(strings.NewReader(in), "f.jsonl")
		if err != nil {
			var qe *discovery.QueryError
			if !errors.As(err, &qe) || qe.Line < 1 || qe.Line > strings.Count(in, "\n")+1 {
				t.Fatalf("ReadQueries(%q) err = %v, want a *QueryError on a line of the input", in, err)
			}
			return
		}
		for _, q := range qs {
			if q.Query == "" {
				t.Fatalf("ReadQueries(%q) returned an empty query", in)
			}
		}
		for _, line := range strings.Split(in, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				if _, err := jcs.Parse([]byte(line)); err != nil {
					t.Fatalf("ReadQueries(%q) accepted line %q, which has no one meaning: %v", in, line, err)
				}
			}
		}
	})
}

// FuzzShortlist: any request text is answered without error, within K,
// and only with authorized tools.
func FuzzShortlist(f *testing.F) {
	for _, s := range []string{"close issue #4521", "ACC-12345 → INV-1024", "https://x.y/z?q=1 ana@example.com ./a/b.txt",
		"owner/repo#12", "crea una carpeta", "zrób zrzut ekranu", "", "\x00\xff", strings.Repeat("a/", 3000),
		"text +1 (415) 555-0100 now", "¿qué tablas hay?", "jakie konta", "ábreme la cuenta ACC-12345",
		"post to #general that SELECT * FROM t is slow", "#é #ó (#x) C# #42"} {
		f.Add(s)
	}
	a := tool("bank/get_account", "Look up an account", "accounts:read")
	a.InputSchema = []byte(`{"type":"object","properties":{"account":{"type":"string","pattern":"^ACC-[0-9]{5}$"}}}`)
	// A tool that takes a chat channel and one that takes SQL: the
	// identifier kinds looked for only in a catalog with such a tool.
	post := tool("chat/post", "Post a message to a channel")
	post.InputSchema = []byte(`{"type":"object","properties":{"channel_id":{"type":"string"},"text":{"type":"string"}}}`)
	query := tool("db/query", "Run a query")
	query.InputSchema = []byte(`{"type":"object","properties":{"sql":{"type":"string"}}}`)
	snap := catalogtest.Registry(f, a, tool("bank/refund", "Refund a payment", "billing:admin"), tool("web/open", "Open a web page"), post, query).Snapshot()
	view := snap.Authorize(tools.Principal{ID: "u", Tenant: "t", Scopes: []string{"accounts:read"}})
	d := newDiscoverer(f, &discovery.Options{ReformulateBelow: 0.9})
	// A default k of 1: a request that matches a card by its words is not
	// scanned by the dense side, and asked for 4 gets the others by cosine
	// after the ranked one (fillDense).
	one := newDiscoverer(f, &discovery.Options{K: 1, ReformulateBelow: 0.9})
	f.Fuzz(func(t *testing.T, q string) {
		sl, err := d.Shortlist(context.Background(), view, discovery.Request{Query: q, K: 2, Context: []string{q}})
		if err != nil {
			t.Fatalf("Shortlist(%q): %v", q, err)
		}
		if len(sl.Candidates) > 2 {
			t.Fatalf("Shortlist(%q) returned %d candidates, want at most 2", q, len(sl.Candidates))
		}
		for _, c := range sl.Candidates {
			if c.Tool.ID == "bank/refund" {
				t.Fatalf("Shortlist(%q) returned the unauthorized bank/refund", q)
			}
		}
		top, err := one.Shortlist(context.Background(), view, discovery.Request{Query: q, K: 1})
		if err != nil {
			t.Fatalf("Shortlist(%q, K=1): %v", q, err)
		}
		four, err := one.Shortlist(context.Background(), view, discovery.Request{Query: q, K: 4})
		if err != nil {
			t.Fatalf("Shortlist(%q, K=4): %v", q, err)
		}
		if len(four.Candidates) > 4 {
			t.Fatalf("Shortlist(%q, K=4) returned %d candidates", q, len(four.Candidates))
		}
		seen := map[string]bool{}
		for i, c := range four.Candidates {
			if c.Tool.ID == "bank/refund" || seen[c.Tool.ID] {
				t.Fatalf("Shortlist(%q, K=4) = %v: unauthorized or repeated %s", q, ids(four), c.Tool.ID)
			}
			seen[c.Tool.ID] = true
			if i > 0 && c.Score > four.Candidates[i-1].Score {
				t.Fatalf("Shortlist(%q, K=4) = %v: scores rise at %s", q, ids(four), c.Tool.ID)
			}
		}
		if len(top.Candidates) > 0 && (len(four.Candidates) == 0 || four.Candidates[0].Tool.ID != top.Candidates[0].Tool.ID) {
			t.Fatalf("Shortlist(%q): K=1 ranks %v first, K=4 ranks %v", q, ids(top), ids(four))
		}
	})
}
