package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDiscoverMatchingNothing: a request that matches no tool prints an
// empty shortlist (the JSON contract's every member, "candidates": []),
// says so in one line on stderr and exits 1, a negative result.
func TestDiscoverMatchingNothing(t *testing.T) {
	cat := writeFile(t, "github.json", `{"tools":[`+
		`{"name":"create_issue","description":"Create a new issue in a GitHub repository"},`+
		`{"name":"list_issues","description":"List issues in a GitHub repository"}]}`)
	for _, q := range []string{"😀😀", "\x01\x02", "the of and"} {
		t.Run(q, func(t *testing.T) {
			code, out, errOut := runCmd("discover", "--tools", cat, "--format", "json", q)
			var got map[string]json.RawMessage
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("discover %q --format json: %v in %q", q, err, out)
			}
			var missing []string
			for _, member := range []string{"query", "authorized", "shortlist_tokens", "catalog_tokens", "reformulated"} {
				if _, ok := got[member]; !ok {
					missing = append(missing, member)
				}
			}
			if len(missing) > 0 {
				t.Errorf("discover %q: no %q in %s", q, missing, out)
			}
			if code != exitNegative || string(got["candidates"]) != "[]" || string(got["authorized"]) != "2" {
				t.Errorf("discover %q = exit %d, %s; want exit 1, \"candidates\": [] of 2 authorized", q, code, out)
			}
			if !strings.HasPrefix(errOut, "toolgate discover: no tool matches ") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr = %q, want one line \"toolgate discover: no tool matches ...\"", errOut)
			}
			code, out, errOut = runCmd("discover", "--tools", cat, q)
			if code != exitNegative || !strings.Contains(out, "0 of 2 authorized tools") || strings.Contains(out, "RANK") ||
				!strings.HasPrefix(errOut, "toolgate discover: no tool matches ") {
				t.Errorf("discover %q (text) = exit %d, stdout %q, stderr %q; want exit 1, no table, the summary and the reason", q, code, out, errOut)
			}
		})
	}
	// A request that matches one of the two tools gets that one.
	code, out, _ := runCmd("discover", "--tools", cat, "--format", "json", "--k", "5", "create")
	var got discoverOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK || len(got.Candidates) != 1 || got.Candidates[0].Name != "github/create_issue" {
		t.Errorf("discover create = exit %d, %s; want github/create_issue alone", code, out)
	}
}

// TestEvalQueryMatchingNothing: a query whose shortlist is empty scores 0.
func TestEvalQueryMatchingNothing(t *testing.T) {
	cat := writeFile(t, "github.json", `{"tools":[{"name":"create_issue","description":"Create a new issue in a GitHub repository"}]}`)
	queries := writeFile(t, "q.jsonl", `{"query":"open an issue","relevant":["create_issue"]}`+"\n"+`{"query":"😀😀","relevant":["create_issue"]}`+"\n")
	code, out, errOut := runCmd("eval", "--tools", cat, "--queries", queries, "--format", "json")
	var got struct {
		Queries int     `json:"queries"`
		Recall5 float64 `json:"recall_at_5"`
		MRR     float64 `json:"mrr"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK || got.Queries != 2 || got.Recall5 != 0.5 || got.MRR != 0.5 {
		t.Errorf("eval = exit %d, %s (stderr %q); want 2 queries, recall@5 0.5, MRR 0.5", code, out, errOut)
	}
}
