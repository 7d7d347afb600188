package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/tools/discovery"
)

// evalReport runs `toolgate eval args... --format json`, fails t unless it
// exits 0, and returns the report it prints.
func evalReport(t *testing.T, args ...string) discovery.Report {
	t.Helper()
	code, out, errOut := runCmd(append(append([]string{"eval"}, args...), "--format", "json")...)
	if code != exitOK {
		t.Fatalf("eval %v: exit %d, stderr %q", args, code, errOut)
	}
	var rep discovery.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestEvalCompanionFlags: eval adds the tool producing a token a
// shortlisted tool needs unless --no-companions.
func TestEvalCompanionFlags(t *testing.T) {
	cat := writeFile(t, "cal.jsonl", `{"name":"add_event","description":"Add an event to the calendar","inputSchema":{"type":"object","properties":{"title":{"type":"string"},"token":{"type":"string","description":"The user's authentication token"}},"required":["title","token"]}}
{"name":"get_user_token","description":"Log a user in and return their authentication token","inputSchema":{"type":"object","properties":{"username":{"type":"string"},"password":{"type":"string"}}}}
{"name":"add_photo","description":"Add a photo to an album"}
{"name":"add_contact","description":"Add a contact to the address book"}
{"name":"add_song","description":"Add a song to a playlist"}
{"name":"add_task","description":"Add a task to a to-do list"}
{"name":"add_expense","description":"Add an expense to a budget"}
`)
	qs := writeFile(t, "q.jsonl", `{"query":"add an event called standup to my calendar","relevant":["add_event","get_user_token"]}`+"\n")
	recall := func(t *testing.T, args ...string) float64 {
		t.Helper()
		return evalReport(t, append([]string{"--tools", cat, "--queries", qs, "--k", "3"}, args...)...).RecallAt5
	}
	for _, tc := range []struct {
		name string
		args []string
		want float64
	}{
		{"default", nil, 1},
		{"no-companions", []string{"--no-companions"}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := recall(t, tc.args...); got != tc.want {
				t.Errorf("eval %v: recall@5 %v, want %v", tc.args, got, tc.want)
			}
		})
	}
}

// TestEvalNoBackgroundIDF: in a catalog of 202 tools, a short card that
// shares only words every tool description uses ("detailed information")
// with the request ranks second under the background IDF (the default)
// and first under --no-background-idf.
func TestEvalNoBackgroundIDF(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"name":"sake_finder","description":"Find sake and get detailed information."}` + "\n")
	b.WriteString(`{"name":"ticker_feed","description":"Stock prices, market quotes, dividends, earnings calendars, analyst ratings and charts for the companies listed on exchanges worldwide."}` + "\n")
	for i := range 200 {
		fmt.Fprintf(&b, `{"name":"parts_%d","description":"Spare parts for the machine model m%d."}`+"\n", i, i)
	}
	cat := writeFile(t, "cat.jsonl", b.String())
	qs := writeFile(t, "q.jsonl", `{"query":"detailed information about dividends and earnings","relevant":["ticker_feed"]}`+"\n")
	for _, tc := range []struct {
		name string
		args []string
		want float64 // MRR
	}{
		{"default", nil, 1},
		{"no-background-idf", []string{"--no-background-idf"}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := evalReport(t, append([]string{"--tools", cat, "--queries", qs}, tc.args...)...)
			if rep.MRR != tc.want {
				t.Errorf("eval %v: MRR %v, want %v", tc.args, rep.MRR, tc.want)
			}
		})
	}
}
