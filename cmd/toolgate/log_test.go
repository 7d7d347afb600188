package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/tools/cards"
	"github.com/toolgate/toolgate/tools/discovery"
)

// logLines is a discovery log of three principals who each asked to open a
// pull request, were shown other tools, and called create_pull_request
// after a find_tools; plus one hit.
func logLines(tenant string) []discovery.Entry {
	var out []discovery.Entry
	for i, q := range []string{"open a pull request", "open a pull request for my branch", "please open a pull request"} {
		p, s := fmt.Sprintf("user-%d", i), fmt.Sprintf("s-%d", i)
		out = append(out,
			discovery.Entry{Tenant: tenant, Principal: p, Session: s, Query: q, Candidates: []discovery.LoggedCandidate{{ID: "github/list_pull_requests"}}},
			discovery.Entry{Tenant: tenant, Principal: p, Session: s, Source: discovery.SourceFindTools, Query: "create a pull request"},
			discovery.Entry{Tenant: tenant, Principal: p, Session: s, Source: discovery.SourceCall, Called: "github/create_pull_request"},
		)
	}
	return append(out,
		discovery.Entry{Tenant: tenant, Principal: "user-0", Session: "s-9", Query: "list pull requests", Candidates: []discovery.LoggedCandidate{{ID: "github/list_pull_requests"}}},
		discovery.Entry{Tenant: tenant, Principal: "user-0", Session: "s-9", Source: discovery.SourceCall, Called: "github/list_pull_requests"})
}

func jsonLog(t *testing.T, entries ...[]discovery.Entry) string {
	t.Helper()
	var sb strings.Builder
	l := discovery.NewJSONLog(&sb)
	for _, es := range entries {
		for _, e := range es {
			if err := l.Record(context.Background(), e); err != nil {
				t.Fatal(err)
			}
		}
	}
	return writeFile(t, "discovery.jsonl", sb.String())
}

func sqliteLog(t *testing.T, entries []discovery.Entry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "discovery.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := discovery.NewSQLLog(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := l.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestLogMisses(t *testing.T) {
	for name, path := range map[string]string{"jsonl": jsonLog(t, logLines("acme")), "sqlite": sqliteLog(t, logLines("acme"))} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCmd("log", "misses", "--log", path, "--format", "json")
			if code != exitNegative {
				t.Fatalf("%s: log misses exit %d (%s), want 1 with misses", name, code, errOut)
			}
			var got struct {
				Calls, Hits, Misses int
				Tools               []discovery.ToolMisses
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if got.Calls != 4 || got.Hits != 1 || got.Misses != 3 || len(got.Tools) != 1 ||
				got.Tools[0].Tool != "github/create_pull_request" || got.Tools[0].Count != 3 || got.Tools[0].Principals != 3 {
				t.Errorf("%s: log misses = %s", name, out)
			}
			code, out, _ = runCmd("log", "misses", "--log", path)
			if code != exitNegative || !strings.Contains(out, "github/create_pull_request") || !strings.Contains(out, "3 missed") {
				t.Errorf("%s: text output:\n%s", name, out)
			}
		})
	}
	bad := writeFile(t, "bad.jsonl", "{\"query\":\"x\"}\n{\"source\":\"call\"}\n")
	if code, _, errOut := runCmd("log", "misses", "--log", bad); code != exitUsage || !strings.Contains(errOut, bad+`:2: a "call" entry without "called"`) {
		t.Errorf("malformed log: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCmd("log", "misses", "--log", filepath.Join(t.TempDir(), "none")); code != exitUsage || !strings.Contains(errOut, "cannot read log") {
		t.Errorf("missing log: exit %d, %q", code, errOut)
	}
}

