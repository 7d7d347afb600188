package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/tools"
)

// heldCall makes the gateway of "mcp serve --data dir" hold an irreversible
// call, as a client's call_tool would, and returns the approval ID and a
// function that sends the same call again.
func heldCall(t *testing.T, dir string) (string, func() error, *int) {
	t.Helper()
	return heldCallWith(t, dir, json.RawMessage(`{"transaction_id":"tx-1"}`))
}

// heldCallWith is heldCall with the call's arguments.
func heldCallWith(t *testing.T, dir string, args json.RawMessage) (string, func() error, *int) {
	t.Helper()
	runs := new(int)
	refund, err := tools.NewFunc("bank/issue_full_refund", tools.Card{Summary: "Refund a whole transaction", Irreversible: true},
		func(_ context.Context, in struct {
			TransactionID string `json:"transaction_id"`
		}) (map[string]string, error) {
			*runs++
			return map[string]string{"refunded": in.TransactionID}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	if err := reg.Add(refund); err != nil {
		t.Fatal(err)
	}
	call := func() error {
		store, err := sqlitestore.Open(t.Context(), filepath.Join(dir, "gateway.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		gw, err := gateway.New(reg, store, &gateway.Options{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		_, err = gw.Execute(t.Context(), gateway.Call{Principal: tools.Principal{ID: "alice", Tenant: "acme"},
			SessionID: "mcp-TEST", Step: 1, Tool: "bank/issue_full_refund", Arguments: args})
		return err
	}
	var ge *gateway.Error
	if err := call(); !errors.As(err, &ge) || ge.Type != gateway.ConfirmationRequired || ge.ApprovalID == "" {
		t.Fatalf("the irreversible call = %v, want CONFIRMATION_REQUIRED", err)
	}
	return ge.ApprovalID, call, runs
}

func TestMCPApprove(t *testing.T) {
	dir := t.TempDir()
	id, call, runs := heldCall(t, dir)
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout (exit 0) or stderr
	}{
		{"no id", []string{"--data", dir, "--principal", "bob", "--tenant", "acme"}, exitUsage, "APPROVAL_ID"},
		{"no data", []string{"--principal", "bob", "--tenant", "acme", id}, exitUsage, "--data"},
		{"no store there", []string{"--data", t.TempDir(), "--principal", "bob", "--tenant", "acme", id}, exitUsage, "no gateway store"},
		{"no principal", []string{"--data", dir, id}, exitUsage, "--principal"},
		{"a wrong flag", []string{"--data", dir, "--bogus", id}, exitUsage, "bogus"},
		{"the requester itself", []string{"--data", dir, "--principal", "alice", "--tenant", "acme", id}, exitNegative, "its own call"},
		{"another tenant", []string{"--data", dir, "--principal", "bob", "--tenant", "other", id}, exitNegative, "no approval"},
		{"an unknown approval", []string{"--data", dir, "--principal", "bob", "--tenant", "acme", "apr_nope"}, exitNegative, "no approval"},
		{"show", []string{"--data", dir, "--principal", "bob", "--tenant", "acme", "--show", id}, exitOK, `"granted":false`},
		{"grant", []string{"--data", dir, "--principal", "bob", "--tenant", "acme", id}, exitOK, `"approver":"bob"`},
		{"help", []string{"--help"}, exitOK, "Examples"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(append([]string{"mcp", "approve"}, tc.args...)...)
			got := stderr
			if code == exitOK {
				got = stdout
			}
			if code != tc.code || !strings.Contains(got, tc.out) {
				t.Errorf("mcp approve (%s) = exit %d, stdout %q, stderr %q; want exit %d with %q", tc.name, code, stdout, stderr, tc.code, tc.out)
			}
			if tc.name != "grant" && tc.name != "help" && *runs != 0 {
				t.Fatalf("the refund ran after %s", tc.name)
			}
		})
	}
	if err := call(); err != nil {
		t.Fatalf("the call sent again after the approval: %v", err)
	}
	if *runs != 1 {
		t.Errorf("the refund ran %d times, want 1", *runs)
	}
}

