package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

// realCatalogArgs returns --tools flags for the real MCP catalogs committed
// in examples/transfer.
func realCatalogArgs(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "examples/transfer/catalog/*.json"))
	if len(files) == 0 {
		t.Fatal("no catalogs in examples/transfer/catalog")
	}
	var args []string
	for _, f := range files {
		args = append(args, "--tools", f)
	}
	return args
}

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func jsonKeys(t *testing.T, s string) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("output is not a JSON object: %v\n%s", err, s)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestDiscoverCommand(t *testing.T) {
	args := append([]string{"discover"}, realCatalogArgs(t)...)
	code, out, errOut := runCmd(append(args, "--k", "3", "--format", "json", "take a screenshot of the page")...)
	if code != exitOK {
		t.Fatalf("discover exit %d, stderr %q", code, errOut)
	}
	want := []string{"authorized", "candidates", "catalog_tokens", "query", "reformulated", "shortlist_tokens"}
	if got := jsonKeys(t, out); !reflect.DeepEqual(got, want) {
		t.Fatalf("discover JSON keys = %v, want %v", got, want)
	}
	var res struct {
		Candidates []map[string]any `json:"candidates"`
		Authorized int              `json:"authorized"`
		Shortlist  int              `json:"shortlist_tokens"`
		Catalog    int              `json:"catalog_tokens"`
	}
	json.Unmarshal([]byte(out), &res)
	if len(res.Candidates) != 3 || res.Candidates[0]["name"] != "playwright/browser_take_screenshot" || res.Authorized != 105 {
		t.Errorf("discover = %s, want 3 candidates led by playwright/browser_take_screenshot over 105 tools", out)
	}
	if res.Shortlist <= 0 || res.Shortlist > 1000 || res.Catalog < 10*res.Shortlist {
		t.Errorf("tokens shortlist %d catalog %d: want a shortlist of at most 1,000, a tenth of the catalog or less", res.Shortlist, res.Catalog)
	}
	keys := jsonKeys(t, mustJSON(t, res.Candidates[0]))
	if !reflect.DeepEqual(keys, []string{"name", "score"}) {
		t.Errorf("candidate keys = %v, want [name score]", keys)
	}

	code, out, _ = runCmd(append(args, "take a screenshot")...)
	if code != exitOK || !strings.Contains(out, "browser_take_screenshot") || !strings.Contains(out, "authorized tools") {
		t.Errorf("discover (text) exit %d:\n%s", code, out)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDiscoverScopesAndExitCodes(t *testing.T) {
	cat := writeFile(t, "bank.jsonl", `{"name":"get_balance","description":"Show the balance of an account","scopes":["accounts:read"]}
{"name":"transfer_funds","description":"Move money between accounts","scopes":["payments:write"]}
`)
	code, out, _ := runCmd("discover", "--tools", cat, "--scopes", "accounts:read", "--format", "json", "move money between accounts")
	if code != exitOK || strings.Contains(out, "transfer_funds") || !strings.Contains(out, `"authorized": 1`) {
		t.Errorf("discover --scopes accounts:read: exit %d, %s; want only the authorized tool", code, out)
	}
	code, out, _ = runCmd("discover", "--tools", cat, "--scopes", "", "--format", "json", "move money")
	if code != exitNegative || !strings.Contains(out, `"candidates": []`) {
		t.Errorf("discover with no scopes: exit %d, %s; want exit 1 and no candidates", code, out)
	}
	bad := writeFile(t, "bad.jsonl", "{\"name\":\"ok\"}\nnot json\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"discover", "x"}, "a catalog is required"},
		{[]string{"discover", "--tools", cat}, "want exactly one request"},
		{[]string{"discover", "--tools", cat, " \t"}, "the request is empty"},
		{[]string{"discover", "--tools", cat, "close", "issue"}, `got 2 ("close" "issue"): quote the request`},
		{[]string{"discover", "--tools", cat, "--k", "0", "x"}, "--k 0"},
		{[]string{"discover", "--tools", cat, "--format", "xml", "x"}, "unknown --format"},
		{[]string{"discover", "--tools", bad, "x"}, "bad.jsonl:2:"},
		{[]string{"discover", "--nope", "x"}, "flag provided but not defined"},
		{[]string{"eval", "--tools", cat}, "--queries is required"},
		{[]string{"eval", "--tools", cat, "--queries", "/does/not/exist"}, "cannot read --queries"},
		{[]string{"eval", "--tools", cat, "--queries", writeFile(t, "q.jsonl", "{}\n")}, `q.jsonl:1: missing or empty "query"`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			code, _, errOut := runCmd(tc.args...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line containing %q", tc.args, code, errOut, tc.want)
			}
		})
	}
}

func TestEvalCommand(t *testing.T) {
	root := testenv.RepoRoot(t)
	args := append([]string{"eval"}, realCatalogArgs(t)...)
	code, out, errOut := runCmd(append(args, "--queries", filepath.Join(root, "testdata/queries/real-mcp.jsonl"), "--format", "json")...)
	if code != exitOK {
		t.Fatalf("eval exit %d, stderr %q", code, errOut)
	}
	want := []string{"by_kind", "by_lang", "denied_leaks", "k", "mrr", "p50_us", "p99_us", "queries", "recall_at_1", "recall_at_3", "recall_at_5"}
	if got := jsonKeys(t, out); !reflect.DeepEqual(got, want) {
		t.Fatalf("eval JSON keys = %v, want %v", got, want)
	}
	var rep struct {
		Queries     int                       `json:"queries"`
		K           int                       `json:"k"`
		RecallAt5   float64                   `json:"recall_at_5"`
		DeniedLeaks int                       `json:"denied_leaks"`
		ByLang      map[string]map[string]any `json:"by_lang"`
	}
	json.Unmarshal([]byte(out), &rep)
	if rep.Queries < 120 || rep.K != 5 || rep.RecallAt5 < 0.8 || rep.DeniedLeaks != 0 || len(rep.ByLang) != 3 {
		t.Errorf("eval = %s", out)
	}
	for lang, g := range rep.ByLang {
		if got := jsonKeys(t, mustJSON(t, g)); !reflect.DeepEqual(got, []string{"mrr", "queries", "recall_at_5"}) {
			t.Errorf("by_lang[%s] keys = %v, want [mrr queries recall_at_5]", lang, got)
		}
	}
}

// TestDiscoverFlagsAfterRequest: flags may follow the request, as a user
// adds --k or --format at the end of the line they just ran.
func TestDiscoverFlagsAfterRequest(t *testing.T) {
	args := append(append([]string{"discover"}, realCatalogArgs(t)...), "take a screenshot of the page", "--k", "3", "--format", "json")
	code, out, errOut := runCmd(args...)
	if code != exitOK {
		t.Fatalf("discover with flags after the request = %d, stderr %q; want 0", code, errOut)
	}
	var got discoverOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Query != "take a screenshot of the page" || len(got.Candidates) != 3 {
		t.Errorf("discover ... request --k 3 --format json = %v, %+v; want the request's JSON with 3 candidates", err, got)
	}
}

// TestPageCatalogWarning: a tools/list result whose nextCursor says the
// server lists more is named in one warning line, its tools still used,
// also when its load is read back from the --index cache; a last page
// (nextCursor empty or null) says nothing.
func TestPageCatalogWarning(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file string
		warn       bool
	}{
		{"result", `{"tools":[{"name":"get_balance","description":"Show the balance of an account"}],"nextCursor":"page-2"}`, true},
		{"JSON-RPC response", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"get_balance","description":"Show the balance of an account"}],"nextCursor":"c2"}}`, true},
		{"last page", `{"tools":[{"name":"get_balance","description":"Show the balance of an account"}],"nextCursor":""}`, false},
		{"null cursor", `{"tools":[{"name":"get_balance","description":"Show the balance of an account"}],"nextCursor":null}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "bank.json", tc.file)
			want := ""
			if tc.warn {
				want = "toolgate discover: warning: " + path + ": one page of a tools/list result: its nextCursor says the server lists more tools than the file holds\n"
			}
			index := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".idx")
			// The first run also warns that the index file is new; the
			// second reads the catalog's load back from its cache.
			for _, pass := range []string{"first", "from the cache"} {
				t.Run(pass, func(t *testing.T) {
					code, out, errOut := runCmd("discover", "--tools", path, "--index", index, "balance of my account")
					if code != exitOK || !strings.Contains(out, "get_balance") {
						t.Errorf("discover = %d, stdout %q; want 0 and get_balance", code, out)
					}
					if pass == "first" && strings.Contains(errOut, "nextCursor") != tc.warn || pass != "first" && errOut != want {
						t.Errorf("stderr %q; want %q", errOut, want)
					}
				})
			}
		})
	}
}

// TestEmptyCatalogWarning: a catalog file that holds no tools is named in
// one warning line on stderr; the other catalogs are still used.
func TestEmptyCatalogWarning(t *testing.T) {
	empty := writeFile(t, "empty.json", `{"tools":[]}`)
	bank := writeFile(t, "bank.jsonl", `{"name":"get_balance","description":"Show the balance of an account"}`+"\n")
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"beside another catalog", []string{"discover", "--tools", empty, "--tools", bank, "balance of my account"}, exitOK},
		{"alone", []string{"discover", "--tools", empty, "balance of my account"}, exitNegative},
		{"lint", []string{"lint", "--tools", empty}, exitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCmd(tc.args...)
			prog := "toolgate " + tc.args[0]
			if want := prog + ": warning: " + empty + ": the catalog holds no tools\n"; code != tc.code || errOut != want {
				t.Errorf("%s = %d, stderr %q; want %d, %q", tc.args, code, errOut, tc.code, want)
			}
		})
	}
}