func TestCardsLearn(t *testing.T) {
	path := jsonLog(t, logLines("acme"), logLines("globex"))
	args := append([]string{"cards", "learn", "--log", path}, realCatalogArgs(t)...)
	if code, _, errOut := runCmd(args...); code != exitUsage || !strings.Contains(errOut, "--tenant") {
		t.Fatalf("learn over two tenants: exit %d, %q; want 2 asking for --tenant", code, errOut)
	}
	out := filepath.Join(t.TempDir(), "learned.jsonl")
	code, _, errOut := runCmd(append(args, "--tenant", "acme", "--out", out)...)
	if code != exitOK {
		t.Fatalf("cards learn exit %d: %s", code, errOut)
	}
	ov, err := cards.Load(out)
	if err != nil {
		t.Fatalf("the learned overlay does not load: %v", err)
	}
	if ov.Len() != 1 || ov.Entries()[0].Tool != "github/create_pull_request" || len(ov.Entries()[0].Examples) != 3 {
		t.Fatalf("learned %+v", ov.Entries())
	}
	// The proposal, applied, fixes the miss.
	code, res, errOut := runCmd(append(append([]string{"discover", "--format", "json", "--k", "1", "--cards", out}, realCatalogArgs(t)...), "open a pull request")...)
	if ids := shortlistIDs(t, res); code != exitOK || len(ids) != 1 || ids[0] != "github/create_pull_request" || errOut != "" {
		t.Errorf("discover with the learned overlay = %v (exit %d, %q)", ids, code, errOut)
	}
	// One principal is not enough.
	code, _, _ = runCmd(append(args, "--tenant", "acme", "--min-principals", "4")...)
	if code != exitNegative {
		t.Errorf("--min-principals 4 with 3 principals: exit %d, want 1 (nothing proposed)", code)
	}
	// A catalog whose namespaces differ from the log's: stderr says why
	// nothing was proposed.
	cat := writeFile(t, "shop.jsonl", `{"name":"create_pull_request","description":"Create a pull request"}`+"\n")
	code, _, errOut = runCmd("cards", "learn", "--log", path, "--tools", cat, "--tenant", "acme")
	if code != exitNegative || !strings.Contains(errOut, "4 calls (3 missed), 4 left out (a tool the catalog lacks") {
		t.Errorf("cards learn over another catalog: exit %d, %q; want 1 and the 4 calls left out", code, errOut)
	}
}

func TestEvalHistory(t *testing.T) {
	var lines []string
	for i := range 8 {
		lines = append(lines,
			fmt.Sprintf(`{"query":"open a pull request number %d for the team","relevant":["github/create_pull_request"]}`, i),
			fmt.Sprintf(`{"query":"what tables does the database hold, case %d","relevant":["postgres/query"]}`, i))
	}
	queries := writeFile(t, "q.jsonl", strings.Join(lines, "\n"))
	args := append([]string{"eval", "--queries", queries, "--format", "json"}, realCatalogArgs(t)...)
	_, plain, _ := runCmd(args...)
	code, learned, errOut := runCmd(append(args, "--history", "0.5")...)
	if code != exitOK {
		t.Fatalf("eval --history exit %d: %s", code, errOut)
	}
	var before, after discovery.Report
	json.Unmarshal([]byte(plain), &before)
	json.Unmarshal([]byte(learned), &after)
	if before.Queries != 16 || after.Queries != 8 {
		t.Errorf("queries scored: %d without history, %d with --history 0.5; want 16 and 8", before.Queries, after.Queries)
	}
	if after.RecallAt1 <= before.RecallAt1 || after.RecallAt1 != 1 {
		t.Errorf("recall@1 %v without history, %v after learning from it; want it to reach 1", before.RecallAt1, after.RecallAt1)
	}
	if !strings.Contains(errOut, "history: 8 queries replayed") {
		t.Errorf("stderr %q does not say what was learned", errOut)
	}
	if code, _, _ := runCmd(append(args, "--history", "1")...); code != exitUsage {
		t.Errorf("--history 1: exit %d, want 2", code)
	}
	// The learner's settings reach it: more principals than replayed learns nothing.
	_, strict, errOut := runCmd(append(args, "--history", "0.5", "--learn-min-principals", "9")...)
	var none discovery.Report
	json.Unmarshal([]byte(strict), &none)
	if !strings.Contains(errOut, "learned 0 examples and 0 tags") || none.RecallAt1 >= 1 {
		t.Errorf("--learn-min-principals 9: stderr %q, recall@1 %v; want nothing learned", errOut, none.RecallAt1)
	}
	if code, _, _ := runCmd(append(args, "--history", "0.5", "--learn-examples", "-1")...); code != exitUsage {
		t.Errorf("--learn-examples -1: exit %d, want 2", code)
	}
}

