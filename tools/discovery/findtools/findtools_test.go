package findtools_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/findtools"
)

// catalog: two create_issue tools (github and gitlab), a balance tool and
// an admin-only refund tool.
func catalog(t *testing.T) *tools.Registry {
	t.Helper()
	add := func(id, summary string, scopes ...string) tools.Tool {
		return tools.Tool{ID: id, Card: tools.Card{Name: id[strings.Index(id, "/")+1:], Summary: summary, Scopes: scopes},
			InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	return catalogtest.Registry(t,
		add("github/create_issue", "Open a new issue in a GitHub repository"),
		add("gitlab/create_issue", "Open a new issue in a GitLab project"),
		add("bank/get_balance", "Show the current balance of a bank account", "accounts:read"),
		add("bank/issue_full_refund", "Refund a whole transaction to the customer", "billing:admin"),
	)
}

var teller = tools.Principal{ID: "teller", Tenant: "acme", Scopes: []string{"accounts:read"}}

func TestParseArguments(t *testing.T) {
	long := strings.Repeat("a", findtools.MaxQueryBytes+1)
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{`{"query":"refund a payment"}`, "refund a payment", true},
		{`{"query":"select:get_balance"}`, "select:get_balance", true},
		{`{"query":"` + long[:findtools.MaxQueryBytes] + `"}`, long[:findtools.MaxQueryBytes], true},
		{`{"query":"` + long + `"}`, "", false},
		{`{"query":"  "}`, "", false},
		{`{"query":"{"}`, "", false},
		{`{"query":"?! -- ..."}`, "", false},
		{`{"query":"ÅÄÖ"}`, "ÅÄÖ", true},
		{`{"query":"转账"}`, "转账", true},
		{`{"query":"42"}`, "42", true},
		{`{"query":""}`, "", false},
		{`{}`, "", false},
		{`{"query":null}`, "", false},
		{`{"query":["x"]}`, "", false},
		{`{"query":1}`, "", false},
		{`{"query":"a","k":3}`, "", false},
		{`{"query":"a","query":"b"}`, "", false},
		{`{"query":"a"} {"query":"b"}`, "", false},
		{`null`, "", false},
		{`[]`, "", false},
		{`"query"`, "", false},
		{``, "", false},
		{`{"query":"a"`, "", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := findtools.ParseArguments(json.RawMessage(tc.in))
			if tc.ok && (err != nil || got != tc.want) {
				t.Errorf("ParseArguments(%.40s) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			if !tc.ok && !errors.Is(err, findtools.ErrArguments) {
				t.Errorf("ParseArguments(%.40s) = %q, %v; want an ErrArguments", tc.in, got, err)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	view := catalog(t).Snapshot().Authorize(teller)
	for _, tc := range []struct {
		name, want string
		err        error
		candidates []string
	}{
		{name: "bank/get_balance", want: "bank/get_balance"},
		{name: "get_balance", want: "bank/get_balance"},
		{name: "github/create_issue", want: "github/create_issue"},
		{name: "create_issue", candidates: []string{"github/create_issue", "gitlab/create_issue"}},
		// A tool the teller may not use is answered like one that does not exist.
		{name: "bank/issue_full_refund", err: findtools.ErrNotFound},
		{name: "issue_full_refund", err: findtools.ErrNotFound},
		{name: "bank/no_such_tool", err: findtools.ErrNotFound},
		{name: "", err: findtools.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := findtools.Lookup(view, tc.name)
			var amb *findtools.AmbiguousError
			switch {
			case tc.want != "":
				if err != nil || got.ID != tc.want {
					t.Errorf("Lookup(%q) = %v, %v; want %s", tc.name, got, err, tc.want)
				}
			case tc.candidates != nil:
				if !errors.As(err, &amb) || !slices.Equal(amb.Candidates, tc.candidates) {
					t.Errorf("Lookup(%q) = %v, %v; want ambiguous among %v", tc.name, got, err, tc.candidates)
				}
			default:
				if !errors.Is(err, tc.err) || got != nil {
					t.Errorf("Lookup(%q) = %v, %v; want %v", tc.name, got, err, tc.err)
				}
			}
		})
	}
}

func TestSearch(t *testing.T) {
	reg := catalog(t)
	view := reg.Snapshot().Authorize(teller)
	disc, err := discovery.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	alias := func(name string) (string, bool) {
		if name == "github_create_issue" {
			return "github/create_issue", true
		}
		return "", false
	}
	for _, tc := range []struct {
		query     string
		want      []string
		missing   []string
		ambiguous string // "NAME:ID,ID;..."
		selected  bool
	}{
		{query: "select:get_balance", want: []string{"bank/get_balance"}, selected: true},
		{query: " select: get_balance , github_create_issue,get_balance", want: []string{"bank/get_balance", "github/create_issue"}, selected: true},
		{query: "select:issue_full_refund,create_issue,nope", missing: []string{"issue_full_refund", "nope"},
			ambiguous: "create_issue:github/create_issue,gitlab/create_issue", selected: true},
		{query: "select:", selected: true},
		{query: "refund the whole transaction", want: nil},
		{query: "how much money is on my bank account", want: []string{"bank/get_balance"}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			res, err := findtools.Search(t.Context(), disc, view, tc.query, &findtools.Options{K: 1, Alias: alias})
			if err != nil {
				t.Fatalf("Search(%q): %v", tc.query, err)
			}
			var got []string
			for _, tl := range res.Tools {
				got = append(got, tl.ID)
				if tl.ID == "bank/issue_full_refund" {
					t.Errorf("Search(%q) found a tool the teller may not use", tc.query)
				}
			}
			var amb []string
			for _, a := range res.Ambiguous {
				var ids []string
				for _, tl := range a.Tools {
					ids = append(ids, tl.ID)
				}
				amb = append(amb, a.Name+":"+strings.Join(ids, ","))
			}
			if tc.want != nil && !slices.Equal(got, tc.want) || res.Selected != tc.selected || !slices.Equal(res.Missing, tc.missing) ||
				strings.Join(amb, ";") != tc.ambiguous {
				t.Errorf("Search(%q) = %v (selected %v, missing %v, ambiguous %v), want %v (selected %v, missing %v, ambiguous %v)",
					tc.query, got, res.Selected, res.Missing, amb, tc.want, tc.selected, tc.missing, tc.ambiguous)
			}
		})
	}
}

func TestAnswer(t *testing.T) {
	view := catalog(t).Snapshot().Authorize(tools.Principal{ID: "a", Tenant: "acme", Scopes: []string{"accounts:read", "billing:admin"}})
	refund, _ := view.Get("bank/issue_full_refund")
	refund.Card.Irreversible = true
	got := findtools.Answer(&findtools.Result{Tools: []*tools.Tool{refund}, Missing: []string{"x"}},
		func(t *tools.Tool) string { return t.Name() }, "call it next")
	want := `{"tools":[{"name":"issue_full_refund","summary":"Refund a whole transaction to the customer","irreversible":true}],"missing":["x"],"note":"call it next"}`
	if got != want {
		t.Errorf("Answer = %s\nwant     %s", got, want)
	}
	gh, _ := view.Get("github/create_issue")
	gl, _ := view.Get("gitlab/create_issue")
	got = findtools.Answer(&findtools.Result{Selected: true, Ambiguous: []findtools.Ambiguity{{Name: "create_issue", Tools: []*tools.Tool{gh, gl}}}},
		func(t *tools.Tool) string { return strings.ReplaceAll(t.ID, "/", "__") }, "")
	want = `{"tools":[],"ambiguous":{"create_issue":["github__create_issue","gitlab__create_issue"]},"note":"` +
		strings.ReplaceAll(findtools.AmbiguousNote, `"`, `\"`) + `"}`
	if got != want {
		t.Errorf("Answer of an ambiguous select: = %s\nwant %s", got, want)
	}
	if got := findtools.Answer(&findtools.Result{Selected: true}, nil, ""); got != `{"tools":[]}` {
		t.Errorf("Answer of an empty select: = %s, want {\"tools\":[]}", got)
	}
}

// TestSearchMatchingNothing: a search whose words match no tool finds
// none, and the answer tells the model to rephrase.
func TestSearchMatchingNothing(t *testing.T) {
	view := catalog(t).Snapshot().Authorize(teller)
	disc, err := discovery.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, query := range []string{"😀😀 🎉", "the of and"} {
		t.Run(query, func(t *testing.T) {
			res, err := findtools.Search(t.Context(), disc, view, query, &findtools.Options{K: 5})
			if err != nil {
				t.Fatal(err)
			}
			got := findtools.Answer(res, func(t *tools.Tool) string { return t.ID }, "found tools can be called next")
			want := `{"tools":[],"note":` + string(must(json.Marshal(findtools.NoMatchNote))) + `}`
			if got != want {
				t.Errorf("Answer(Search(%q)) = %s\nwant %s", query, got, want)
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestSchemaIsStrict(t *testing.T) {
	var s struct {
		Type                 string
		Required             []string
		AdditionalProperties *bool
	}
	if err := json.Unmarshal(findtools.Schema, &s); err != nil || s.Type != "object" ||
		!slices.Equal(s.Required, []string{"query"}) || s.AdditionalProperties == nil || *s.AdditionalProperties {
		t.Errorf("Schema = %s (%v), want a closed object requiring query", findtools.Schema, err)
	}
}

func FuzzParseArguments(f *testing.F) {
	for _, s := range []string{`{"query":"refund"}`, `{"query":"a","query":"b"}`, `{"query":null}`, `[]`, `null`, `{"query":"select:a,b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		q, err := findtools.ParseArguments(in)
		if err != nil {
			if !errors.Is(err, findtools.ErrArguments) {
				t.Fatalf("ParseArguments(%q) error %v is not an ErrArguments", in, err)
			}
			return
		}
		if strings.TrimSpace(q) == "" || len(q) > findtools.MaxQueryBytes || !strings.ContainsFunc(q, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			t.Fatalf("ParseArguments(%q) accepted the query %q", in, q)
		}
		var v map[string]json.RawMessage
		if json.Unmarshal(in, &v) != nil || len(v) != 1 {
			t.Fatalf("ParseArguments(%q) accepted a document that is not {\"query\"}", in)
		}
	})
}
