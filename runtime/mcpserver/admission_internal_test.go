package mcpserver

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/internal/runtimetest"
	"github.com/toolgate/toolgate/tools"
)

// TestAdmission: the caps count sessions opening and open, per owner and
// in total; a refusal's Retry-After is the time until the least recently
// used session (of the owner, or of the server) expires if it stays idle.
func TestAdmission(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	type step struct {
		op    string // reserve, opened, abandoned, closed, used
		owner string
		id    string
		at    time.Duration
		wait  int    // reserve: the Retry-After of a refusal; 0 admitted
		says  string // reserve: in the refusal's message
	}
	for _, tc := range []struct {
		name  string
		steps []step
		open  int // sessions open or opening at the end
	}{
		{"per owner", []step{
			{op: "reserve", owner: "a"}, {op: "opened", owner: "a", id: "1"},
			{op: "reserve", owner: "a", at: time.Minute}, {op: "opened", owner: "a", id: "2", at: time.Minute},
			{op: "reserve", owner: "a", at: 2 * time.Minute, wait: 480, says: "this principal (the limit is 2)"},
			{op: "reserve", owner: "b", at: 2 * time.Minute},
		}, 3},
		{"a POST restarts the idle time", []step{
			{op: "reserve", owner: "a"}, {op: "opened", owner: "a", id: "1"},
			{op: "reserve", owner: "a"}, {op: "opened", owner: "a", id: "2", at: time.Minute},
			{op: "used", owner: "a", id: "1", at: 3 * time.Minute},
			{op: "reserve", owner: "a", at: 4 * time.Minute, wait: 420},
			{op: "used", owner: "b", id: "2", at: 5 * time.Minute}, // another owner: no effect
			{op: "reserve", owner: "a", at: 5 * time.Minute, wait: 360},
		}, 2},
		{"sessions still opening", []step{
			{op: "reserve", owner: "a"}, {op: "reserve", owner: "a"},
			{op: "reserve", owner: "a", wait: 1},
			{op: "abandoned", owner: "a"},
			{op: "reserve", owner: "a"},
		}, 2},
		{"in total", []step{
			{op: "reserve", owner: "a"}, {op: "opened", owner: "a", id: "1", at: 5 * time.Minute},
			{op: "reserve", owner: "b"}, {op: "opened", owner: "b", id: "2", at: 3 * time.Minute},
			{op: "reserve", owner: "c"}, {op: "opened", owner: "c", id: "3", at: 6 * time.Minute},
			{op: "reserve", owner: "d", at: 4 * time.Minute, wait: 540, says: "the server has too many open sessions (the limit is 3)"},
		}, 3},
		{"in total, with a session still opening", []step{
			{op: "reserve", owner: "a"}, {op: "opened", owner: "a", id: "1", at: 5 * time.Minute},
			{op: "reserve", owner: "b"},
			{op: "reserve", owner: "c"}, {op: "opened", owner: "c", id: "3", at: 6 * time.Minute},
			{op: "reserve", owner: "d", at: 4 * time.Minute, wait: 660, says: "the server"},
		}, 3},
		{"closing frees the slot, once", []step{
			{op: "reserve", owner: "a"}, {op: "opened", owner: "a", id: "1"},
			{op: "reserve", owner: "a"}, {op: "opened", owner: "a", id: "2"},
			{op: "closed", owner: "b", id: "1"}, // another owner's DELETE
			{op: "reserve", owner: "a", wait: 600},
			{op: "closed", owner: "a", id: "1"}, {op: "closed", owner: "a", id: "1"},
			{op: "reserve", owner: "a"},
		}, 2},
		{"an expiry overdue", []step{
			{op: "reserve", owner: "a"}, {op: "opened", owner: "a", id: "1"},
			{op: "reserve", owner: "a"}, {op: "opened", owner: "a", id: "2"},
			{op: "reserve", owner: "a", at: time.Hour, wait: 1},
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAdmission(2, 3, 10*time.Minute)
			for i, s := range tc.steps {
				switch s.op {
				case "reserve":
					no := a.reserve(s.owner, at(s.at))
					switch {
					case s.wait == 0 && no != nil:
						t.Fatalf("step %d: reserve(%s) = %+v, want admitted", i, s.owner, no)
					case s.wait != 0 && (no == nil || no.retryAfter != s.wait || !strings.Contains(no.message, s.says)):
						t.Fatalf("step %d: reserve(%s) = %+v, want refused, retry after %d, saying %q", i, s.owner, no, s.wait, s.says)
					}
				case "opened":
					a.opened(s.owner, s.id, at(s.at))
				case "abandoned":
					a.abandoned(s.owner)
				case "closed":
					a.closed(s.owner, s.id)
				case "used":
					a.used(s.owner, s.id, at(s.at))
				}
			}
			if got := a.open(); got != tc.open {
				t.Errorf("open() = %d, want %d", got, tc.open)
			}
		})
	}
	t.Run("owners holding nothing are forgotten", func(t *testing.T) {
		a := newAdmission(2, 3, time.Minute)
		a.reserve("a", t0)
		a.opened("a", "1", t0)
		a.reserve("b", t0)
		a.abandoned("b")
		a.closed("a", "1")
		if len(a.owners) != 0 || a.n != 0 {
			t.Errorf("after every session closed: %d owners, %d sessions; want none", len(a.owners), a.n)
		}
	})
}