func TestEvalBackend(t *testing.T) {
	args := append([]string{"eval", "--queries", filepath.Join("..", "..", "testdata", "queries", "real-mcp.jsonl"), "--format", "json"}, realCatalogArgs(t)...)
	code, out, errOut := runCmd(append(args, "--backend", "scripted", "--reformulate-below", "1")...)
	if code != exitOK {
		t.Fatalf("eval --backend scripted exit %d: %s", code, errOut)
	}
	var rep discovery.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Queries != 160 || rep.DeniedLeaks != 0 {
		t.Errorf("eval --backend scripted = %s (%v)", out, err)
	}
	// Below confidence 1 every request is rewritten, and stderr says so.
	if !strings.Contains(errOut, "160 model calls: rewritten 160") {
		t.Errorf("eval --backend scripted stderr = %q, want the 160 model calls counted", errOut)
	}
	for i, bad := range [][]string{{"--backend", "gpt"}, {"--backend", "scripted", "--reformulate-below", "0"}, {"--backend", "local"},
		{"--backend", "local", "--model", "m.gguf", "--library", filepath.Join(t.TempDir(), "libllama.so")}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if code, _, errOut := runCmd(append(args, bad...)...); code != exitUsage || strings.Count(errOut, "\n") != 1 {
				t.Errorf("eval %v: exit %d, %q; want 2 with one line", bad, code, errOut)
			}
		})
	}
}

func TestCardsSuggestIsCachedAndResumable(t *testing.T) {
	out := filepath.Join(t.TempDir(), "suggested.jsonl")
	args := append([]string{"cards", "suggest", "--backend", "scripted", "--out", out}, realCatalogArgs(t)...)
	code, _, errOut := runCmd(args...)
	if code != exitOK || !strings.Contains(errOut, "0 entries kept") {
		t.Fatalf("first run: exit %d, %q", code, errOut)
	}
	ov, err := cards.Load(out)
	if err != nil || ov.Len() < 100 {
		t.Fatalf("suggested overlay: %d entries, %v", ov.Len(), err)
	}
	for _, e := range ov.Entries() {
		if len(e.Examples) < 3 || len(e.Examples) > 5 || len(e.Aliases) == 0 || e.NotFor == "" {
			t.Fatalf("entry %+v breaks the 3–5 examples, aliases, not_for contract", e)
		}
	}
	n := ov.Len()
	// A re-run costs nothing.
	if code, _, errOut := runCmd(args...); code != exitOK || !strings.Contains(errOut, fmt.Sprintf("%d entries kept", n)) || !strings.Contains(errOut, " 0 suggested") {
		t.Errorf("second run: exit %d, %q; want every entry kept, none suggested", code, errOut)
	}
	// After a crash that tore the last line and a tool that changed, the run
	// resumes: the torn and the stale entries are suggested again.
	data, _ := os.ReadFile(out)
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	i := strings.Index(lines[0], `"hash":"sha256:`) + len(`"hash":"sha256:`)
	flip := map[byte]string{'0': "1"}[lines[0][i]]
	if flip == "" {
		flip = "0"
	}
	lines[0] = lines[0][:i] + flip + lines[0][i+1:] // stale: written for another version
	torn := strings.Join(lines[:len(lines)-1], "") + lines[len(lines)-1][:10]
	os.WriteFile(out, []byte(torn), 0o644)
	code, _, errOut = runCmd(args...)
	if code != exitOK || !strings.Contains(errOut, fmt.Sprintf("%d entries kept", n-2)) || !strings.Contains(errOut, " 2 suggested") {
		t.Errorf("resumed run: exit %d, %q; want %d kept and 2 suggested", code, errOut, n-2)
	}
	if ov, err := cards.Load(out); err != nil || ov.Len() != n {
		t.Errorf("after resuming: %d entries, %v; want %d", ov.Len(), err, n)
	}
}

