package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/runtime/mcpserver"
)

// initializeBody is an initialize request with the given JSON-RPC id.
func initializeBody(id int) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`
}

// initialize sends one initialize request with hc, as a client opening a
// session, and returns the response (its body read and closed).
func initialize(t testing.TB, hc *http.Client, url, token string, id int) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeBody(id)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// refusal is the JSON-RPC error body of a 429.
type refusal struct {
	Version string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// checkRefused reports unless resp is a 429 with a Retry-After of 1 to
// maxWait seconds and a JSON-RPC error answering request id whose message
// contains want.
func checkRefused(t *testing.T, what string, resp *http.Response, body string, id int, maxWait int, want string) {
	t.Helper()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("%s: status %d %q, want 429", what, resp.StatusCode, body)
		return
	}
	if wait, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || wait < 1 || wait > maxWait {
		t.Errorf("%s: Retry-After %q, want 1 to %d seconds", what, resp.Header.Get("Retry-After"), maxWait)
	}
	var r refusal
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Version != "2.0" || string(r.ID) != strconv.Itoa(id) ||
		r.Error.Code != -32000 || !strings.Contains(r.Error.Message, want) || !strings.Contains(r.Error.Message, "retry after") {
		t.Errorf("%s: body %q, want a JSON-RPC error (-32000) for id %d saying %q and when to retry", what, body, id, want)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
}

// TestSessionCaps: over HTTP a principal may hold at most
// MaxSessionsPerPrincipal sessions and the server MaxSessions; a session
// beyond either is refused with 429, Retry-After and a JSON-RPC error, and
// the sessions already open are unharmed. A closed session (DELETE) frees
// its slot at once; requests that open no session hold none.
func TestSessionCaps(t *testing.T) {
	f := newFixture(t)
	_, ts := f.serveWith(t, mcpserver.Options{MaxSessionsPerPrincipal: 3, MaxSessions: 5})
	maxWait := 600 // the default idle timeout, in seconds

	teller := []string{connect(t, ts.URL, "teller-token").ID(), connect(t, ts.URL, "teller-token").ID()}
	t.Run("requests that open no session hold no slot", func(t *testing.T) {
		for i := range 5 {
			status, body := rawMCP(t, http.MethodPost, ts.URL, "teller-token", "", `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/list"}`)
			if status == http.StatusTooManyRequests || !strings.Contains(body, "invalid during session initialization") {
				t.Errorf("tools/list without a session = %d %q, want the SDK's refusal", status, body)
			}
			if status, body := rawMCP(t, http.MethodGet, ts.URL, "teller-token", "", ""); status != http.StatusBadRequest {
				t.Errorf("GET without a session = %d %q, want 400", status, body)
			}
		}
	})
	third := connect(t, ts.URL, "teller-token") // the principal's last slot
	t.Run("per principal", func(t *testing.T) {
		resp, body := initialize(t, http.DefaultClient, ts.URL, "teller-token", 41)
		checkRefused(t, "teller's 4th session", resp, body, 41, maxWait, "this principal")
	})
	t.Run("in total", func(t *testing.T) {
		connect(t, ts.URL, "admin-token")
		connect(t, ts.URL, "admin-token") // 5 of 5
		resp, body := initialize(t, http.DefaultClient, ts.URL, "admin-token", 42)
		checkRefused(t, "admin's 3rd session, the server's 6th", resp, body, 42, maxWait, "the server")
	})
	t.Run("open sessions are unharmed", func(t *testing.T) {
		for _, id := range teller {
			t.Run(id, func(t *testing.T) {
				if status, body := rawMCP(t, http.MethodPost, ts.URL, "teller-token", id, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`); status != http.StatusOK {
					t.Errorf("tools/list in an open session after the refusals = %d %q", status, body)
				}
			})
		}
	})
	t.Run("DELETE frees the slot", func(t *testing.T) {
		if err := third.Close(); err != nil { // the SDK client sends DELETE
			t.Fatal(err)
		}
		if resp, body := initialize(t, http.DefaultClient, ts.URL, "teller-token", 43); resp.StatusCode != http.StatusOK {
			t.Errorf("a session after closing one = %d %q, want 200", resp.StatusCode, body)
		}
		resp, body := initialize(t, http.DefaultClient, ts.URL, "teller-token", 44)
		checkRefused(t, "teller's 4th session again", resp, body, 44, maxWait, "this principal")
	})
}

// TestInitializeFlood: 10,000 initialize requests from one token, over a
// real listener, with the caps at their defaults. All but the principal's
// cap are refused, and the server's heap grows by far less than 20 MB
// (before the caps it grew about 300 MB and every request got a session).
// The figures are logged (go test -run TestInitializeFlood -v) and kept in
// docs/security.md.
func TestInitializeFlood(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	f := newFixture(t)
	ts := f.serveHTTP(t)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	t.Cleanup(hc.CloseIdleConnections)

	heap0, stacks0 := liveMemory()
	accepted, refused := 0, 0
	for i := range n {
		resp, body := initialize(t, hc, ts.URL, "teller-token", i)
		switch resp.StatusCode {
		case http.StatusOK:
			accepted++
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Fatalf("initialize %d = %d %q", i, resp.StatusCode, body)
		}
	}
	heap1, stacks1 := liveMemory()
	growth := heap1 - heap0 + stacks1 - stacks0
	t.Logf("%d initialize requests from one token: %d sessions, %d refused (429); memory growth %.2f MB (heap %.2f MB, stacks %.2f MB)",
		n, accepted, refused, mb(growth), mb(heap1-heap0), mb(stacks1-stacks0))
	if accepted != mcpserver.DefaultMaxSessionsPerPrincipal || refused != n-accepted {
		t.Errorf("accepted %d, refused %d; want %d accepted (the default cap), the rest refused", accepted, refused, mcpserver.DefaultMaxSessionsPerPrincipal)
	}
	if growth > 20<<20 {
		t.Errorf("memory grew %d bytes, want at most 20 MB", growth)
	}
}

// liveMemory is the live heap after a full collection, and the
// goroutine stacks in use.
func liveMemory() (heap, stacks int64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc), int64(m.StackInuse)
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }
