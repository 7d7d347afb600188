package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/sqliteutil"
	"github.com/toolgate/toolgate/internal/testservices"
	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storeurl"
)

var auditT0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// auditBackend is one real store the audit tests tamper with, as someone
// with write access to it (and not to the signing key) would.
type auditBackend struct {
	// flags name the store on the command line.
	flags []string
	// sql runs a statement on the store's database (SQL stores).
	sql func(t *testing.T, query string)
	// redis is the Redis client and key prefix (Redis store).
	rdb *redis.Client
}

// newAuditBackend opens a fresh store of kind, appends six entries through
// the store's own write, and returns it with its flags.
func newAuditBackend(t *testing.T, kind string) (*auditBackend, store.AuditChain) {
	t.Helper()
	ctx := context.Background()
	b := &auditBackend{}
	var spec, dir string
	switch kind {
	case "sqlite":
		dir = t.TempDir()
		b.flags = []string{"--data", dir}
		b.sql = func(t *testing.T, q string) {
			t.Helper()
			db, err := sql.Open("sqlite", sqliteutil.FileURI(filepath.Join(dir, "gateway.db"), url.Values{}))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	case "postgres":
		spec = testservices.NewPostgres(t).URL
		b.flags = []string{"--store", spec}
		b.sql = func(t *testing.T, q string) {
			t.Helper()
			conn, err := pgx.Connect(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, "SET search_path = toolgate; "+q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	case "redis":
		spec = testservices.NewRedis(t).URL
		b.flags = []string{"--store", spec}
		opt, err := redis.ParseURL(spec)
		if err != nil {
			t.Fatal(err)
		}
		b.rdb = redis.NewClient(opt)
		t.Cleanup(func() { b.rdb.Close() })
	}
	st, err := storeurl.Open(ctx, spec, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i := range 6 {
		if err := st.AppendAudit(ctx, store.AuditEntry{Time: auditT0.Add(time.Duration(i) * time.Minute), Tenant: "acme",
			Principal: "alice", SessionID: "s1", Step: i, Tool: "bank/transfer_funds", Key: fmt.Sprintf("%064d", i),
			Decision: "allow", Reason: "scopes ok", Outcome: "ok", Latency: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	return b, st.(store.AuditChain)
}

// member returns the Redis chain member of entry seq.
func (b *auditBackend) member(t *testing.T, seq int) string {
	t.Helper()
	m, err := b.rdb.ZRangeByScore(context.Background(), "toolgate:audit:chain", &redis.ZRangeBy{Min: fmt.Sprint(seq), Max: fmt.Sprint(seq)}).Result()
	if err != nil || len(m) != 1 {
		t.Fatalf("chain member %d: %v, %v", seq, m, err)
	}
	return m[0]
}

// edit changes one byte of entry seq's tool ID.
func (b *auditBackend) edit(t *testing.T, seq int) {
	if b.rdb == nil {
		b.sql(t, fmt.Sprintf(`UPDATE audit SET tool = 'bank/transfer_fundz' WHERE seq = %d`, seq))
		return
	}
	old := b.member(t, seq)
	b.replace(t, old, strings.Replace(old, "transfer_funds", "transfer_fundz", 1), seq)
}

func (b *auditBackend) replace(t *testing.T, old, now string, seq int) {
	ctx := context.Background()
	b.rdb.ZRem(ctx, "toolgate:audit:chain", old)
	b.rdb.ZRem(ctx, "toolgate:audit", old)
	if now != "" {
		b.rdb.ZAdd(ctx, "toolgate:audit:chain", redis.Z{Score: float64(seq), Member: now})
		b.rdb.ZAdd(ctx, "toolgate:audit", redis.Z{Member: now})
	}
}

// remove deletes entry seq.
func (b *auditBackend) remove(t *testing.T, seq int) {
	if b.rdb == nil {
		b.sql(t, fmt.Sprintf(`DELETE FROM audit WHERE seq = %d`, seq))
		return
	}
	b.replace(t, b.member(t, seq), "", 0)
}

// swap exchanges the places of entries i and j.
func (b *auditBackend) swap(t *testing.T, i, j int) {
	if b.rdb == nil {
		b.sql(t, fmt.Sprintf(`UPDATE audit SET seq = -1 WHERE seq = %d`, i))
		b.sql(t, fmt.Sprintf(`UPDATE audit SET seq = %d WHERE seq = %d`, i, j))
		b.sql(t, fmt.Sprintf(`UPDATE audit SET seq = %d WHERE seq = -1`, j))
		return
	}
	mi, mj := b.member(t, i), b.member(t, j)
	b.rdb.ZAdd(context.Background(), "toolgate:audit:chain", redis.Z{Score: float64(j), Member: mi}, redis.Z{Score: float64(i), Member: mj})
}

// forge appends entry e (chained or not, as its fields say) at its Seq
// behind the store's back.
func (b *auditBackend) forge(t *testing.T, e store.AuditEntry) {
	if b.rdb == nil {
		b.sql(t, fmt.Sprintf(`INSERT INTO audit(at, tenant, principal, actor, taint, session_id, step, tool, key, decision, reason,
			outcome, approval_id, latency, seq, prev, hash, v) VALUES (%d, '%s', '%s', '', '', '%s', %d, '%s', '%s', '%s', '%s', '%s', '', %d, %d, '%s', '%s', %d)`,
			e.Time.UnixNano(), e.Tenant, e.Principal, e.SessionID, e.Step, e.Tool, e.Key, e.Decision, e.Reason, e.Outcome,
			int64(e.Latency), e.Seq, e.Prev, e.Hash, e.V))
		return
	}
	js, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	m := fmt.Sprintf("%020d:%020d:%s", e.Time.UnixNano(), e.Seq, js)
	b.replace(t, "", m, int(e.Seq))
}

// auditKeys writes a fresh Ed25519 key pair as PEM files (what openssl
// genpkey and pkey -pubout write) and returns their paths.
func auditKeys(t *testing.T) (keyPath, pubPath string, key ed25519.PrivateKey) {
	t.Helper()
	pub, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	pder, _ := x509.MarshalPKIXPublicKey(pub)
	keyPath, pubPath = filepath.Join(dir, "audit.key"), filepath.Join(dir, "audit.pub")
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pder}), 0o644); err != nil {
		t.Fatal(err)
	}
	return keyPath, pubPath, key
}

// forgedTail is entry 7, chained correctly after entry 6 (the algorithm is
// public), as an attacker would append it.
func forgedTail(t *testing.T, c store.AuditChain) store.AuditEntry {
	t.Helper()
	all, err := c.ReadAuditChain(context.Background(), 0, 100)
	if err != nil || len(all) != 6 {
		t.Fatalf("ReadAuditChain = %d entries, %v", len(all), err)
	}
	e := store.AuditEntry{Time: auditT0.Add(time.Hour), Tenant: "acme", Principal: "mallory", SessionID: "s9", Step: 1,
		Tool: "bank/transfer_funds", Key: strings.Repeat("f", 64), Decision: "allow", Reason: "scopes ok", Outcome: "ok"}
	return auditchain.Chain(e, 7, all[5].Hash)
}

// auditCase is one way to tamper with the log, and what verify must say.
type auditCase struct {
	name   string
	tamper func(t *testing.T, b *auditBackend, c store.AuditChain, attacker ed25519.PrivateKey)
	// want are substrings of verify's report; empty: the chain verifies.
	want []string
}

var auditCases = []auditCase{
	{"intact", nil, nil},
	{"one byte changed", func(t *testing.T, b *auditBackend, _ store.AuditChain, _ ed25519.PrivateKey) { b.edit(t, 3) },
		[]string{"FAILED: audit entry 3 (2026-12-01T09:02:00Z): edited"}},
	{"entry removed", func(t *testing.T, b *auditBackend, _ store.AuditChain, _ ed25519.PrivateKey) { b.remove(t, 3) },
		[]string{"FAILED: audit entry 3: missing"}},
	{"two entries swapped", func(t *testing.T, b *auditBackend, _ store.AuditChain, _ ed25519.PrivateKey) { b.swap(t, 2, 4) },
		[]string{"FAILED: audit entry 2"}},
	{"forged tail, not chained", func(t *testing.T, b *auditBackend, c store.AuditChain, _ ed25519.PrivateKey) {
		e := forgedTail(t, c)
		e.Prev, e.Hash, e.V = "", "", 0
		b.forge(t, e)
	}, []string{"FAILED: audit entry 7 (2026-12-01T10:00:00Z): not chained"}},
	{"forged tail, chained, forged checkpoint", func(t *testing.T, b *auditBackend, c store.AuditChain, attacker ed25519.PrivateKey) {
		b.forge(t, forgedTail(t, c))
		if _, err := auditchain.Sign(context.Background(), c, attacker, auditT0.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}, []string{"FAILED: audit entry 7 (2026-12-01T11:00:00Z): checkpoint: signed by key"}},
	{"tail removed", func(t *testing.T, b *auditBackend, _ store.AuditChain, _ ed25519.PrivateKey) { b.remove(t, 6) },
		[]string{"FAILED: audit entry 6", "checkpoint: it signs entry 6, but the log ends at 5"}},
	{"chain rewritten after an edit", func(t *testing.T, b *auditBackend, c store.AuditChain, _ ed25519.PrivateKey) {
		all, err := c.ReadAuditChain(context.Background(), 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		all[2].Tool = "bank/transfer_fundz"
		for i := 2; i < len(all); i++ {
			all[i] = auditchain.Chain(all[i], all[i].Seq, all[i-1].Hash)
			b.remove(t, int(all[i].Seq))
			b.forge(t, all[i])
		}
	}, []string{"FAILED: audit entry 6", "checkpoint: it signed another hash"}},
}

// TestAuditVerifyTamper: on each real store, audit verify catches one byte
// changed, an entry removed, two entries swapped and a forged tail, naming
// the first bad entry with exit 1, and passes the untouched log with exit
// 0; and the same holds for the log exported as JSON Lines.
func TestAuditVerifyTamper(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
			for _, tc := range auditCases {
				t.Run(tc.name, func(t *testing.T) {
					b, c := newAuditBackend(t, kind)
					keyPath, pubPath, _ := auditKeys(t)
					_, attacker, _ := ed25519.GenerateKey(nil)
					// The operator signs a checkpoint at entry 6 before the tampering.
					args := append([]string{"audit", "checkpoint"}, b.flags...)
					if code, out, errOut := runCmd(append(args, "--audit-key", keyPath)...); code != exitOK || !strings.HasPrefix(out, "signed entry 6 ") {
						t.Fatalf("audit checkpoint = %d, %q, %q", code, out, errOut)
					}
					if tc.tamper != nil {
						tc.tamper(t, b, c, attacker)
					}
					code, out, errOut := runCmd(append(append([]string{"audit", "verify"}, b.flags...), "--pubkey", pubPath)...)
					checkVerify(t, tc.want, code, out, errOut)
				})
			}
		})
	}
}

// TestAuditVerifyTailWithoutCheckpoint: on each real store, entries
// removed from the end of the log are found with no checkpoint signed,
// from the chain head the store moves in the write that appends an entry.
func TestAuditVerifyTailWithoutCheckpoint(t *testing.T) {
	cases := []auditCase{
		{"intact", nil, nil},
		{"last entry removed", func(t *testing.T, b *auditBackend, _ store.AuditChain, _ ed25519.PrivateKey) { b.remove(t, 6) },
			[]string{"FAILED: audit entry 6: missing: the log ends at 5, but the store's chain head is entry 6"}},
		{"every entry removed", func(t *testing.T, b *auditBackend, _ store.AuditChain, _ ed25519.PrivateKey) {
			for seq := 1; seq <= 6; seq++ {
				b.remove(t, seq)
			}
		}, []string{"FAILED: audit entry 1: missing: the log ends at 0, but the store's chain head is entry 6 (entries 1 to 6 were removed"}},
	}
	for _, kind := range []string{"sqlite", "postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					b, c := newAuditBackend(t, kind)
					if tc.tamper != nil {
						tc.tamper(t, b, c, nil)
					}
					code, out, errOut := runCmd(append([]string{"audit", "verify"}, b.flags...)...)
					checkVerify(t, tc.want, code, out, errOut)
				})
			}
		})
	}
}