// A run rewrites only what it was asked to redo: entries for tools of
// another catalog written to the same file, a person's namespace entry and
// a complete last line without its newline survive; only the catalog's
// stale entries are replaced.
func TestCardsSuggestKeepsWhatItDidNotRedo(t *testing.T) {
	cat := writeFile(t, "shop.jsonl", `{"name":"list_orders","description":"List the orders of a customer"}
{"name":"refund_order","description":"Refund a customer's order"}
`)
	other := `{"tool":"github/create_issue","hash":"sha256:0123456789abcdef","aliases":["file a bug"]}`
	ns := `{"tool":"shop/*","aliases":["the store"]}`
	out := writeFile(t, "team.cards.jsonl", other+"\n"+ns) // no final newline
	if err := os.Chmod(out, 0o640); err != nil {           // a mode of the team's own, kept by the rewrite
		t.Fatal(err)
	}
	code, _, errOut := runCmd("cards", "suggest", "--tools", cat, "--backend", "scripted", "--out", out)
	if code != exitOK || !strings.Contains(errOut, "0 entries kept") || !strings.Contains(errOut, " 2 suggested") {
		t.Fatalf("cards suggest: exit %d, %q; want 2 suggested", code, errOut)
	}
	ov, err := cards.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ov.Entries() {
		got = append(got, e.Tool)
	}
	want := "github/create_issue shop/* shop/list_orders shop/refund_order"
	if strings.Join(got, " ") != want {
		t.Errorf("after cards suggest, %s holds %q, want %q", out, got, want)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("after cards suggest, %s mode %v (%v), want the file's own 0640", out, st.Mode(), err)
	}
}

// A share or threshold outside its range, NaN included (it compares false
// with everything), is a usage error of one line, never a run without it.
func TestFloatFlagsOutOfRange(t *testing.T) {
	cat := writeFile(t, "shop.jsonl", `{"name":"list_orders","description":"List the orders of a customer"}`+"\n")
	qs := writeFile(t, "q.jsonl", `{"query":"my orders","relevant":["list_orders"]}`+"\n")
	eval := []string{"eval", "--tools", cat, "--queries", qs}
	for i, args := range [][]string{
		append(eval, "--history", "NaN"),
		append(eval, "--history", "-1"),
		append(eval, "--history", "1.5"),
		append(eval, "--history", "+Inf"),
		append(eval, "--backend", "scripted", "--reformulate-below", "NaN"),
		{"lint", "--tools", cat, "--duplicate-threshold", "NaN"},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if code, _, errOut := runCmd(args...); code != exitUsage || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%v: exit %d, %q; want 2 with one line", args[len(args)-2:], code, errOut)
			}
		})
	}
}

// A JSON Lines log is read while the agent writes it, and a crash may cut
// a write short: a line that is not a JSON value is skipped with a warning
// naming it, a complete last line without its newline is read, and a line
// that is JSON but not an entry is still the error FILE:LINE.
func TestLogMissesTornLastLine(t *testing.T) {
	whole := jsonLog(t, logLines("acme"))
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	last := lines[len(lines)-1]
	for _, tc := range []struct {
		name, log string
		code      int
		misses    int
		warn      bool
	}{
		{"torn", string(data) + last[:20], exitNegative, 3, true},
		{"no final newline", strings.TrimSuffix(string(data), "\n"), exitNegative, 3, false},
		{"BOM and no final newline", "\xef\xbb\xbf" + strings.TrimSuffix(string(data), "\n"), exitNegative, 3, false},
		{"only a torn line", last[:20], exitOK, 0, true},
		// A crash cut a write short; after a restart the next entry
		// continued on the same line.
		{"torn in the middle", lines[0] + last[:20] + strings.Join(lines[1:], ""), exitNegative, 3, true},
		{"JSON but not an entry", lines[0] + "[]\n" + strings.Join(lines[1:], ""), exitUsage, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "discovery.jsonl", tc.log)
			code, out, errOut := runCmd("log", "misses", "--log", path, "--format", "json")
			var got struct{ Misses int }
			json.Unmarshal([]byte(out), &got)
			if code != tc.code || got.Misses != tc.misses || strings.Contains(errOut, "not a JSON value") != tc.warn {
				t.Errorf("%s: log misses exit %d, %d misses, stderr %q; want exit %d, %d misses, warning %v", tc.name, code, got.Misses, errOut, tc.code, tc.misses, tc.warn)
			}
			if tc.code == exitUsage && !strings.Contains(errOut, path+":2: ") {
				t.Errorf("%s: stderr %q, want the error at %s:2", tc.name, errOut, path)
			}
		})
	}
}

