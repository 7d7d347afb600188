package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/auditexport"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/internal/gatewaytest"
)

// RunAuditText checks, through [gateway.Gateway.Execute] on a store
// newStore opens, with a rate limit (a bucket's name holds the caller's
// text too), calls whose text a store cannot keep as it is: a tool name,
// a session, an actor and a taint of 600 bytes of "é" (longer than an
// audit entry keeps), and a tool, actor, taint, session and principal
// with a byte that is not UTF-8 or with a NUL (PostgreSQL's text columns
// refuse both). The gateway cuts text at a character's start and writes
// U+FFFD for invalid bytes and NUL, so every call gets its entry, every
// entry is valid UTF-8 without NUL, and the chain verifies in the store
// and as exported (JSON would turn half a character into U+FFFD). A
// session or principal that is not storable, or holds any control
// character (a store may join such names with one), is refused as the
// caller's error, never as the store's: both are part of the key and the
// record.
// A handler's error that is not UTF-8 still makes its record uncertain,
// with a reason that is. An approval ID that is not storable or longer
// than any is NOT_FOUND, an approver with a control character or bytes
// that are not UTF-8 UNAUTHENTICATED, and each refused grant is audited.
func RunAuditText(t *testing.T, newStore func(t *testing.T) store.Store) {
	st := newStore(t)
	// Every call also takes a token of a rate limit: a bucket's name is
	// made of the principal's text too.
	e := gatewaytest.NewOn(t, st, func(o *gateway.Options) { o.RateLimit = store.RateLimit{Rate: 1000, Burst: 1000} })
	long := strings.Repeat("é", 300)
	transfer := "bank/transfer_funds"
	cases := []struct {
		name, tool, actor, taint, session, principal string
		want                                         gateway.ErrorType // "": the call runs
	}{
		{"long tool", "bank/" + long, "", "", "s", "", gateway.UnknownTool},
		{"long session", transfer, "", "", "x" + long, "", gateway.ValidationError},
		{"long actor and taint", transfer, "x" + long, "x" + long, "s", "", gateway.ConfirmationRequired},
		{"tool not UTF-8", transfer + "\xff", "", "", "s", "", gateway.UnknownTool},
		{"actor not UTF-8", transfer, "a\xffb", "", "s2", "", ""},
		{"taint not UTF-8", transfer, "", "t\xff", "s4", "", gateway.ConfirmationRequired},
		{"session not UTF-8", transfer, "", "", "s\xff", "", gateway.ValidationError},
		{"principal not UTF-8", transfer, "", "", "s3", "alice\xff", gateway.Unauthenticated},
		// NUL is valid UTF-8, and a client can send it ("\u0000" in JSON).
		{"tool with NUL", transfer + "\x00", "", "", "s", "", gateway.UnknownTool},
		{"actor with NUL", transfer, "a\x00b", "", "s6", "", ""},
		{"taint with NUL", transfer, "", "t\x00", "s7", "", gateway.ConfirmationRequired},
		{"session with NUL", transfer, "", "", "s\x00", "", gateway.ValidationError},
		{"principal with NUL", transfer, "", "", "s8", "alice\x00", gateway.Unauthenticated},
		// A control character could stand for a separator of a store's keys.
		{"session with U+001F", transfer, "", "", "s\x1f9", "", gateway.ValidationError},
		{"principal with a newline", transfer, "", "", "s9", "alice\nbob", gateway.Unauthenticated},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := gatewaytest.Alice
			if c.principal != "" {
				p.ID = c.principal
			}
			call := gatewaytest.TransferCall(p, c.session, i, gatewaytest.OKArgs)
			call.Tool, call.Actor, call.Taint = c.tool, c.actor, c.taint
			_, err := e.Gateway.Execute(t.Context(), call)
			if c.want == "" {
				if err != nil {
					t.Fatalf("Execute = %v, want the call run", err)
				}
				return
			}
			gatewaytest.WantType(t, c.name, err, c.want)
		})
	}
	// A handler's error is the uncertain record's reason: a Go handler's
	// may hold bytes that are not UTF-8.
	t.Run("handler error not UTF-8", func(t *testing.T) {
		e.SetTransfer(func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, errors.New("bank: connection reset after \xff")
		})
		_, err := e.Gateway.Execute(t.Context(), gatewaytest.TransferCall(gatewaytest.Alice, "s5", 1, gatewaytest.OKArgs))
		ge := gatewaytest.WantType(t, "the failed call", err, gateway.DownstreamFailure)
		r, err := st.Get(t.Context(), ge.IdempotencyKey)
		if err != nil || r.State != store.StateUncertain || !utf8.ValidString(r.Reason) {
			t.Errorf("its record = %+v, %v; want uncertain with a reason of valid UTF-8", r, err)
		}
	})
	// An approval ID arrives in a URL path, where "%ff" is a byte that is
	// not UTF-8: no approval has such an ID.
	t.Run("approval ID not UTF-8", func(t *testing.T) {
		for _, id := range []string{"apr_\xff", "apr_\x00", "apr_" + long} {
			_, err := e.Gateway.Approve(t.Context(), gatewaytest.Bob, id)
			gatewaytest.WantType(t, "Approve", err, gateway.NotFound)
			_, err = e.Gateway.Approval(t.Context(), gatewaytest.Bob, id)
			gatewaytest.WantType(t, "Approval", err, gateway.NotFound)
		}
		bad := gatewaytest.Bob
		bad.ID = "bob\xff"
		_, err := e.Gateway.Approve(t.Context(), bad, "apr_0")
		gatewaytest.WantType(t, "Approve by an approver not UTF-8", err, gateway.Unauthenticated)
	})
	entries, err := st.QueryAudit(t.Context(), store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(cases) + 5; len(entries) != want { // the failed call and the four grants refused
		t.Fatalf("%d audit entries, want %d", len(entries), want)
	}
	for _, en := range entries {
		for field, v := range map[string]string{"tenant": en.Tenant, "principal": en.Principal, "tool": en.Tool, "actor": en.Actor,
			"taint": en.Taint, "session": en.SessionID, "reason": en.Reason, "approval": en.ApprovalID} {
			if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
				t.Errorf("entry %d: %s is not valid UTF-8 without NUL: …%q", en.Seq, field, v[max(0, len(v)-8):])
			}
		}
	}
	chain, ok := st.(store.AuditChain)
	if !ok {
		return
	}
	if rep, err := auditchain.Verify(t.Context(), chain, nil); err != nil || rep.Break != nil {
		t.Errorf("auditchain.Verify = %+v (break %v), %v", rep, rep.Break, err)
	}
	var buf bytes.Buffer
	if _, err := auditexport.Export(t.Context(), &buf, chain, auditexport.Options{}); err != nil {
		t.Fatal(err)
	}
	if rep, err := auditexport.Verify(&buf, "audit.jsonl", nil); err != nil || rep.Break != nil || rep.Entries != len(entries) {
		t.Errorf("auditexport.Verify = %+v (break %v), %v", rep, rep.Break, err)
	}
}