func checkVerify(t *testing.T, want []string, code int, out, errOut string) {
	t.Helper()
	if len(want) == 0 {
		if code != exitOK || !strings.HasPrefix(out, "ok: ") || errOut != "" {
			t.Errorf("audit verify = %d, %q, %q; want 0 and ok", code, out, errOut)
		}
		return
	}
	if code != exitNegative || errOut != "" {
		t.Errorf("audit verify = %d, %q, %q; want exit 1 and the report on stdout", code, out, errOut)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("audit verify said %q; want it to contain %q", out, w)
		}
	}
}

// exportFile runs audit export with extra flags on b's store and writes
// the output to a file, returning its path and lines.
func exportFile(t *testing.T, b *auditBackend, extra ...string) (string, []string) {
	t.Helper()
	code, out, errOut := runCmd(append(append([]string{"audit", "export"}, b.flags...), extra...)...)
	if code != exitOK || errOut != "" {
		t.Fatalf("audit export = %d, %q", code, errOut)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// TestAuditExportFile: the export is one JSON object per line (anchor,
// checkpoint, entries with their chain fields) that verifies as a file,
// and audit verify --file catches each tampering of the file, naming the
// entry and its line.
func TestAuditExportFile(t *testing.T) {
	b, _ := newAuditBackend(t, "sqlite")
	keyPath, pubPath, _ := auditKeys(t)
	if code, _, errOut := runCmd(append(append([]string{"audit", "checkpoint"}, b.flags...), "--audit-key", keyPath)...); code != exitOK {
		t.Fatalf("audit checkpoint: %s", errOut)
	}
	path, lines := exportFile(t, b)
	if len(lines) != 8 {
		t.Fatalf("export has %d lines, want 8 (anchor, checkpoint, 6 entries):\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var first, entry map[string]any
	if json.Unmarshal([]byte(lines[0]), &first) != nil || first["type"] != "audit_anchor" {
		t.Errorf("line 1 = %s, want the anchor", lines[0])
	}
	if json.Unmarshal([]byte(lines[2]), &entry) != nil || entry["type"] != "audit_entry" || entry["seq"] != 1.0 ||
		entry["prev"] != auditchain.Genesis || entry["tenant"] != "acme" || entry["v"] != 1.0 || len(entry["hash"].(string)) != 64 {
		t.Errorf("line 3 = %s, want entry 1 with its chain fields", lines[2])
	}
	code, out, errOut := runCmd("audit", "verify", "--file", path, "--pubkey", pubPath)
	if code != exitOK || !strings.Contains(out, "6 entries, 1 to 6") || !strings.Contains(out, "1 checkpoints signed by the key") {
		t.Fatalf("audit verify --file = %d, %q, %q", code, out, errOut)
	}
	edit := func(i int, from, to string) []string {
		l := slicesClone(lines)
		if !strings.Contains(l[i], from) {
			t.Fatalf("line %d lacks %q", i+1, from)
		}
		l[i] = strings.Replace(l[i], from, to, 1)
		return l
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"one byte changed", edit(4, "transfer_funds", "transfer_fundz"), []string{"audit.jsonl:5: audit entry 3 (2026-12-01T09:02:00Z): edited"}},
		{"entry removed", append(slicesClone(lines[:4]), lines[5:]...), []string{"audit.jsonl:5: audit entry 3: missing"}},
		{"two lines swapped", func() []string {
			l := slicesClone(lines)
			l[3], l[5] = l[5], l[3]
			return l
		}(), []string{"audit.jsonl:4: audit entry 2"}},
		{"forged tail", append(slicesClone(lines), `{"type":"audit_entry","time":"2026-12-01T10:00:00Z","tenant":"acme","principal":"mallory","session_id":"s","step":1,"tool":"bank/transfer_funds","decision":"allow","outcome":"ok","latency":0,"seq":7}`),
			[]string{"audit.jsonl:9: audit entry 7 (2026-12-01T10:00:00Z): not chained"}},
		{"tail removed", lines[:7], []string{"audit entry 6", "checkpoint: it signs entry 6, but the log ends at 5"}},
		{"checkpoint signature changed", func() []string {
			var cp map[string]any
			json.Unmarshal([]byte(lines[1]), &cp)
			sig := []byte(cp["sig"].(string))
			sig[0] ^= 1
			if sig[0] == '+' || sig[0] == '/' || sig[0] == '=' {
				sig[0] = 'A'
			}
			return edit(1, cp["sig"].(string), string(sig))
		}(), []string{"checkpoint: its signature does not verify"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "audit.jsonl")
			if err := os.WriteFile(p, []byte(strings.Join(tc.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runCmd("audit", "verify", "--file", p, "--pubkey", pubPath)
			out = strings.ReplaceAll(out, filepath.Dir(p)+string(filepath.Separator), "")
			checkVerify(t, tc.want, code, out, errOut)
		})
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// TestAuditVerifyJSON: --format json reports the first bad entry as data.
func TestAuditVerifyJSON(t *testing.T) {
	b, _ := newAuditBackend(t, "sqlite")
	b.edit(t, 4)
	code, out, errOut := runCmd(append(append([]string{"audit", "verify"}, b.flags...), "--format", "json")...)
	var rep struct {
		OK      bool `json:"ok"`
		Entries int  `json:"entries"`
		Problem struct {
			Seq     uint64    `json:"seq"`
			Time    time.Time `json:"time"`
			Problem string    `json:"problem"`
		} `json:"problem"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitNegative || errOut != "" {
		t.Fatalf("audit verify --format json = %d, %q, %q (%v)", code, out, errOut, err)
	}
	if rep.OK || rep.Entries != 3 || rep.Problem.Seq != 4 || !rep.Problem.Time.Equal(auditT0.Add(3*time.Minute)) || !strings.HasPrefix(rep.Problem.Problem, "edited") {
		t.Errorf("report = %+v; want not ok, 3 entries verified, entry 4 edited", rep)
	}
}

// TestAuditExportSelect: --since starts the file at the first entry at or
// after the time, anchored on the entry before (so it verifies from
// there); --tenant keeps one tenant's entries, and such a file verifies
// entry by entry.
func TestAuditExportSelect(t *testing.T) {
	b, c := newAuditBackend(t, "sqlite")
	if err := c.AppendAudit(context.Background(), store.AuditEntry{Time: auditT0.Add(time.Hour), Tenant: "globex", Principal: "carol",
		Tool: "bank/get_balance", Decision: "deny", Reason: "missing scope", Outcome: "denied"}); err != nil {
		t.Fatal(err)
	}
	path, lines := exportFile(t, b, "--since", "2026-12-01T09:03:00Z")
	if len(lines) != 5 || !strings.Contains(lines[0], `"seq":3`) || !strings.Contains(lines[1], `"seq":4`) {
		t.Errorf("export --since = %q; want the anchor at 3, then entries 4 to 7", lines)
	}
	if code, out, _ := runCmd("audit", "verify", "--file", path); code != exitOK || !strings.Contains(out, "4 entries, 4 to 7") {
		t.Errorf("audit verify --file of the --since export = %d, %q", code, out)
	}
	path, lines = exportFile(t, b, "--tenant", "globex")
	if len(lines) != 2 || !strings.Contains(lines[0], `"tenant":"globex"`) || !strings.Contains(lines[1], `"seq":7`) {
		t.Errorf("export --tenant globex = %q; want the anchor and entry 7", lines)
	}
	// A selection is not one chain: the report must not call it chained.
	if code, out, _ := runCmd("audit", "verify", "--file", path); code != exitOK || strings.Contains(out, "chained") ||
		!strings.Contains(out, "1 entries, 7 to 7, a tenant's selection") || !strings.Contains(out, "removed from the file goes unnoticed") {
		t.Errorf("audit verify --file of the --tenant export = %d, %q; want ok, a selection whose removals go unnoticed", code, out)
	}
	os.WriteFile(path, []byte(strings.Replace(strings.Join(lines, "\n"), "missing scope", "missing scopf", 1)), 0o644)
	if code, out, _ := runCmd("audit", "verify", "--file", path); code != exitNegative || !strings.Contains(out, "audit entry 7") {
		t.Errorf("audit verify --file of an edited --tenant export = %d, %q; want 1 naming entry 7", code, out)
	}
}

// TestAuditTenantSigned: the signed report of a --tenant file counts no
// entries it does not hold: after acme's checkpoint at 6 come globex's 7
// and acme's 8, one entry of the file, not two.
func TestAuditTenantSigned(t *testing.T) {
	b, c := newAuditBackend(t, "sqlite")
	keyPath, pubPath, _ := auditKeys(t)
	if code, _, errOut := runCmd(append(append([]string{"audit", "checkpoint"}, b.flags...), "--audit-key", keyPath)...); code != exitOK {
		t.Fatalf("audit checkpoint: %s", errOut)
	}
	appendAs := func(tenant string, at time.Duration) {
		if err := c.AppendAudit(context.Background(), store.AuditEntry{Time: auditT0.Add(at), Tenant: tenant, Principal: "carol",
			Tool: "bank/get_balance", Decision: "allow", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	appendAs("globex", time.Hour)
	appendAs("acme", 2*time.Hour)
	path, _ := exportFile(t, b, "--tenant", "acme")
	code, out, _ := runCmd("audit", "verify", "--file", path, "--pubkey", pubPath)
	if want := "1 checkpoints signed by the key; the last covers the entries up to 6 (the entries of the file after it are not yet signed)\n"; code != exitOK || !strings.HasSuffix(out, want) {
		t.Errorf("audit verify --pubkey of acme's file = %d, %q; want ok, ending %q", code, out, want)
	}
}

// TestAuditUsage: wrong combinations and bad inputs are usage errors (exit
// 2, one line on stderr naming the problem, a file's with its line).
func TestAuditUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"type\":\"audit_anchor\",\"seq\":0,\"hash\":\"x\"}\nnot json\n"), 0o644)
	notKey := filepath.Join(dir, "key.pem")
	os.WriteFile(notKey, []byte("hello"), 0o644)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	ecPub := filepath.Join(dir, "ec.pub")
	os.WriteFile(ecPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644)
	// A store whose audit log is still empty: nothing to sign.
	empty := t.TempDir()
	st, err := storeurl.Open(t.Context(), "", empty)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	keyPath, _, _ := auditKeys(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"audit", "verify"}, "toolgate audit verify: give --data DIR, --store URL or --file F"},
		{[]string{"audit", "verify", "--data", dir, "--file", bad}, "toolgate audit verify: give one of"},
		{[]string{"audit", "verify", "--data", dir}, "toolgate audit verify: " + filepath.Join(dir, "gateway.db") + ": no store there"},
		{[]string{"audit", "verify", "--file", bad}, "toolgate audit verify: " + bad + ":2: not a JSON object"},
		{[]string{"audit", "verify", "--file", bad, "--pubkey", notKey}, "toolgate audit verify: " + notKey + ": not a PEM"},
		{[]string{"audit", "verify", "--file", bad, "--pubkey", ecPub}, "toolgate audit verify: " + ecPub + ": an ECDSA key, not an Ed25519 key"},
		{[]string{"audit", "verify", "--store", "memory"}, "toolgate audit verify: --store memory holds no audit log"},
		{[]string{"audit", "export", "--data", dir, "--since", "yesterday"}, `toolgate audit export: --since "yesterday"`},
		{[]string{"audit", "export", "--file", bad}, "toolgate audit export: --file is verify's"},
		{[]string{"audit", "checkpoint", "--data", dir}, "toolgate audit checkpoint: --audit-key is required"},
		{[]string{"audit", "checkpoint", "--data", empty, "--audit-key", keyPath}, "toolgate audit checkpoint: the audit log holds no entry: nothing to sign\n"},
		{[]string{"audit", "sign"}, `toolgate audit: unknown command "sign"`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			code, out, errOut := runCmd(tt.args...)
			if code != exitUsage || out != "" || !strings.HasPrefix(errOut, tt.want) {
				t.Errorf("toolgate %q = %d, %q, %q; want 2 and stderr starting %q", tt.args, code, out, errOut, tt.want)
			}
		})
	}
}

// TestAuditReadsWithoutWriting: audit verify and export leave the SQLite
// file's bytes as they were. A store of the current schema is read; one of
// an older schema (here 5: records without owner) is not migrated, as
// opening it for writing would, but refused with one line saying that
// serve must open it first.
func TestAuditReadsWithoutWriting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		older bool
	}{
		{"current schema", false},
		{"older schema", true},
	} {
		for _, sub := range []string{"verify", "export"} {
			t.Run(tc.name+"/"+sub, func(t *testing.T) {
				b, c := newAuditBackend(t, "sqlite")
				c.(interface{ Close() error }).Close()
				if tc.older {
					b.sql(t, "ALTER TABLE records DROP COLUMN owner; PRAGMA user_version = 5")
				}
				path := filepath.Join(b.flags[1], "gateway.db")
				before, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				code, _, errOut := runCmd(append([]string{"audit", sub}, b.flags...)...)
				switch {
				case !tc.older && code != exitOK:
					t.Errorf("audit %s = exit %d, stderr %q; want 0", sub, code, errOut)
				case tc.older && (code != exitUsage || strings.Count(errOut, "\n") != 1 ||
					!strings.Contains(errOut, path+": schema version 5 is older than this build's schema (6)") || !strings.Contains(errOut, "toolgate serve")):
					t.Errorf("audit %s = exit %d, stderr %q; want 2 and one line saying the schema is older and serve must open it", sub, code, errOut)
				}
				if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, before) {
					t.Errorf("audit %s changed %s (%d bytes before, %d after, %v)", sub, path, len(before), len(after), err)
				}
			})
		}
	}
}
