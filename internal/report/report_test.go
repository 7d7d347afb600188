package report_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/report"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/lint"
)

// hostile is a string from a catalog or a user that must reach the page
// as text, never as markup.
const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)>`

func fixture(t *testing.T) (*tools.Snapshot, []discovery.Query) {
	t.Helper()
	reg := tools.NewRegistry()
	add := func(id, summary string, aliases ...string) {
		name := id[strings.IndexByte(id, '/')+1:]
		if err := reg.Add(tools.Tool{ID: id, Card: tools.Card{Name: name, Summary: summary, Aliases: aliases}}); err != nil {
			t.Fatal(err)
		}
	}
	add("github/create_issue", "Create a new issue in a GitHub repository")
	add("gitlab/create_issue", "Create a new issue in a GitLab repository")
	add("slack/post_message", "Post a message to a Slack channel", "send to slack")
	add("weather/get_forecast", "Weather forecast for a city "+hostile)
	queries := []discovery.Query{
		{ID: "gh-1", Query: "open a bug on github", Relevant: []string{"github/create_issue"}, Kind: "paraphrase", Lang: "en"},
		{ID: "slack-1", Query: "tell the team on slack", Relevant: []string{"slack/post_message"}, Kind: "paraphrase", Lang: "en"},
		{ID: "weather-es-1", Query: "¿lloverá mañana en Madrid?", Relevant: []string{"weather/get_forecast"}, Kind: "question", Lang: "es"},
		{ID: "hostile-1", Query: hostile, Relevant: []string{"gitlab/create_issue"}, Kind: "hostile", Lang: "en"},
		// The right tool ranked below the top k: the page gives its rank.
		{ID: "deep-1", Query: "create a new issue in the repository, then a message", Relevant: []string{"slack/post_message"}, Kind: "plain", Lang: "en"},
		// A tool the catalog lacks: a miss whatever discovery ranks, so the
		// misses table always has a row to check.
		{ID: "jira-1", Query: "archive the old \"Q3\" tickets", Relevant: []string{"jira/archive_ticket"}, Kind: "plain", Lang: "en"},
	}
	return reg.Snapshot(), queries
}

func evalPage(t *testing.T) (string, *discovery.Report) {
	t.Helper()
	snap, queries := fixture(t)
	d, err := discovery.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := discovery.Evaluate(context.Background(), d, snap, queries, &discovery.EvalOptions{K: 2, RankDepth: 10})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.Eval(&b, "eval: fixture", r, fixtureInfo); err != nil {
		t.Fatal(err)
	}
	return b.String(), r
}

// fixtureInfo is what the fixture's eval page says was measured.
var fixtureInfo = &report.EvalInfo{Version: "toolgate v9.8.7 go1.26.0", Catalogs: []string{"github=gh.json", "cards team.jsonl"},
	Queries: "testdata/fixture.jsonl", Date: time.Date(2026, 12, 3, 10, 30, 0, 0, time.UTC), RankDepth: 10}

// evalParts are what an eval page must show of r (and fixtureInfo), as
// they appear in its HTML: what was measured, the figures with readable
// durations, the per-server table, and each miss's ID and rank.
func evalParts(t *testing.T, r *discovery.Report) []string {
	t.Helper()
	parts := []string{`id="measured"`, "What was measured", fixtureInfo.Version, "github=gh.json", "cards team.jsonl",
		fixtureInfo.Queries, "2026-12-03 10:30 UTC", fmt.Sprintf("<th>k</th><td>%d tools", r.K), `id="recall1"`, report.Percent(r.RecallAt1), `id="mrr"`,
		fmt.Sprintf("%.3f", r.MRR), report.Micros(r.P50us), report.Micros(r.P99us), `id="servers"`, "By server",
		"<code>github</code>", "<code>slack</code>", "<code>jira</code>"}
	misses, ranked := 0, 0
	for _, d := range r.Details {
		if d.Recall[2] >= 1 {
			continue
		}
		misses++
		rank := "not in top 10"
		if d.Rank > 0 {
			ranked++
			rank = fmt.Sprint(d.Rank)
		}
		parts = append(parts, "<code>"+d.Query.ID+"</code>", `<td class="n rank">`+rank+"</td>")
	}
	if misses == 0 || ranked == 0 {
		t.Fatalf("the fixture has %d misses, %d ranked below the top k: the test checks too little of the misses table", misses, ranked)
	}
	return parts
}

func TestMicros(t *testing.T) {
	for _, row := range []struct {
		us   float64
		want string
	}{
		{0, "0 µs"}, {12.4, "12 µs"}, {999.4, "999 µs"}, {1000, "1.00 ms"}, {1534, "1.53 ms"}, {28677, "28.7 ms"},
		{286770, "287 ms"}, {1.52e6, "1.52 s"}, {95e6, "95.0 s"}, {-1, "–"},
	} {
		t.Run(row.want, func(t *testing.T) {
			if got := report.Micros(row.us); got != row.want {
				t.Errorf("Micros(%v) = %q, want %q", row.us, got, row.want)
			}
		})
	}
}

func lintPage(t *testing.T) (string, []lint.Finding) {
	t.Helper()
	snap, _ := fixture(t)
	findings, err := lint.Check(context.Background(), snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.Lint(&b, "lint: fixture", snap, findings); err != nil {
		t.Fatal(err)
	}
	return b.String(), findings
}

func TestEvalPage(t *testing.T) {
	page, r := evalPage(t)
	for _, want := range []string{
		"<!DOCTYPE html>", "<svg", "recall@5", "Recall@5 by kind", "Recall@5 by language", "paraphrase", "es (1)",
	} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(page, want) {
				t.Errorf("the eval page lacks %q", want)
			}
		})
	}
	for _, want := range evalParts(t, r) {
		if !strings.Contains(page, want) {
			t.Errorf("the eval page lacks %q", want)
		}
	}
	misses := 0
	for _, d := range r.Details {
		if d.Recall[2] < 1 {
			misses++
			if !strings.Contains(page, strings.ReplaceAll(d.Query.Query, `"`, "&#34;")) && d.Query.Query != hostile {
				t.Errorf("the miss %q is not listed", d.Query.Query)
			}
		}
	}
	if misses == 0 {
		t.Fatal("the fixture has no miss: the test checks nothing of the misses table")
	}
	checkSelfContained(t, page)
}