// A file of which no line is a JSON value is not a discovery log with torn
// writes but another file given by mistake (a pretty-printed JSON file, a
// binary): it is an input error naming the file, not "0 calls", exit 0.
func TestLogMissesRefusesAFileThatIsNotALog(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"pretty-printed JSON", "{\"tokens\": {\n  \"t\": {\"principal\": \"a\"}\n}}\n"},
		{"binary", "\x00\x01garbage\n\xff\xfe more\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "other.jsonl", tc.data)
			for _, cmd := range [][]string{{"log", "misses", "--log", path}, append([]string{"cards", "learn", "--log", path}, realCatalogArgs(t)...)} {
				t.Run(cmd[0], func(t *testing.T) {
					code, _, errOut := runCmd(cmd...)
					if code != exitUsage || !strings.Contains(errOut, path+":1: not a discovery log") {
						t.Errorf("%s on %q: exit %d, stderr %q; want exit %d naming %s:1 as not a discovery log", cmd[0], tc.data, code, errOut, exitUsage, path)
					}
				})
			}
		})
	}
}

// A queries file without a query (empty, or blank lines only: the wrong
// file, or one a failed export left empty) is an input error naming it,
// not a report of recall 0.000 with exit 0.
func TestEvalRefusesAQueriesFileWithoutQueries(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"empty", ""},
		{"blank lines", "\n  \n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "queries.jsonl", tc.data)
			code, out, errOut := runCmd(append([]string{"eval", "--queries", path}, realCatalogArgs(t)...)...)
			if code != exitUsage || !strings.Contains(errOut, path+": no queries") || out != "" {
				t.Errorf("eval on a queries file of %q: exit %d, stdout %q, stderr %q; want exit %d, nothing on stdout, %q on stderr", tc.data, code, out, errOut, exitUsage, path+": no queries")
			}
		})
	}
}

// A relevant entry that names no tool of the catalog is scored as a miss,
// and stderr says so: a query file written for NS=FILE namespaces run on
// FILE (stem) namespaces would otherwise score 0 without a word.
func TestEvalWarnsOfUnknownRelevantTools(t *testing.T) {
	cat := writeFile(t, "shop.jsonl", `{"name":"list_orders","description":"List the orders of a customer"}`+"\n")
	for _, tc := range []struct {
		relevant string
		warn     bool
	}{{"list_orders", false}, {"shop/list_orders", false}, {"store/list_orders", true}, {"list_order", true}} {
		t.Run(tc.relevant, func(t *testing.T) {
			qs := writeFile(t, "q.jsonl", `{"query":"my orders","relevant":["`+tc.relevant+`"]}`+"\n")
			code, _, errOut := runCmd("eval", "--tools", cat, "--queries", qs, "--format", "json")
			if code != exitOK || strings.Contains(errOut, `name no tool of the catalog (first "`+tc.relevant+`")`) != tc.warn {
				t.Errorf("eval with relevant %q: exit %d, stderr %q; want 0, warning %v", tc.relevant, code, errOut, tc.warn)
			}
		})
	}
}

// A SQLite log is read from the file named, whatever characters its name
// holds, and reading it writes nothing.
func TestLogMissesSQLiteReservedName(t *testing.T) {
	data, err := os.ReadFile(sqliteLog(t, logLines("acme")))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"log#1.db", "log?1.db", "log%201.db"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runCmd("log", "misses", "--log", path, "--format", "json")
			var got struct{ Misses int }
			json.Unmarshal([]byte(out), &got)
			if code != exitNegative || got.Misses != 3 {
				t.Errorf("log misses --log %s: exit %d, %d misses, stderr %q; want 1 with 3 misses", name, code, got.Misses, errOut)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("log misses --log %s left %d files in its folder, want the log alone", name, len(entries))
			}
		})
	}
}

// cards suggest's usage errors are one line that names the flag or file.
func TestCardsSuggestUsageErrors(t *testing.T) {
	cat := writeFile(t, "shop.jsonl", `{"name":"list_orders","description":"List the orders of a customer"}`+"\n")
	out := filepath.Join(t.TempDir(), "s.jsonl")
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "s.jsonl")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", out}, "--backend is required"},
		{[]string{"--backend", "scripted"}, "--out is required"},
		{[]string{"--backend", "scripted", "--out", out, "--langs", "en,fr"}, `--langs: "fr" is not one of en, es, pl (the languages discovery analyses)`},
		{[]string{"--backend", "scripted", "--out", missing}, missing + ": cannot write: no such file or directory"},
		{[]string{"--backend", "local", "--out", out}, "--backend local needs --model FILE.gguf, the model to run in process"},
		{[]string{"--backend", "ollama", "--library", "libllama.so", "--out", out}, "--library needs --backend local"},
		{[]string{"--backend", "local", "--model", missing, "--out", out}, "local: cannot load the model: open " + missing + ": no such file or directory"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			code, _, errOut := runCmd(append([]string{"cards", "suggest", "--tools", cat}, tc.args...)...)
			if code != exitUsage || errOut != "toolgate cards suggest: "+tc.want+"\n" {
				t.Errorf("cards suggest %v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
			}
		})
	}
}

