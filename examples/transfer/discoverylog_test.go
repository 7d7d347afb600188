package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools/discovery"
)

// readDiscoveryLog reads the JSON Lines discovery log at path, checks its
// mode is 0600, and links its calls ([discovery.Misses]).
func readDiscoveryLog(t *testing.T, path string) *discovery.MissReport {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the discovery log's mode = %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	entries, torn, err := discovery.ReadJSONLog(f, path)
	if err != nil || len(torn) > 0 {
		t.Fatalf("ReadJSONLog = %v, torn lines %v", err, torn)
	}
	return discovery.Misses(entries)
}

// TestServeDiscoveryLog: `transfer serve --discovery-log` logs a
// /v1/discover of a session and the call that follows of a tool its
// shortlist lacked, and /metrics counts the miss.
func TestServeDiscoveryLog(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "discovery.jsonl")
	s := startServe(t, t.TempDir(), writeTokens(t), "--discovery-log", logPath)
	ctx := context.Background()

	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/v1/discover",
		strings.NewReader(`{"query":"what is the balance of ACC-00001","k":1,"session_id":"s1"}`))
	req.Header.Set("Authorization", "Bearer alice-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct{ Candidates []struct{ Name string } }
	err = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(answer.Candidates) != 1 || answer.Candidates[0].Name != "bank/get_balance" {
		t.Fatalf("discover = %d %+v (%v), want bank/get_balance alone", resp.StatusCode, answer, err)
	}
	r, err := post(ctx, http.DefaultClient, s.base+"/v1/tools/call", "alice-token",
		callBody("s1", 1, "list_transactions", `{"account":"ACC-00001"}`))
	if err != nil || r.status != 200 {
		t.Fatalf("list_transactions = %+v, %v", r, err)
	}

	resp, text := testenv.Get(t, s.base+"/metrics")
	for _, want := range []string{"toolgate_discovery_queries_total 1\n", "toolgate_discovery_misses_total 1\n",
		"toolgate_discovery_linked_calls_total 1\n", "toolgate_discovery_shortlist_size_count 1\n", "toolgate_discovery_confidence_count 1\n"} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(string(text), want) {
				t.Errorf("GET /metrics lacks %q", want)
			}
		})
	}
	s.stop(t)

	rep := readDiscoveryLog(t, logPath)
	if rep.Calls != 1 || len(rep.Misses) != 1 || rep.Misses[0].Called != "bank/list_transactions" ||
		rep.Misses[0].Query != "what is the balance of ACC-00001" {
		t.Errorf("Misses of the log = %+v, want the call of bank/list_transactions missed", rep)
	}
}

// TestChatDiscoveryLog: `transfer chat --discovery-log` logs the turn's
// shortlist and the tool the model called, linked by the session. The
// catalog is offered whole (--offer-unconnected, 108 tools), so the turn
// is discovered rather than shown every tool.
func TestChatDiscoveryLog(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "discovery.jsonl")
	code, _, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), "--backend", "scripted", "--offer-unconnected", "--discovery-log", logPath,
		"--once", "send 25 dollars from ACC-00001 to ACC-00002")...)
	if code != exitOK {
		t.Fatalf("chat = %d, stderr %s", code, errOut)
	}
	rep := readDiscoveryLog(t, logPath)
	if rep.Calls != 1 || rep.Hits != 1 || rep.Unlinked != 0 || rep.Linked[0].Called != "bank/transfer_funds" {
		t.Errorf("Misses of the log = %+v, want one call of bank/transfer_funds found by the first shortlist", rep)
	}
}
