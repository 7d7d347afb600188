package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// catalogHashes runs cards hash over the real catalogs and returns the
// hash of each tool.
func catalogHashes(t *testing.T) map[string]string {
	t.Helper()
	code, out, errOut := runCmd(append([]string{"cards", "hash"}, realCatalogArgs(t)...)...)
	if code != exitOK {
		t.Fatalf("cards hash exit %d: %s", code, errOut)
	}
	hashes := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct{ Tool, Hash string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("cards hash line %q: %v", line, err)
		}
		hashes[e.Tool] = e.Hash
	}
	return hashes
}

func shortlistIDs(t *testing.T, out string) []string {
	t.Helper()
	var got discoverOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("discover output: %v\n%s", err, out)
	}
	var ids []string
	for _, c := range got.Candidates {
		ids = append(ids, c.Name)
	}
	return ids
}

func TestCardsOverlayOnDiscover(t *testing.T) {
	hashes := catalogHashes(t)
	if len(hashes) < 100 {
		t.Fatalf("cards hash listed %d tools, want the 100+ of the real catalogs", len(hashes))
	}
	overlay := writeFile(t, "team.jsonl", strings.Join([]string{
		`{"tool":"github/create_pull_request","hash":"` + hashes["github/create_pull_request"] + `","aliases":["open a pull request"]}`,
		`{"tool":"postgres/*","aliases":["the db","orders"]}`,
		`{"tool":"github/create_issue","hash":"sha256:0000000000000000","aliases":["open a pull request"]}`,
	}, "\n"))
	args := append([]string{"discover", "--format", "json", "--k", "3"}, realCatalogArgs(t)...)
	for _, tc := range []struct{ query, want string }{
		{"open a pull request", "github/create_pull_request"},
		{"how many orders came in yesterday, check the db", "postgres/query"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			_, out, _ := runCmd(append(args, tc.query)...)
			if ids := shortlistIDs(t, out); len(ids) > 0 && ids[0] == tc.want {
				t.Fatalf("without the overlay %q already ranks %s first; the test shows nothing", tc.query, tc.want)
			}
			code, out, errOut := runCmd(append(args, "--cards", overlay, tc.query)...)
			if code != exitOK {
				t.Fatalf("discover --cards exit %d: %s", code, errOut)
			}
			if ids := shortlistIDs(t, out); len(ids) == 0 || ids[0] != tc.want {
				t.Errorf("discover --cards %q = %v, want %s first", tc.query, ids, tc.want)
			}
			want := overlay + ":3: github/create_issue: stale entry not applied: written for sha256:0000000000000000, the tool is now " + hashes["github/create_issue"]
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr %q lacks the stale warning %q", errOut, want)
			}
		})
	}
}

// TestCardsHashFileIsAnOverlay: the file cards hash writes is an overlay
// as it stands (docs/discovery.md has discover read it before anyone
// fills it in); its unfilled lines apply nothing and say nothing, and a
// line filled in among them applies.
func TestCardsHashFileIsAnOverlay(t *testing.T) {
	_, hashed, _ := runCmd(append([]string{"cards", "hash"}, realCatalogArgs(t)...)...)
	args := append([]string{"discover", "--format", "json", "--k", "3"}, realCatalogArgs(t)...)
	const query = "open a pull request"
	_, plain, _ := runCmd(append(args, query)...)
	unfilled := writeFile(t, "unfilled.jsonl", hashed)
	code, out, errOut := runCmd(append(args, "--cards", unfilled, query)...)
	if code != exitOK || errOut != "" || out != plain {
		t.Errorf("discover --cards (the file cards hash wrote) = %d, stderr %q, %s; want 0, nothing on stderr and the shortlist without it:\n%s", code, errOut, out, plain)
	}
	var filled []string
	for _, line := range strings.Split(strings.TrimSpace(hashed), "\n") {
		if strings.Contains(line, `"github/create_pull_request"`) {
			line = strings.TrimSuffix(line, "}") + `,"aliases":["open a pull request"]}`
		}
		filled = append(filled, line)
	}
	code, out, errOut = runCmd(append(args, "--cards", writeFile(t, "filled.jsonl", strings.Join(filled, "\n")), query)...)
	if ids := shortlistIDs(t, out); code != exitOK || errOut != "" || len(ids) == 0 || ids[0] != "github/create_pull_request" {
		t.Errorf("discover --cards (one line filled in) = %d, stderr %q, %v; want create_pull_request first", code, errOut, ids)
	}
}

func TestCardsOverlayErrors(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"malformed", `{"tool":"postgres/*","aliases":["db"]}` + "\n" + `{"tool":"postgres/*",`, ":2: invalid entry"},
		{"duplicate", `{"tool":"postgres/*","aliases":["db"]}` + "\n" + `{"tool":"postgres/*","tags":["sql"]}`, `:2: duplicate entry for "postgres/*"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			overlay := writeFile(t, "bad.jsonl", tc.content)
			for i, cmd := range [][]string{{"discover", "x"}, {"lint"}, {"eval", "--queries", overlay}} {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					args := append(append([]string{cmd[0]}, realCatalogArgs(t)...), "--cards", overlay)
					code, _, errOut := runCmd(append(args, cmd[1:]...)...)
					if code != exitUsage || !strings.HasPrefix(errOut, "toolgate "+cmd[0]+": "+overlay+tc.want) || strings.Count(errOut, "\n") != 1 {
						t.Errorf("%s %s: exit %d, stderr %q; want 2 and one line %q", tc.name, cmd[0], code, errOut, overlay+tc.want)
					}
				})
			}
		})
	}
}

func TestLintCountsWhatCardsFixed(t *testing.T) {
	hashes := catalogHashes(t)
	overlay := writeFile(t, "team.jsonl", strings.Join([]string{
		`{"tool":"github/create_pull_request","hash":"` + hashes["github/create_pull_request"] + `","aliases":["open a pull request"],"not_for":"reviewing one: use create_pull_request_review"}`,
		`{"tool":"postgres/query","hash":"` + hashes["postgres/query"] + `","aliases":["list tables"]}`,
	}, "\n"))
	args := append([]string{"lint", "--format", "json", "--skip", "unfindable"}, realCatalogArgs(t)...)
	_, before, _ := runCmd(args...)
	code, after, errOut := runCmd(append(args, "--cards", overlay)...)
	if code == exitUsage {
		t.Fatalf("lint --cards exit 2: %s", errOut)
	}
	var b, a lintOutput
	if err := json.Unmarshal([]byte(before), &b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(after), &a); err != nil {
		t.Fatal(err)
	}
	if b.Fixed != nil {
		t.Errorf("lint without --cards reports fixed_by_cards %v", b.Fixed)
	}
	if a.Fixed["missing-aliases"] != 2 || a.Fixed["missing-not-for"] != 1 {
		t.Errorf("fixed_by_cards = %v, want 2 missing-aliases and 1 missing-not-for", a.Fixed)
	}
	for kind, n := range a.Fixed {
		if b.Counts[kind]-a.Counts[kind] != n {
			t.Errorf("%s: %d before, %d after, but fixed_by_cards says %d", kind, b.Counts[kind], a.Counts[kind], n)
		}
	}
}

// Every catalog command takes --cards and reports an entry it could not
// apply on stderr, whatever else it does.
func TestEveryCatalogCommandReportsUnappliedCards(t *testing.T) {
	cat := writeFile(t, "shop.jsonl", `{"name":"list_orders","description":"List the orders of a customer"}`+"\n")
	overlay := writeFile(t, "team.cards.jsonl", `{"tool":"nope/*","aliases":["x"]}`+"\n")
	qs := writeFile(t, "q.jsonl", `{"query":"my orders","relevant":["list_orders"]}`+"\n")
	logFile := writeFile(t, "discovery.jsonl", "")
	tokens := writeFile(t, "tokens.json", `{"tokens":{"t":{"principal":"p","tenant":"acme","scopes":[]}}}`)
	out := filepath.Join(t.TempDir(), "suggested.jsonl")
	for i, args := range [][]string{
		{"discover", "my orders"},
		{"eval", "--queries", qs},
		{"lint"},
		{"cards", "hash"},
		{"cards", "check"},
		{"cards", "learn", "--log", logFile},
		{"cards", "suggest", "--backend", "scripted", "--out", out},
		{"mcp", "serve", "--principal", "p", "--tenant", "acme"}, // stdin is empty: it stops
		{"serve", "--tokens", tokens, "--store", "bogus://x"},    // stops after loading
		{"grammar", "--select", "list_orders"},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			n := 1
			if args[0] == "cards" || args[0] == "mcp" {
				n = 2
			}
			full := append(append(append([]string{}, args[:n]...), "--tools", cat, "--cards", overlay), args[n:]...)
			_, stdout, errOut := runCmd(full...)
			if want := "nope/*: no such tool or namespace"; !strings.Contains(errOut+stdout, want) {
				t.Errorf("%s: output lacks %q:\nstdout %s\nstderr %s", strings.Join(args[:n], " "), want, stdout, errOut)
			}
		})
	}
}

// An empty file flag (a shell variable that was not set) names the flag.
func TestEmptyFileFlag(t *testing.T) {
	cat := writeFile(t, "shop.jsonl", `{"name":"list_orders","description":"List the orders of a customer"}`+"\n")
	for i, args := range [][]string{
		{"discover", "--tools", cat, "--cards", "", "orders"},
		{"lint", "--tools", ""},
		{"cards", "check", "--tools", cat, "--cards", " "},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			code, _, errOut := runCmd(args...)
			flag := args[len(args)-2]
			if args[0] == "discover" {
				flag = "--cards"
			}
			if code != exitUsage || !strings.Contains(errOut, `for flag -`+strings.TrimPrefix(flag, "--")+`: empty value`) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%v: exit %d, %q; want 2 and one line naming %s", args, code, errOut, flag)
			}
		})
	}
}
