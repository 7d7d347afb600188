package discovery

import (
	"testing"

	"github.com/toolgate/toolgate/tools"
)

func TestSameWords(t *testing.T) {
	for _, row := range []struct {
		name, a, b string
		want       bool
	}{
		{"equal", "open a pull request", "open a pull request", true},
		{"case and separators", "Open a  pull-request!", "open a pull request", true},
		{"unicode case", "ÉTAT du système", "état du SYSTÈME", true},
		{"one word more", "open a pull request now", "open a pull request", false},
		{"one word less", "open a pull", "open a pull request", false},
		{"word split differently", "pullrequest", "pull request", false},
		{"prefix of a word", "open a pull req", "open a pull request", false},
		{"abbreviation", "open a PR", "open a pull request", false},
		{"empty", "", "", false},
		{"only separators", "?!", " - ", false},
	} {
		t.Run(row.name, func(t *testing.T) {
			if got := sameWords(row.a, row.b); got != row.want {
				t.Errorf("sameWords(%q, %q) = %v, want %v", row.a, row.b, got, row.want)
			}
			if got := sameWords(row.b, row.a); got != row.want {
				t.Errorf("sameWords(%q, %q) = %v, want %v (not symmetric)", row.b, row.a, got, row.want)
			}
		})
	}
}

func FuzzSameWords(f *testing.F) {
	f.Add("open a pull request", "Open a pull-request!")
	f.Add("ÉTAT", "état")
	f.Add("a\xffb", "a b")
	f.Fuzz(func(t *testing.T, a, b string) {
		if sameWords(a, b) != sameWords(b, a) {
			t.Fatalf("sameWords(%q, %q) is not symmetric", a, b)
		}
		if sameWords(a, a) != (skipSeparators(a, 0) < len(a)) {
			t.Fatalf("sameWords(%q, itself) = %v, want true exactly when it has a word", a, sameWords(a, a))
		}
	})
}

func TestExactExample(t *testing.T) {
	tool := func(id string, examples ...string) *tools.Tool {
		return &tools.Tool{ID: id, Card: tools.Card{Examples: examples}}
	}
	cands := func(ts ...*tools.Tool) []Candidate {
		out := make([]Candidate, len(ts))
		for i, t := range ts {
			out[i] = Candidate{Tool: t, Score: 1 - 0.1*float64(i)}
		}
		return out
	}
	ids := func(cs []Candidate) (out []string) {
		for _, c := range cs {
			out = append(out, c.Tool.ID)
		}
		return out
	}
	for _, row := range []struct {
		name  string
		query string
		in    []Candidate
		want  []string
	}{
		{"example third moves first", "Open a pull request", cands(tool("a"), tool("b", "open a PR"), tool("c", "make a PR", "open a pull-request")), []string{"c", "a", "b"}},
		{"first already has it", "open a pull request", cands(tool("a", "open a pull request"), tool("b", "open a pull request")), []string{"a", "b"}},
		{"only a longer example", "open a pull request", cands(tool("a"), tool("b", "open a pull request for my branch")), []string{"a", "b"}},
		{"no example", "open a pull request", cands(tool("a"), tool("b")), []string{"a", "b"}},
		{"a catalog alias is not an example", "open a pull request", cands(tool("a"), &tools.Tool{ID: "b", Card: tools.Card{Aliases: []string{"open a pull request"}}}), []string{"a", "b"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			if i := exactExample(row.query, row.in, func(c Candidate) *tools.Tool { return c.Tool }); i > 0 {
				row.in[i].Score = max(row.in[i].Score, row.in[0].Score)
				moveFirst(row.in, i)
			}
			got := ids(row.in)
			if len(got) != len(row.want) {
				t.Fatalf("got %v, want %v", got, row.want)
			}
			for i := range got {
				if got[i] != row.want[i] {
					t.Fatalf("got %v, want %v", got, row.want)
				}
			}
			for i := 1; i < len(row.in); i++ {
				if row.in[i].Score > row.in[i-1].Score {
					t.Errorf("scores not non-increasing: %v", row.in)
				}
			}
		})
	}
}