func TestLintPage(t *testing.T) {
	page, findings := lintPage(t)
	var dup *lint.Finding
	for i, f := range findings {
		if f.Kind == lint.NearDuplicate {
			dup = &findings[i]
		}
	}
	if dup == nil {
		t.Fatal("lint found no near-duplicate in the fixture (github and gitlab create_issue)")
	}
	for _, want := range []string{"Near-duplicate cards", dup.Tool, dup.Other, "Create a new issue in a GitLab repository", "Findings by tool"} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(page, want) {
				t.Errorf("the lint page lacks %q", want)
			}
		})
	}
	checkSelfContained(t, page)
}

// checkSelfContained checks that the page loads nothing from anywhere and
// that catalog and user strings were escaped.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"<script", "<img", "<link", "http://", "https://", "@import", "url("} {
		t.Run(bad, func(t *testing.T) {
			if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
				t.Errorf("the page contains %q: it must be self-contained and escape what it shows", bad)
			}
		})
	}
}

// TestPagesInChromium opens both pages in headless Chromium: each loads,
// its DOM holds the figures, and a screenshot is taken (kept under
// $TOOLGATE_REPORT_DIR when set, for a person to look at).
func TestPagesInChromium(t *testing.T) {
	chromium := testenv.Chromium(t)
	dir := os.Getenv("TOOLGATE_REPORT_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	evalHTML, r := evalPage(t)
	lintHTML, _ := lintPage(t)
	for _, page := range []struct {
		name, html string
		want       []string
	}{
		{"eval", evalHTML, append([]string{`id="recall5"`, report.Percent(r.RecallAt5), "<svg", "<rect"}, evalParts(t, r)...)},
		{"lint", lintHTML, []string{"Near-duplicate cards", `class="pair"`}},
	} {
		t.Run(page.name, func(t *testing.T) {
			file := filepath.Join(dir, page.name+".html")
			if err := os.WriteFile(file, []byte(page.html), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
				"--user-data-dir=" + t.TempDir(), "--window-size=1200,1400"}
			dom, err := exec.CommandContext(ctx, chromium, append(args, "--dump-dom", "file://"+file)...).Output()
			if err != nil {
				cancel()
				t.Fatalf("chromium --dump-dom %s: %v", page.name, err)
			}
			for _, want := range page.want {
				if !strings.Contains(string(dom), want) {
					t.Errorf("%s page as Chromium rendered it lacks %q", page.name, want)
				}
			}
			shot := filepath.Join(dir, page.name+".png")
			out, err := exec.CommandContext(ctx, chromium, append(args, "--screenshot="+shot, "file://"+file)...).CombinedOutput()
			cancel()
			if err != nil {
				t.Fatalf("chromium --screenshot %s: %v\n%s", page.name, err, out)
			}
			if st, err := os.Stat(shot); err != nil || st.Size() < 1000 {
				t.Errorf("screenshot %s: %v (size %d)", shot, err, sizeOf(st))
			}
		})
	}
}

func sizeOf(st os.FileInfo) int64 {
	if st == nil {
		return 0
	}
	return st.Size()
}
