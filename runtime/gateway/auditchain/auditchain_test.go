package auditchain

import (
	"github.com/toolgate/toolgate/runtime/gateway/store"

	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/jcs"
)

// TestAuditHashPinned pins the chain's hash input (version 1): a change
// of Body or Hash would make every stored chain fail to verify,
// so it needs a new Version instead.
func TestAuditHashPinned(t *testing.T) {
	e := store.AuditEntry{Time: time.Date(2026, 12, 1, 9, 0, 0, 5, time.FixedZone("x", 3600)), Tenant: "acme", Principal: "alice",
		Actor: "worker", Taint: "mail", SessionID: "s", Step: 3, Tool: "bank/pay", Key: "k", Decision: "allow",
		Reason: "é \"q\"", Outcome: "ok", ApprovalID: "apr", Latency: 1500 * time.Microsecond}
	wantBody := `{"actor":"worker","approval_id":"apr","decision":"allow","key":"k","latency_ns":"1500000","outcome":"ok",` +
		`"principal":"alice","reason":"é \"q\"","session_id":"s","step":"3","taint":"mail","tenant":"acme",` +
		`"time":"2026-12-01T08:00:00.000000005Z","tool":"bank/pay"}`
	if got := string(Body(e)); got != wantBody {
		t.Errorf("Body = %s\nwant        %s", got, wantBody)
	}
	// Body writes the members itself; jcs of the same object agrees.
	m := map[string]any{}
	if err := json.Unmarshal([]byte(wantBody), &m); err != nil {
		t.Fatal(err)
	}
	if viaJCS, err := jcs.Append(nil, m); err != nil || string(viaJCS) != wantBody {
		t.Errorf("jcs.Append = %s, %v; want the body", viaJCS, err)
	}
	c := Chain(e, 7, Genesis)
	if c.Seq != 7 || c.Prev != Genesis || c.V != 1 || c.Hash != Hash(1, 7, Genesis, Digest(e)) {
		t.Errorf("Chain = %+v", c)
	}
	if c.Hash != auditHashV1 {
		t.Errorf("hash of the pinned entry = %s, want %s", c.Hash, auditHashV1)
	}
}

// auditHashV1 is sha256("toolgate-audit/1\n7\n" + 64 zeros + "\n" +
// hex(sha256(body))), computed once with sha256sum.
const auditHashV1 = "b649b1f8b730425b0ad5deeb63274f394d3944daf6d1e048f151573e3804ed2f"

// auditLineV1 is the entry after the pinned one (seq 8, denied), as the
// audit log's JSON held it when AuditEntry.Decision and Outcome were plain
// strings: written by that code, not by this one.
const auditLineV1 = `{"time":"2026-12-01T08:00:00.000000005Z","tenant":"acme","principal":"alice","actor":"worker",` +
	`"taint":"mail","session_id":"s","step":3,"tool":"bank/pay","key":"k","decision":"deny","reason":"é \"q\"",` +
	`"outcome":"denied","approval_id":"apr","latency":1500000,"seq":8,` +
	`"prev":"b649b1f8b730425b0ad5deeb63274f394d3944daf6d1e048f151573e3804ed2f",` +
	`"hash":"8ac22f604cce2353885fd93097e86d072b4be9605afa11695476a679a0153cab","v":1}`

// TestAuditLineBeforeTypedOutcome: an entry written before Decision and
// Outcome had their own types reads back into the typed constants, still
// verifies in its chain, and encodes to the same bytes.
func TestAuditLineBeforeTypedOutcome(t *testing.T) {
	var e store.AuditEntry
	if err := json.Unmarshal([]byte(auditLineV1), &e); err != nil {
		t.Fatal(err)
	}
	if e.Decision != store.DecisionDeny || e.Outcome != store.OutcomeDenied {
		t.Errorf("decoded decision, outcome = %q, %q; want %q, %q", e.Decision, e.Outcome, store.DecisionDeny, store.OutcomeDenied)
	}
	if e.Prev != auditHashV1 {
		t.Errorf("prev = %s, want the pinned entry's hash %s", e.Prev, auditHashV1)
	}
	if got := Hash(e.V, e.Seq, e.Prev, Digest(e)); got != e.Hash {
		t.Errorf("hash of the entry read back = %s, want the stored %s", got, e.Hash)
	}
	if b, err := json.Marshal(e); err != nil || string(b) != auditLineV1 {
		t.Errorf("json.Marshal = %s, %v\nwant the line as written:  %s", b, err, auditLineV1)
	}
}

