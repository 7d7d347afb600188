package discovery_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/metricstest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// TestMissMetrics follows the rules of Misses as calls happen: a call is
// linked to the first shortlist of its session's current request and is a
// miss when that shortlist lacked its tool; later steps of the same request
// and find_tools searches start no request; a call without a session, or
// of another principal, is not linked.
func TestMissMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	d := newDiscoverer(t, &discovery.Options{Registerer: reg})
	snap := catalogtest.Registry(t, tool("bank/get_balance", "Get the balance of an account"),
		tool("bank/transfer_funds", "Transfer money between accounts"), tool("bank/list_transactions", "List an account's transactions")).Snapshot()
	alice := snap.Authorize(tools.Principal{ID: "alice", Tenant: "acme"})
	bob := snap.Authorize(tools.Principal{ID: "bob", Tenant: "acme"})
	ctx := context.Background()
	shortlist := func(view *tools.View, session, source, query string) {
		t.Helper()
		sl, err := d.Shortlist(ctx, view, discovery.Request{Query: query, K: 1, Session: session, Source: source})
		if err != nil || len(sl.Candidates) != 1 || sl.Candidates[0].Tool.ID != "bank/get_balance" && query == "what is my balance" {
			t.Fatalf("Shortlist(%q) = %v, %v; want bank/get_balance alone", query, sl, err)
		}
	}
	call := func(view *tools.View, session, id string) {
		d.RecordOutcome(ctx, view, discovery.Outcome{Session: session, Source: discovery.SourceCall, Tools: []string{id}})
	}
	shortlist(alice, "s1", "", "what is my balance")
	call(alice, "s1", "bank/get_balance")                                      // linked, a hit
	shortlist(alice, "s1", discovery.SourceTurn, "what is my balance")         // a later step: same request
	shortlist(alice, "s1", discovery.SourceFindTools, "move money to savings") // the model's search: no new request
	call(alice, "s1", "bank/transfer_funds")                                   // linked, a miss
	call(bob, "s1", "bank/transfer_funds")                                     // bob's s1 has no request: not linked
	call(alice, "", "bank/transfer_funds")                                     // no session: not linked
	call(alice, "s2", "bank/transfer_funds")                                   // no request in s2: not linked

	for name, want := range map[string]float64{
		"toolgate_discovery_linked_calls_total": 2, "toolgate_discovery_misses_total": 1, "toolgate_discovery_queries_total": 3,
		"toolgate_discovery_shortlist_size": 3, "toolgate_discovery_confidence": 3,
	} {
		t.Run(name, func(t *testing.T) {
			if got := gathered(t, reg, name); got != want {
				t.Errorf("%s = %v, want %v", name, got, want)
			}
		})
	}
}

// TestMissMetricsSearchOnly: as in Misses, a client that only searches has
// its requests started by the first search and by the first search after a
// call.
func TestMissMetricsSearchOnly(t *testing.T) {
	reg := prometheus.NewRegistry()
	d := newDiscoverer(t, &discovery.Options{Registerer: reg})
	view := catalogtest.Registry(t, tool("bank/get_balance", "Get the balance of an account"),
		tool("bank/transfer_funds", "Transfer money between accounts")).Snapshot().Authorize(everyone)
	ctx := context.Background()
	search := func(query string) {
		if _, err := d.Shortlist(ctx, view, discovery.Request{Query: query, K: 1, Session: "s", Source: discovery.SourceFindTools}); err != nil {
			t.Fatal(err)
		}
	}
	call := func(id string) {
		d.RecordOutcome(ctx, view, discovery.Outcome{Session: "s", Source: discovery.SourceCall, Tools: []string{id}})
	}
	search("account balance")   // starts a request: [get_balance]
	search("transfer money")    // refines it
	call("bank/transfer_funds") // a miss of the first search
	search("transfer money")    // a new request: [transfer_funds]
	call("bank/transfer_funds") // a hit
	for name, want := range map[string]float64{"toolgate_discovery_linked_calls_total": 2, "toolgate_discovery_misses_total": 1} {
		t.Run(name, func(t *testing.T) {
			if got := gathered(t, reg, name); got != want {
				t.Errorf("%s = %v, want %v", name, got, want)
			}
		})
	}
}

