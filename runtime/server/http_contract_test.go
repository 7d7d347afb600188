package server_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/tools"
)

// TestHTTPApproveRefusesBodyMembers: the approve endpoint takes an empty
// body, {} or a decision; any other member, or another decision, is
// refused and decides nothing.
func TestHTTPApproveRefusesBodyMembers(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	r := h.do(t, "POST", "/v1/tools/call", "tok-alice", callBody("s", 1, "bank/transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000}`))
	id, _ := r.body["approval_id"].(string)
	for _, body := range []string{`{"approved":false}`, `{"approver":"carol"}`, `{"":1}`, `[]`, `null`,
		`{"decision":"reject"}`, `{"decision":false}`, `{"decision":"deny","reason":"no"}`} {
		wantError(t, "approve with "+body, h.do(t, "POST", "/v1/approvals/"+id, "tok-bob", body), 422, gateway.ValidationError, true)
	}
	show := h.do(t, "GET", "/v1/approvals/"+id, "tok-bob", "")
	if appr, _ := show.body["approval"].(map[string]any); appr["granted"] != false || appr["denied"] != nil {
		t.Fatalf("after refused approvals: %s; want still pending", show.raw)
	}
	for _, body := range []string{"", "{}", " { } ", `{"decision":"grant"}`} {
		t.Run(body, func(t *testing.T) {
			if a := h.do(t, "POST", "/v1/approvals/"+id, "tok-bob", body); a.status != 200 {
				t.Errorf("approve with %q = %d %s; want 200", body, a.status, a.raw)
			}
		})
	}
}

// TestHTTPDeny: an approver denies with {"decision":"deny"}; the call,
// sent again, is 403 PERMISSION_DENIED naming the approval, and nothing
// ran; the denied approval cannot be granted.
func TestHTTPDeny(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	call := callBody("s", 1, "bank/transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000}`)
	r := h.do(t, "POST", "/v1/tools/call", "tok-alice", call)
	id, _ := r.body["approval_id"].(string)
	if r.status != 428 || id == "" {
		t.Fatalf("big transfer = %d %s; want 428 with an approval_id", r.status, r.raw)
	}
	d := h.do(t, "POST", "/v1/approvals/"+id, "tok-bob", `{"decision":"deny"}`)
	if appr, _ := d.body["approval"].(map[string]any); d.status != 200 || appr["denied"] != true || appr["granted"] != false || appr["approver"] != "bob" {
		t.Fatalf("deny = %d %s; want 200 with the approval denied by bob", d.status, d.raw)
	}
	again := h.do(t, "POST", "/v1/tools/call", "tok-alice", call)
	wantError(t, "the denied call", again, 403, gateway.PermissionDenied, false)
	if again.body["approval_id"] != id {
		t.Errorf("the denied call = %s; want approval_id %s", again.raw, id)
	}
	wantError(t, "granting the denied approval", h.do(t, "POST", "/v1/approvals/"+id, "tok-bob", ""), 422, gateway.ValidationError, false)
	if n := h.Runs.Total(); n != 0 {
		t.Errorf("the handler ran %d times; want 0", n)
	}
}

// TestHTTPServerCutsOffSlowBodies: a client that sends its body a byte at a
// time is cut off by the server's read timeout instead of holding a
// connection (and a handler) forever.
func TestHTTPServerCutsOffSlowBodies(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	srv := server.NewHTTPServer("127.0.0.1:0", h.srv.Config.Handler, 0)
	srv.ReadTimeout = 300 * time.Millisecond // the test's stand-in for the default 30s
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A safety net against a server that never cuts off; the test fails then.
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	body := callBody("slow", 1, "bank/get_balance", `{"account":"ACC-00001"}`)
	if _, err := io.WriteString(conn, "POST /v1/tools/call HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok-alice\r\n"+
		"Content-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body[:1]); err != nil {
		t.Fatal(err)
	}
	// Trickle the rest a byte every 50ms (the whole body would take
	// seconds): a per-read idle timeout would let it through; the read
	// timeout, a deadline for the whole request, must cut it off.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 1; i < len(body); i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := io.WriteString(conn, body[i:i+1]); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("the trickled request was served")
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server did not cut off the slow body within 20s")
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("reading the answer to a slow body: %v", err)
	}
	if h.Runs.Total() != 0 {
		t.Error("the handler ran for a body that never arrived")
	}
}

// TestHTTPDiscoverQueryLimit: a query beyond MaxQueryBytes is refused
// before the hook runs.
func TestHTTPDiscoverQueryLimit(t *testing.T) {
	ran := false
	h := newHTTPEnv(t, nil, &server.HandlerOptions{Discover: func(ctx context.Context, p tools.Principal, req server.DiscoverRequest) (any, error) {
		query := req.Query
		ran = true
		return map[string]any{"query": query}, nil
	}})
	long := strings.Repeat("send money ", server.MaxQueryBytes/10)
	wantError(t, "discover with a long query", h.do(t, "POST", "/v1/discover", "tok-alice", `{"query":"`+long+`"}`), 422, gateway.ValidationError, true)
	if ran {
		t.Error("the discover hook ran for an oversized query")
	}
	if r := h.do(t, "POST", "/v1/discover", "tok-alice", `{"query":"`+long[:server.MaxQueryBytes]+`"}`); r.status != 200 || !ran {
		t.Errorf("discover with a query of MaxQueryBytes = %d %s, want 200", r.status, r.raw)
	}
}