// TestAuditBodyUTF8: invalid UTF-8 is hashed as encoding/json writes it,
// so an entry read back from a JSON export hashes the same.
func TestAuditBodyUTF8(t *testing.T) {
	for _, v := range []string{"a\xff\xfeb", "\xed\xa0\x80", "ok", "\xc3", "x\xe2\x82", "\u2028\x1b"} {
		t.Run(v, func(t *testing.T) {
			b, _ := json.Marshal(store.AuditEntry{Tenant: v})
			var back store.AuditEntry
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if string(Body(back)) != string(Body(store.AuditEntry{Tenant: v})) {
				t.Errorf("%q: the body after a JSON round trip differs", v)
			}
		})
	}
}

// TestVerifierBreaks: the verifier names the first bad entry for each kind
// of damage, and a selection (Partial) allows gaps but not edits.
func TestVerifierBreaks(t *testing.T) {
	var chain []store.AuditEntry
	prev := Genesis
	for i := range 5 {
		e := Chain(store.AuditEntry{Time: time.Unix(int64(i), 0), Tenant: "acme", Tool: "t", Decision: "allow", Outcome: "ok"}, uint64(i+1), prev)
		prev = e.Hash
		chain = append(chain, e)
	}
	clone := func() []store.AuditEntry { return append([]store.AuditEntry(nil), chain...) }
	tests := []struct {
		name    string
		entries []store.AuditEntry
		partial bool
		tenant  string
		seq     uint64
		problem string
	}{
		{"whole", clone(), false, "", 0, ""},
		{"edited", func() []store.AuditEntry { c := clone(); c[2].Outcome = "oK"; return c }(), false, "", 3, "edited"},
		{"removed", func() []store.AuditEntry { c := clone(); return append(c[:2], c[3:]...) }(), false, "", 3, "missing"},
		{"repeated", func() []store.AuditEntry { c := clone(); return append(c[:3], c[2:]...) }(), false, "", 3, "out of order"},
		{"prev replaced", func() []store.AuditEntry { c := clone(); c[3] = Chain(c[3], 4, strings.Repeat("1", 64)); return c }(), false, "", 4, "does not follow entry 3"},
		{"unchained", func() []store.AuditEntry { c := clone(); c[4].V, c[4].Hash = 0, ""; return c }(), false, "", 5, "not chained"},
		{"selection with a gap", func() []store.AuditEntry { c := clone(); return append(c[:1], c[3:]...) }(), true, "", 0, ""},
		{"selection edited", func() []store.AuditEntry { c := clone(); c = append(c[:1], c[3:]...); c[1].Tool = "u"; return c }(), true, "", 4, "edited"},
		{"tenant's selection", func() []store.AuditEntry { c := clone(); return append(c[:1], c[3:]...) }(), true, "acme", 0, ""},
		{"tenant's selection with another tenant's entry", func() []store.AuditEntry {
			c := clone()
			g := c[2]
			g.Tenant = "globex"
			return append(c[:1], Chain(g, 3, c[1].Hash))
		}(), true, "acme", 3, "of another tenant"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := &Verifier{Partial: tc.partial, Tenant: tc.tenant}
			v.Start(store.AuditAnchor{Hash: Genesis})
			for _, e := range tc.entries {
				v.Add(e, "")
			}
			rep := v.Finish(nil)
			switch {
			case tc.problem == "" && rep.Break != nil:
				t.Errorf("break %v, want none", rep.Break)
			case tc.problem != "" && (rep.Break == nil || rep.Break.Seq != tc.seq || !strings.Contains(rep.Break.Problem, tc.problem)):
				t.Errorf("break %v, want entry %d: %s", rep.Break, tc.seq, tc.problem)
			}
		})
	}
}

// BenchmarkChainAudit measures what the chain adds to one append: the
// canonical body and its digest (Body, Digest: computed by the
// caller, outside the store's write) and the link hash (Hash, inside
// it).
func BenchmarkChainAudit(b *testing.B) {
	e := store.AuditEntry{Time: time.Unix(1_700_000_000, 0), Tenant: "acme", Principal: "alice", SessionID: "s-1", Step: 3,
		Tool: "bank/transfer_funds", Key: strings.Repeat("ab", 32), Decision: "allow", Reason: "scopes ok", Outcome: "ok",
		Latency: 1500 * time.Microsecond}
	b.Run("body", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			Body(e)
		}
	})
	b.Run("digest", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			Digest(e)
		}
	})
	digest := Digest(e)
	b.Run("hash", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			Hash(1, 12345, Genesis, digest)
		}
	})
}
