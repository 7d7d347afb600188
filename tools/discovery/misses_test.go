package discovery_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

func turnEntry(tenant, principal, session, query string, shortlist ...string) discovery.Entry {
	e := discovery.Entry{Tenant: tenant, Principal: principal, Session: session, Query: query}
	for _, id := range shortlist {
		e.Candidates = append(e.Candidates, discovery.LoggedCandidate{ID: id})
	}
	return e
}

func callEntry(tenant, principal, session, id string) discovery.Entry {
	return discovery.Entry{Tenant: tenant, Principal: principal, Session: session, Source: discovery.SourceCall, Called: id}
}

func TestMisses(t *testing.T) {
	entries := []discovery.Entry{
		turnEntry("acme", "alice", "s1", "open a pull request", "gh/list_pull_requests", "gh/get_pull_request"),
		turnEntry("acme", "alice", "s1", "open a pull request", "gh/list_pull_requests"), // a later step: not a first shortlist
		{Tenant: "acme", Principal: "alice", Session: "s1", Source: discovery.SourceFindTools, Query: "create pull request"},
		callEntry("acme", "alice", "s1", "gh/create_pull_request"),
		// Another tenant's call with the same principal and session id is
		// never linked to acme's request.
		callEntry("evil", "alice", "s1", "gh/delete_repo"),
		turnEntry("acme", "alice", "s1", "list my pull requests", "gh/list_pull_requests"),
		callEntry("acme", "alice", "s1", "gh/list_pull_requests"),
		turnEntry("acme", "bob", "s2", "open a PR", "gh/get_pull_request"),
		{Tenant: "acme", Principal: "bob", Session: "s2", Source: discovery.SourceSelect, Query: "select:create_pull_request",
			Candidates: []discovery.LoggedCandidate{{ID: "gh/create_pull_request"}}},
		callEntry("acme", "bob", "s2", "gh/create_pull_request"),
		callEntry("acme", "carol", "", "gh/create_pull_request"), // no session: cannot be linked
	}
	rep := discovery.Misses(entries)
	if rep.Calls != 3 || rep.Hits != 1 || len(rep.Misses) != 2 || rep.Unlinked != 2 || len(rep.Linked) != 3 {
		t.Fatalf("Misses = %d calls, %d hits, %d misses, %d unlinked, %d linked; want 3, 1, 2, 2, 3",
			rep.Calls, rep.Hits, len(rep.Misses), rep.Unlinked, len(rep.Linked))
	}
	m := rep.Misses[0]
	if m.Query != "open a pull request" || m.Called != "gh/create_pull_request" || m.Via != discovery.SourceFindTools ||
		m.Search != "create pull request" || !reflect.DeepEqual(m.Shortlist, []string{"gh/list_pull_requests", "gh/get_pull_request"}) {
		t.Errorf("first miss = %+v", m)
	}
	if m := rep.Misses[1]; m.Principal != "bob" || m.Via != discovery.SourceSelect {
		t.Errorf("second miss = %+v", m)
	}
	by := rep.ByTool()
	if len(by) != 1 || by[0].Tool != "gh/create_pull_request" || by[0].Count != 2 || by[0].Principals != 2 || len(by[0].Queries) != 2 {
		t.Errorf("ByTool = %+v", by)
	}
}

func TestRecordOutcomeNamesOnlyAuthorizedTools(t *testing.T) {
	var buf bytes.Buffer
	d := newDiscoverer(t, &discovery.Options{Log: discovery.NewJSONLog(&buf), Clock: func() time.Time { return time.Unix(0, 0) }})
	snap := catalogtest.Registry(t, tool("bank/get_balance", "Get the balance", "accounts:read"), tool("bank/refund", "Refund a payment", "billing:admin")).Snapshot()
	view := snap.Authorize(tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"accounts:read"}})
	ctx := context.Background()
	d.RecordOutcome(ctx, view, discovery.Outcome{Session: "s", Source: discovery.SourceCall, Tools: []string{"bank/refund"}})
	d.RecordOutcome(ctx, view, discovery.Outcome{Session: "s", Source: discovery.SourceSelect, Query: "select:refund,get_balance",
		Tools: []string{"bank/refund", "bank/get_balance"}})
	d.RecordOutcome(ctx, view, discovery.Outcome{Session: "s", Source: discovery.SourceCall, Tools: []string{"bank/get_balance"}})
	if strings.Contains(buf.String(), "bank/refund") {
		t.Errorf("the log names a tool the principal may not use:\n%s", buf.String())
	}
	entries, torn, err := discovery.ReadJSONLog(&buf, "log")
	if err != nil || len(torn) != 0 {
		t.Fatal(err, torn)
	}
	if len(entries) != 2 || entries[0].Source != discovery.SourceSelect || entries[1].Called != "bank/get_balance" || entries[1].Tenant != "acme" {
		t.Errorf("entries = %+v", entries)
	}
}

func TestReadJSONLogErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"{\"query\":\"x\"}\n\n[1]", "log:3: invalid entry"},
		{`{"source":"call"}`, `log:1: a "call" entry without "called"`},
		{`{"source":"guess"}`, `log:1: unknown source "guess"`},
		{"{\"query\":\"x\"}\n{\"name\":\"read_file\",\"description\":\"Read a file\",\"inputSchema\":{}}\n", `log:2: not a discovery log entry: no "query", "candidates" or "called"`},
		{`{"tools":[{"name":"read_file"}]}`, `log:1: not a discovery log entry: no "query", "candidates" or "called"`},
		{`{"query":"` + strings.Repeat("x", discovery.MaxLogLine) + `"}`, "log:1: line longer than"},
	} {
		t.Run(tc.src, func(t *testing.T) {
			_, _, err := discovery.ReadJSONLog(strings.NewReader(tc.src), "log")
			var le *discovery.LogError
			if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("ReadJSONLog(%.40q) error = %v, want %q", tc.src, err, tc.want)
			}
		})
	}
}

func TestSQLLogEntriesRoundTrip(t *testing.T) {
	ctx := context.Background()
	_, log := openSQLLog(t)
	d := newDiscoverer(t, &discovery.Options{Log: log})
	snap := catalogtest.Registry(t, tool("a/send_invoice", "Email an invoice to a customer"), tool("a/refund", "Refund a payment")).Snapshot()
	view := snap.Authorize(tools.Principal{ID: "bob", Tenant: "acme"})
	if _, err := d.Shortlist(ctx, view, discovery.Request{Query: "email the invoice", K: 1, Session: "s9", Source: discovery.SourceTurn}); err != nil {
		t.Fatal(err)
	}
	d.RecordOutcome(ctx, view, discovery.Outcome{Session: "s9", Source: discovery.SourceCall, Tools: []string{"a/refund"}})
	entries, err := log.Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep := discovery.Misses(entries)
	if len(rep.Misses) != 1 || rep.Misses[0].Query != "email the invoice" || rep.Misses[0].Called != "a/refund" {
		t.Errorf("Misses over the SQL log = %+v (entries %+v)", rep, entries)
	}
}

// TestReadJSONLogTornLines: a line that is not a JSON value (a crash cut
// the write short, and the next entry continued on that line; or the last
// line is being written) is skipped and reported by its number; the other
// entries are read.
func TestReadJSONLogTornLines(t *testing.T) {
	a := `{"session":"s","query":"refund it","candidates":[{"id":"bank/refund","score":1}]}`
	b := `{"source":"call","called":"bank/refund","session":"s"}`
	src := a + "\n" + a[:20] + b + "\n\n" + b + "\n" + a[:30]
	entries, torn, err := discovery.ReadJSONLog(strings.NewReader(src), "log")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Query != "refund it" || entries[1].Called != "bank/refund" {
		t.Errorf("entries = %+v, want the first and the fourth line's", entries)
	}
	if !slices.Equal(torn, []int{2, 5}) {
		t.Errorf("torn = %v, want [2 5]", torn)
	}
}

