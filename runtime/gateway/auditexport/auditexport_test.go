package auditexport_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/auditexport"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// exported returns the export of a memstore holding n entries, signed at
// the last one with key.
func exported(t testing.TB, n int, key ed25519.PrivateKey) []byte {
	st := memstore.New()
	ctx := context.Background()
	for i := range n {
		// Invalid UTF-8 and controls survive the round trip: the hash is over
		// what encoding/json writes.
		if err := st.AppendAudit(ctx, store.AuditEntry{Time: t0.Add(time.Duration(i) * time.Second), Tenant: "acme", Principal: "p\xff\xfe",
			Tool: "t\u2028\x1b[31m", Step: math.MaxInt, Decision: "allow", Outcome: "ok", Latency: 1<<62 + time.Duration(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if key != nil {
		if _, err := auditchain.Sign(ctx, st, key, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if _, err := auditexport.Export(ctx, &b, st, auditexport.Options{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	pub, key, _ := ed25519.GenerateKey(nil)
	rep, err := auditexport.Verify(bytes.NewReader(exported(t, 5, key)), "a.jsonl", pub)
	if err != nil || rep.Break != nil || rep.Entries != 5 || rep.Signed != 1 || rep.LastSigned != 5 {
		t.Fatalf("Verify = %+v (break %v), %v; want 5 entries and 1 signed checkpoint", rep, rep.Break, err)
	}
	rep, err = auditexport.Verify(bytes.NewReader(exported(t, 0, nil)), "a.jsonl", nil)
	if err != nil || rep.Break != nil || rep.Entries != 0 {
		t.Fatalf("Verify(empty log) = %+v, %v", rep, err)
	}
}

func TestMalformed(t *testing.T) {
	good := string(exported(t, 2, nil))
	lines := strings.SplitAfter(good, "\n")
	tests := []struct{ name, in, want string }{
		{"empty", "", "a.jsonl: empty"},
		{"no anchor", lines[1], `a.jsonl:1: the first line must be the "audit_anchor" line`},
		{"duplicate key", `{"type":"audit_anchor","type":"audit_entry"}`, "a.jsonl:1: not a JSON object"},
		{"unknown type", lines[0] + `{"type":"audit_other"}`, `a.jsonl:2: unknown type "audit_other"`},
		{"bad field", lines[0] + `{"type":"audit_entry","step":"one"}`, "a.jsonl:2: entry: "},
		{"anchor twice", good + lines[0], `a.jsonl:4: a "audit_anchor" line after the entries began`},
		// encoding/json binds a member to a field whatever its case (and
		// Unicode folding: ſ is s, the Kelvin sign is K), the last one
		// winning: verify would check a value that a case-sensitive reader
		// of the file (jq, a SIEM) does not see.
		{"member name in another case", lines[0] + strings.Replace(lines[1], `"tool":`, `"tool":"bank/get_balance","TOOL":`, 1),
			`a.jsonl:2: member "TOOL" is "tool" in another case`},
		{"member name folded", lines[0] + strings.Replace(lines[1], `"step":`, `"step":0,"ſtep":`, 1), `a.jsonl:2: member "ſtep" is "step" in another case`},
		{"type in another case", `{"type":"audit_checkpoint","Type":"audit_anchor","seq":0,"hash":"x"}`, `a.jsonl:1: member "Type" is "type" in another case`},
		{"member of no line", lines[0] + strings.Replace(lines[1], `"tool":`, `"approved_by":"cfo","tool":`, 1),
			`a.jsonl:2: member "approved_by" is no member of an export's lines`},
		{"too long", lines[0] + `{"type":"audit_entry","reason":"` + strings.Repeat("x", auditexport.MaxLine) + `"}`, "a.jsonl:2: line longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := auditexport.Verify(strings.NewReader(tc.in), "a.jsonl", nil)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("Verify = %v, want an error starting %q", err, tc.want)
			}
		})
	}
}

// FuzzVerify: any input is an error, a report, or a break, never a panic,
// and an export that changed is never reported whole unless what changed
// is outside the hashed content (whitespace, member order).
func FuzzVerify(f *testing.F) {
	f.Add(exported(f, 3, nil))
	f.Add([]byte(`{"type":"audit_anchor","seq":0,"hash":"x"}` + "\n" + `{"type":"audit_checkpoint","seq":1}`))
	f.Add([]byte("{\"type\":\"audit_anchor\"}\n\n{\"type\":\"audit_entry\",\"v\":1,\"hash\":\"h\",\"seq\":1}"))
	pub, _, _ := ed25519.GenerateKey(nil)
	f.Fuzz(func(t *testing.T, in []byte) {
		rep, err := auditexport.Verify(bytes.NewReader(in), "f.jsonl", pub)
		if err != nil && rep.Entries != 0 {
			t.Fatalf("an error with a report: %v, %+v", err, rep)
		}
		if err == nil && rep.Break == nil && !rep.Partial && rep.Entries > 0 && rep.Last != rep.First+uint64(rep.Entries)-1 {
			t.Fatalf("a whole chain with gaps: %+v", rep)
		}
	})
}

// TestTenantSplice: a --tenant file verifies entry by entry, so an entry
// of another tenant, whole and in its place in the chain, would verify
// among them; the anchor names the file's tenant, and such an entry is a
// break.
func TestTenantSplice(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	appendAs := func(tenant string, at time.Duration) {
		if err := st.AppendAudit(ctx, store.AuditEntry{Time: t0.Add(at), Tenant: tenant, Principal: "alice",
			Tool: "bank/pay", Decision: "allow", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	appendAs("acme", 0)
	appendAs("globex", time.Second)
	appendAs("acme", 2*time.Second)
	export := func(tenant string) string {
		var b bytes.Buffer
		if _, err := auditexport.Export(ctx, &b, st, auditexport.Options{Tenant: tenant}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	all, acme := export(""), export("acme")
	whole := strings.SplitAfter(all, "\n")
	own := strings.SplitAfter(acme, "\n")
	if rep, err := auditexport.Verify(strings.NewReader(acme), "acme.jsonl", nil); err != nil || rep.Break != nil || rep.Entries != 2 {
		t.Fatalf("Verify(acme's file) = %+v (break %v), %v; want 2 entries", rep, rep.Break, err)
	}
	spliced := own[0] + own[1] + whole[2] + own[2]
	rep, err := auditexport.Verify(strings.NewReader(spliced), "acme.jsonl", nil)
	if err != nil || rep.Break == nil || rep.Break.Seq != 2 || rep.Break.Where != "acme.jsonl:3" || !strings.Contains(rep.Break.Problem, "of another tenant") {
		t.Errorf("Verify(acme's file with globex's entry 2) = %+v (break %v), %v; want a break at entry 2, line 3", rep, rep.Break, err)
	}
}

// TestTenantCheckpoints: a checkpoint signs the chain's newest entry,
// often another tenant's; in a --tenant file such a checkpoint, past the
// tenant's last entry, is one whose entry is not in the selection, not
// the sign of a cut-off end. A checkpoint on one of the tenant's entries
// is still checked.
func TestTenantCheckpoints(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	pub, key, _ := ed25519.GenerateKey(nil)
	appendAndSign := func(tenant string, at time.Duration, sign bool) {
		if err := st.AppendAudit(ctx, store.AuditEntry{Time: t0.Add(at), Tenant: tenant, Principal: "alice",
			Tool: "bank/pay", Decision: "allow", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
		if !sign {
			return
		}
		if _, err := auditchain.Sign(ctx, st, key, t0.Add(at)); err != nil {
			t.Fatal(err)
		}
	}
	appendAndSign("acme", 0, true)             // checkpoint 1: acme's
	appendAndSign("globex", time.Second, true) // checkpoint 2: globex's
	appendAndSign("acme", 2*time.Second, false)
	appendAndSign("globex", 3*time.Second, true) // checkpoint 4, past acme's last entry
	var b bytes.Buffer
	if _, err := auditexport.Export(ctx, &b, st, auditexport.Options{Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	rep, err := auditexport.Verify(&b, "acme.jsonl", pub)
	if err != nil || rep.Break != nil || rep.Entries != 2 || rep.Signed != 1 || rep.LastSigned != 1 {
		t.Errorf("Verify(acme's file) = %+v (break %v), %v; want 2 entries, checkpoint 1 signed", rep, rep.Break, err)
	}
}
