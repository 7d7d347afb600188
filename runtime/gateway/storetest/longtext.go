package storetest

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/auditexport"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/internal/gatewaytest"
)

// RunLongText checks, through [gateway.Gateway.Execute] on a store newStore
// opens, calls whose text fields are longer than the audit entry keeps
// and are not ASCII: a tool name, a session, an actor and a taint of 600
// bytes of "é". The gateway cuts each at a character's start, so every
// entry is appended (PostgreSQL refuses invalid UTF-8 in a text column),
// holds valid UTF-8, and the chain verifies both in the store and as
// exported (JSON would turn half a character into U+FFFD).
func RunLongText(t *testing.T, newStore func(t *testing.T) store.Store) {
	st := newStore(t)
	e := gatewaytest.NewOn(t, st, nil)
	long := strings.Repeat("é", 300)
	cases := []struct{ name, tool, actor, taint, session string }{
		{"tool", "bank/" + long, "", "", "s"},
		{"session", "bank/transfer_funds", "", "", "x" + long},
		{"actor and taint", "bank/transfer_funds", "x" + long, "x" + long, "s"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			call := gatewaytest.TransferCall(gatewaytest.Alice, c.session, i, gatewaytest.OKArgs)
			call.Tool, call.Actor, call.Taint = c.tool, c.actor, c.taint
			_, _ = e.Gateway.Execute(t.Context(), call)
		})
	}
	entries, err := st.QueryAudit(t.Context(), store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(cases) {
		t.Fatalf("%d audit entries, want %d", len(entries), len(cases))
	}
	for _, en := range entries {
		for field, v := range map[string]string{"tool": en.Tool, "actor": en.Actor, "taint": en.Taint, "session": en.SessionID, "reason": en.Reason} {
			if !utf8.ValidString(v) {
				t.Errorf("entry %d: %s is not valid UTF-8: …%q", en.Seq, field, v[max(0, len(v)-8):])
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
	if rep, err := auditexport.Verify(&buf, "audit.jsonl", nil); err != nil || rep.Break != nil || rep.Entries != len(cases) {
		t.Errorf("auditexport.Verify = %+v (break %v), %v", rep, rep.Break, err)
	}
}