// TestMissMetricsBounded: beyond MaxSessions the session whose request came
// first is forgotten, and its calls are no longer linked.
func TestMissMetricsBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	d := newDiscoverer(t, &discovery.Options{Registerer: reg, MaxSessions: 2})
	view := catalogtest.Registry(t, tool("bank/get_balance", "Get the balance of an account")).Snapshot().Authorize(everyone)
	ctx := context.Background()
	for _, s := range []string{"s1", "s2", "s3"} {
		t.Run(s, func(t *testing.T) {
			if _, err := d.Shortlist(ctx, view, discovery.Request{Query: "balance", Session: s}); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, s := range []string{"s1", "s2", "s3"} {
		d.RecordOutcome(ctx, view, discovery.Outcome{Session: s, Source: discovery.SourceCall, Tools: []string{"bank/get_balance"}})
	}
	if got := gathered(t, reg, "toolgate_discovery_linked_calls_total"); got != 2 {
		t.Errorf("linked calls = %v, want 2 (s1 forgotten)", got)
	}
}

// gathered returns the value of the counter name in g, or the sample count
// of the histogram name.
func gathered(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	v, ok := metricstest.Value(t, g, name)
	if !ok {
		t.Fatalf("no metric %s", name)
	}
	return v
}

// TestOpenJSONLog: the file is created 0600 and appended to, never
// truncated, and a closed log refuses to record.
func TestOpenJSONLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "discovery.jsonl")
	ctx := context.Background()
	for _, q := range []string{"first", "second"} {
		t.Run(q, func(t *testing.T) {
			l, err := discovery.OpenJSONLog(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Record(ctx, discovery.Entry{Query: q}); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if err := l.Record(ctx, discovery.Entry{Query: "late"}); err == nil {
				t.Error("Record after Close = nil, want an error")
			}
		})
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	f, _ := os.Open(path)
	defer f.Close()
	entries, torn, err := discovery.ReadJSONLog(f, path)
	if err != nil || len(torn) != 0 || len(entries) != 2 || entries[0].Query != "first" || entries[1].Query != "second" {
		t.Errorf("ReadJSONLog = %+v, %v, %v; want first then second", entries, torn, err)
	}
}

// TestOpenJSONLogConcurrent: records from many goroutines, and from two
// logs open on the same file (two processes), never interleave lines.
func TestOpenJSONLogConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "discovery.jsonl")
	var logs [2]*discovery.JSONLog
	for i := range logs {
		l, err := discovery.OpenJSONLog(path)
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = l
	}
	const writers, each = 8, 50
	long := strings.Repeat("move money between accounts ", 200) // lines of about 6 KB
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				e := discovery.Entry{Session: fmt.Sprintf("w%d", w), Query: fmt.Sprintf("%s%d", long, i)}
				if err := logs[w%2].Record(context.Background(), e); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for _, l := range logs {
		l.Close()
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, torn, err := discovery.ReadJSONLog(f, path)
	if err != nil || len(torn) != 0 || len(entries) != writers*each {
		t.Fatalf("ReadJSONLog = %d entries, torn %v, %v; want %d whole lines", len(entries), torn, err, writers*each)
	}
}

// TestLongSessionIsDigested: a session id beyond MaxSessionBytes (a
// client's text) is logged and kept as its digest, which still links the
// call to its request, and keeps the line short.
func TestLongSessionIsDigested(t *testing.T) {
	var buf bytes.Buffer
	reg := prometheus.NewRegistry()
	d := newDiscoverer(t, &discovery.Options{Registerer: reg, Log: discovery.NewJSONLog(&buf)})
	view := catalogtest.Registry(t, tool("bank/get_balance", "Get the balance of an account")).Snapshot().Authorize(everyone)
	long := strings.Repeat("\x00", 1<<20) // 6 MiB once escaped in JSON
	ctx := context.Background()
	if _, err := d.Shortlist(ctx, view, discovery.Request{Query: "balance", Session: long}); err != nil {
		t.Fatal(err)
	}
	d.RecordOutcome(ctx, view, discovery.Outcome{Session: long, Source: discovery.SourceCall, Tools: []string{"bank/get_balance"}})
	if buf.Len() > 2000 {
		t.Errorf("the log holds %d bytes for two entries, want the session digested", buf.Len())
	}
	entries, _, err := discovery.ReadJSONLog(&buf, "log")
	if err != nil || len(entries) != 2 || !strings.HasPrefix(entries[0].Session, "sha256:") {
		t.Fatalf("ReadJSONLog = %+v, %v; want two entries with a digested session", entries, err)
	}
	if rep := discovery.Misses(entries); rep.Calls != 1 || rep.Hits != 1 {
		t.Errorf("Misses = %+v, want the call linked as a hit", rep)
	}
	if got := gathered(t, reg, "toolgate_discovery_linked_calls_total"); got != 1 {
		t.Errorf("linked calls = %v, want 1", got)
	}
}