// TestMCPApproveDeny: --deny refuses the held call; sent again it is
// PERMISSION_DENIED and does not run, and the approval cannot then be
// granted.
func TestMCPApproveDeny(t *testing.T) {
	dir := t.TempDir()
	id, call, runs := heldCall(t, dir)
	approve := func(args ...string) (int, string, string) {
		return runCmd(append([]string{"mcp", "approve", "--data", dir, "--principal", "bob", "--tenant", "acme"}, args...)...)
	}
	if code, _, errOut := approve("--show", "--deny", id); code != exitUsage || !strings.Contains(errOut, "not both") {
		t.Errorf("--show --deny = exit %d, stderr %q; want exit 2 saying not both", code, errOut)
	}
	if code, out, errOut := approve("--deny", id); code != exitOK || !strings.Contains(out, `"denied":true`) || !strings.Contains(out, `"approver":"bob"`) {
		t.Fatalf("--deny = exit %d, stdout %q, stderr %q; want exit 0 with the approval denied by bob", code, out, errOut)
	}
	var ge *gateway.Error
	if err := call(); !errors.As(err, &ge) || ge.Type != gateway.PermissionDenied || ge.ApprovalID != id {
		t.Fatalf("the call sent again after the denial = %v; want PERMISSION_DENIED naming %s", err, id)
	}
	if code, _, errOut := approve(id); code != exitNegative || !strings.Contains(errOut, "already denied by bob") {
		t.Errorf("granting the denied approval = exit %d, stderr %q; want exit 1, already denied", code, errOut)
	}
	if *runs != 0 {
		t.Errorf("the refund ran %d times after a denial, want 0", *runs)
	}
}

// TestMCPHTTPTimeouts: the server of "mcp serve --http" has header, read
// and write timeouts, and a request body sent one byte at a time is cut
// off (the read timeout shortened here so the test is quick).
func TestMCPHTTPTimeouts(t *testing.T) {
	hs := mcpHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.WriteTimeout <= 0 || hs.IdleTimeout <= 0 {
		t.Fatalf("timeouts: header %v, read %v, write %v, idle %v; want all set", hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout)
	}
	hs.ReadTimeout = 300 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// One byte every 20ms: the whole body would take over half an hour.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for sent := 0; sent < 100000; sent++ {
		select {
		case <-deadline:
			t.Fatalf("the slow body was not cut off after %d bytes", sent)
		case <-tick.C:
		}
		if _, err := conn.Write([]byte("x")); err != nil {
			return // cut off
		}
		conn.SetReadDeadline(time.Now().Add(time.Millisecond))
		var b [1]byte
		if _, err := conn.Read(b[:]); err != nil && !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
			return // the server closed the connection
		}
	}
	t.Fatal("the whole slow body was accepted")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestMCPHelp: help for mcp and its commands goes to stdout with the flags
// and an example, exit 0; a wrong flag still exits 2 with one line.
func TestMCPHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mcp", "--help"}, exitOK, "toolgate mcp pin --mcp-config"},
		{[]string{"mcp", "-h"}, exitOK, "usage: toolgate mcp serve|approve|pin"},
		{[]string{"mcp", "serve", "--help"}, exitOK, "--tokens"},
		{[]string{"mcp", "approve", "-h"}, exitOK, "--show"},
		{[]string{"help", "mcp"}, exitOK, "(toolgate mcp SUB -h lists each subcommand's flags)"},
		{[]string{"mcp", "serve", "--nope"}, exitUsage, "flag provided but not defined: -nope"},
		{[]string{"mcp", "nope"}, exitUsage, "unknown command"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			code, stdout, stderr := runCmd(tc.args...)
			got := stdout
			if code != exitOK {
				got = stderr
			}
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("toolgate %v = exit %d, stdout %.80q, stderr %.80q; want exit %d with %q", tc.args, code, stdout, stderr, tc.code, tc.want)
			}
		})
	}
}