// TestIdleSessionExpires: a session with no request for SessionTimeout is
// closed by the SDK's timer; its slot is freed (a principal at its cap may
// open another) and its ID is then unknown (404).
func TestIdleSessionExpires(t *testing.T) {
	reg := tools.NewRegistry()
	gw, disc := runtimetest.Stack(t, reg, &gateway.Options{})
	s, err := New(reg, disc, gw, &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Authenticate:            func(*http.Request) (tools.Principal, error) { return tools.Principal{ID: "a", Tenant: "t"}, nil },
		SessionTimeout:          50 * time.Millisecond,
		MaxSessionsPerPrincipal: 1})
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan string, 4)
	s.sessionClosed = func(id string) { closed <- id }
	h, err := s.Handler()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	post := func(session, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer any")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`
	resp, body := post("", initialize)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize = %d %q, want a session", resp.StatusCode, body)
	}
	select {
	case got := <-closed:
		if got != id {
			t.Fatalf("closed session %q, want %q", got, id)
		}
	case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
		t.Fatal("the idle session was not closed")
	}
	if n := s.sessions.open(); n != 0 {
		t.Errorf("after the idle session closed, %d sessions are counted, want 0", n)
	}
	// The SDK forgets the session's ID as its close finishes, which may be
	// just after the hook runs: until then a request may still reach it.
	for deadline := time.Now().Add(time.Minute); ; { // a bound on a hang
		resp, body := post(id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a ping in the expired session = %d %q, want 404", resp.StatusCode, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if resp, body := post("", initialize); resp.StatusCode != http.StatusOK {
		t.Errorf("a new session at the cap of 1 after the expiry = %d %q, want 200", resp.StatusCode, body)
	}
}

// TestMayInitialize: only a body that is clearly one message with another
// method skips the caps; anything that could be read as an initialize
// counts.
func TestMayInitialize(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       bool
	}{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, true},
		{"tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false},
		{"a notification", ` {"jsonrpc":"2.0","method":"notifications/initialized"}`, false},
		{"a response", `{"jsonrpc":"2.0","id":1,"result":{}}`, false},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]`, true},
		{"method twice", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"initialize"}`, true},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":7}`, true},
		{"not JSON", `{"jsonrpc":"2.0",`, true},
		{"empty", ``, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mayInitialize([]byte(tc.body)); got != tc.want {
				t.Errorf("mayInitialize(%s) = %v, want %v", tc.body, got, tc.want)
			}
		})
	}
}

// FuzzMayInitialize: a body mayInitialize lets past the caps is never
// read by the SDK's decoder as an initialize request.
func FuzzMayInitialize(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initi\u0061lize","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"initialize"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if mayInitialize(body) {
			return
		}
		if msg, err := jsonrpc.DecodeMessage(body); err == nil {
			if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
				t.Fatalf("mayInitialize(%q) = false, but the SDK reads an initialize", body)
			}
		}
	})
}