// FuzzReadJSONLog: any input is entries or a *LogError with a line, never
// a panic; a skipped line is a line of the input.
func FuzzReadJSONLog(f *testing.F) {
	f.Add(`{"time":"2026-01-01T00:00:00Z","principal":"p","tenant":"t","session":"s","query":"q","candidates":[{"id":"a/b","score":1}]}` + "\n" + `{"source":"call","called":"a/b","session":"s"}`)
	f.Add(`{"source":"select","candidates":[{"id":"x"}]}`)
	f.Fuzz(func(t *testing.T, src string) {
		entries, torn, err := discovery.ReadJSONLog(strings.NewReader(src), "f")
		for _, l := range torn {
			if l < 1 || l > strings.Count(src, "\n")+1 {
				t.Fatalf("torn line %d is not a line of the input", l)
			}
		}
		if err != nil {
			var le *discovery.LogError
			if !errors.As(err, &le) || le.Line < 1 {
				t.Fatalf("error %v is not a *LogError with a line", err)
			}
			return
		}
		discovery.Misses(entries).ByTool()
	})
}

func TestSplitHistory(t *testing.T) {
	var qs []discovery.Query
	for i := range 5 {
		qs = append(qs, discovery.Query{Query: fmt.Sprint("a", i), Relevant: []string{"a"}}, discovery.Query{Query: fmt.Sprint("b", i), Relevant: []string{"b"}})
	}
	qs = append(qs, discovery.Query{Query: "none"})
	hist, measured, err := discovery.SplitHistory(qs, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	var h, m []string
	for _, q := range hist {
		h = append(h, q.Query)
	}
	for _, q := range measured {
		m = append(m, q.Query)
	}
	if want := []string{"a0", "b0", "a1", "b1"}; !reflect.DeepEqual(h, want) {
		t.Errorf("history = %v, want %v (the first half of each tool's queries, rounded down)", h, want)
	}
	if want := []string{"a2", "b2", "a3", "b3", "a4", "b4", "none"}; !reflect.DeepEqual(m, want) {
		t.Errorf("measured = %v, want %v", m, want)
	}
	for i, f := range []float64{-0.1, 1} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if _, _, err := discovery.SplitHistory(qs, f); !errors.Is(err, discovery.ErrOptions) {
				t.Errorf("SplitHistory(%v) err = %v, want ErrOptions", f, err)
			}
		})
	}
}

func TestSampleQueries(t *testing.T) {
	var qs []discovery.Query
	for i := range 10 {
		qs = append(qs, discovery.Query{Query: fmt.Sprint(i)})
	}
	tests := []struct {
		n    int
		want string
	}{
		{0, "0123456789"},
		{-1, "0123456789"},
		{10, "0123456789"},
		{11, "0123456789"},
		{1, "0"},
		{3, "036"},
		{4, "0257"},
		{5, "02468"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			var got strings.Builder
			for _, q := range discovery.SampleQueries(qs, tt.n) {
				got.WriteString(q.Query)
			}
			if got.String() != tt.want {
				t.Errorf("SampleQueries(0..9, %d) = %s, want %s", tt.n, got.String(), tt.want)
			}
		})
	}
}

// searchEntry is a find_tools search of a session and what it found.
func searchEntry(session, query string, found ...string) discovery.Entry {
	e := turnEntry("acme", "alice", session, query, found...)
	e.Source = discovery.SourceFindTools
	return e
}

// TestMissesSearchOnly: a client that only searches (an MCP client) has
// its requests started by searches: the first search, and the first after
// a call; searches before a call refine the request.
func TestMissesSearchOnly(t *testing.T) {
	rep := discovery.Misses([]discovery.Entry{
		searchEntry("s", "delete an observation", "m/delete_observations"),
		searchEntry("s", "show the whole graph", "m/read_graph"),
		callEntry("acme", "alice", "s", "m/read_graph"),          // a miss of the first search
		callEntry("acme", "alice", "s", "m/delete_observations"), // a hit: the same request
		searchEntry("s", "add an entity", "m/create_entities"),   // a new request
		callEntry("acme", "alice", "s", "m/create_entities"),
	})
	if rep.Calls != 3 || rep.Hits != 2 || len(rep.Misses) != 1 || rep.Unlinked != 0 {
		t.Fatalf("Misses = %d calls, %d hits, %d misses, %d unlinked; want 3, 2, 1, 0", rep.Calls, rep.Hits, len(rep.Misses), rep.Unlinked)
	}
	if m := rep.Misses[0]; m.Query != "delete an observation" || m.Called != "m/read_graph" || m.Via != discovery.SourceFindTools || m.Search != "show the whole graph" {
		t.Errorf("miss = %+v", m)
	}
}