// A reply that fails validation skips that tool with one line naming it
// (no blank line when stderr is no terminal), writes the others, exits 1,
// and a re-run asks again for the skipped tool only.
func TestCardsSuggestUnusableReply(t *testing.T) {
	// The stand-in's first example is the description's first words: one
	// long word makes it longer than an example may be.
	cat := writeFile(t, "shop.jsonl", `{"name":"list_orders","description":"List the orders of a customer"}`+"\n"+
		`{"name":"fetch_page","description":"Fetch `+strings.Repeat("w", 250)+` and return it"}`+"\n")
	out := filepath.Join(t.TempDir(), "s.jsonl")
	args := []string{"cards", "suggest", "--tools", cat, "--backend", "scripted", "--out", out}
	code, _, errOut := runCmd(args...)
	if code != exitNegative || strings.Contains(errOut, "\n\n") || strings.HasPrefix(errOut, "\n") ||
		!strings.Contains(errOut, "unusable card suggestion for shop/fetch_page: example of 270 characters, at most 200") ||
		!strings.Contains(errOut, "1 suggested, 1 failed") {
		t.Errorf("cards suggest: exit %d, stderr %q; want 1, the fetch_page line, 1 suggested and 1 failed", code, errOut)
	}
	if ov, err := cards.Load(out); err != nil || ov.Len() != 1 || ov.Entries()[0].Tool != "shop/list_orders" {
		t.Errorf("after a failed suggestion, %s holds %v (%v), want list_orders alone", out, ov.Entries(), err)
	}
	if code, _, errOut := runCmd(args...); code != exitNegative || !strings.Contains(errOut, "1 entries kept") || !strings.Contains(errOut, "0 suggested, 1 failed") {
		t.Errorf("re-run: exit %d, %q; want list_orders kept and fetch_page asked again", code, errOut)
	}
}

// With --only-flagged, a stale entry of a tool lint does not flag is kept
// (it is not suggested again, so dropping it would lose a reviewed entry).
func TestCardsSuggestOnlyFlaggedKeepsOtherStaleEntries(t *testing.T) {
	cat := writeFile(t, "shop.jsonl", `{"name":"list_orders","description":"List the orders of a customer"}`+"\n"+
		`{"name":"refund_order","description":"Refund a customer's order","aliases":["give money back"],"not_for":"Listing orders; use list_orders."}`+"\n")
	stale := `{"tool":"shop/refund_order","hash":"sha256:0123456789abcdef","aliases":["chargeback"]}`
	out := writeFile(t, "s.jsonl", stale+"\n")
	code, _, errOut := runCmd("cards", "suggest", "--tools", cat, "--backend", "scripted", "--out", out, "--only-flagged")
	if code != exitOK || !strings.Contains(errOut, "(0 stale dropped), 1 suggested") {
		t.Fatalf("cards suggest --only-flagged: exit %d, %q; want list_orders suggested, nothing dropped", code, errOut)
	}
	data, _ := os.ReadFile(out)
	if !strings.Contains(string(data), stale) || !strings.Contains(string(data), `"tool":"shop/list_orders"`) {
		t.Errorf("after cards suggest --only-flagged, %s holds:\n%s\nwant the stale refund_order entry and a list_orders one", out, data)
	}
}

// TestLogMissesSQLiteWithoutLog: a SQLite file that holds no discovery log
// (the gateway's store given by mistake) is refused in one line naming the
// file, exit 2, not with the driver's "no such table".
func TestLogMissesSQLiteWithoutLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE claims (key TEXT PRIMARY KEY, state TEXT NOT NULL);
		INSERT INTO claims VALUES ('k1', 'done')`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd("log", "misses", "--log", path)
	want := "toolgate log misses: " + path + ": holds no toolgate discovery log (a SQLite database without the discovery_log table)\n"
	if code != exitUsage || out != "" || errOut != want {
		t.Errorf("log misses --log gateway.db = exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errOut, want)
	}
}
