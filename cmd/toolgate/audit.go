package main

import (
	"cmp"
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/auditexport"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storeurl"
)

func init() {
	commands["audit"] = runAudit
	helps["audit"] = cli.Usage{Synopsis: strings.TrimPrefix(auditUsage, "usage: "),
		Summary: "Verify the gateway's hash-chained audit log (in its store or an exported file), export it as JSON Lines, or sign a checkpoint; verify exits 1 naming the first bad entry.",
		Examples: []string{
			`toolgate audit verify --data ./gw`,
			`toolgate audit export --store postgres://toolgate@db:5432/toolgate --since 2026-12-01T00:00:00Z > audit.jsonl`,
			`toolgate audit verify --file audit.jsonl --pubkey audit.pub`,
			`toolgate audit checkpoint --data ./gw --audit-key audit.key`,
		}}
}

const auditUsage = `usage: toolgate audit verify (--data DIR | --store URL | --file F) [--pubkey FILE] [--format text|json]` + "\n       " +
	`toolgate audit export (--data DIR | --store URL) [--since T] [--tenant T]` + "\n       " +
	`toolgate audit checkpoint (--data DIR | --store URL) --audit-key FILE`

// runAudit is "toolgate audit verify|export|checkpoint". verify exits 0
// when the chain verifies, 1 when it does not (the first bad entry on
// stdout), 2 for usage or input errors.
func runAudit(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && cli.IsHelpFlag(args[0]) {
		args = []string{"verify", args[0]}
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, auditUsage)
		return exitUsage
	}
	sub := args[0]
	if strings.HasPrefix(sub, "-") {
		sub, args = "verify", append([]string{"verify"}, args...)
	}
	prog := "toolgate audit " + sub
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	data := fs.String("data", "", "`DIR` holding the SQLite store gateway.db (as serve --data)")
	storeSpec := fs.String("store", "", "the shared store: redis://HOST:PORT/DB or postgres://USER@HOST:PORT/DB (as serve --store)")
	file := fs.String("file", "", "verify an export `file` (JSON Lines from audit export), or - for stdin, instead of a store")
	pubkey := fs.String("pubkey", "", "Ed25519 public key `file` (PEM) that every checkpoint must be signed with")
	format := fs.String("format", "text", "verify's output format: text or json")
	since := fs.String("since", "", "export from the first entry at or after this `time` (RFC 3339, or a duration back from now: 24h)")
	tenant := fs.String("tenant", "", "export only this tenant's entries (such a file verifies entry by entry, not as one chain)")
	keyPath := fs.String("audit-key", "", "Ed25519 private key `file` (PEM, PKCS #8) that signs the checkpoint")
	if code, ok := parseFlags(fs, args[1:], stdout, stderr); !ok {
		return code
	}
	if err := flagsErr(fs); err != nil {
		return fail(stderr, prog, err)
	}
	given := func(names ...string) string {
		for _, n := range names {
			if fs.Lookup(n).Value.String() != fs.Lookup(n).DefValue {
				return n
			}
		}
		return ""
	}
	sources := 0
	for _, s := range []string{*data, *storeSpec, *file} {
		if s != "" {
			sources++
		}
	}
	switch sub {
	case "verify":
		if f := given("since", "tenant", "audit-key"); f != "" {
			return fail(stderr, prog, fmt.Errorf("--%s is export's or checkpoint's, not verify's", f))
		}
		if err := cmp.Or(oneSource(sources, true), formatErr(*format, "text", "json")); err != nil {
			return fail(stderr, prog, err)
		}
		return auditVerify(ctx, prog, *data, *storeSpec, *file, *pubkey, *format, stdin, stdout, stderr)
	case "export":
		if f := given("file", "pubkey", "format", "audit-key"); f != "" {
			return fail(stderr, prog, fmt.Errorf("--%s is verify's or checkpoint's, not export's", f))
		}
		if err := oneSource(sources, false); err != nil {
			return fail(stderr, prog, err)
		}
		o := auditexport.Options{Tenant: *tenant}
		if *since != "" {
			t, err := parseSince(*since, time.Now())
			if err != nil {
				return fail(stderr, prog, err)
			}
			o.Since = t
		}
		return auditExport(ctx, prog, *data, *storeSpec, o, stdout, stderr)
	case "checkpoint":
		if f := given("file", "pubkey", "format", "since", "tenant"); f != "" {
			return fail(stderr, prog, fmt.Errorf("--%s is verify's or export's, not checkpoint's", f))
		}
		if err := cmp.Or(oneSource(sources, false), flagsErr(fs, "audit-key")); err != nil {
			return fail(stderr, prog, err)
		}
		return auditCheckpoint(ctx, prog, *data, *storeSpec, *keyPath, stdout, stderr)
	}
	fmt.Fprintf(stderr, "toolgate audit: unknown command %q (verify, export or checkpoint); see \"toolgate help audit\"\n", sub)
	return exitUsage
}

// oneSource checks that exactly one of --data, --store and (when file is
// allowed) --file was given.
func oneSource(n int, file bool) error {
	names := "--data DIR or --store URL"
	if file {
		names = "--data DIR, --store URL or --file F"
	}
	switch {
	case n == 0:
		return fmt.Errorf("give %s", names)
	case n > 1:
		return fmt.Errorf("give one of %s, not several", names)
	}
	return nil
}

// parseSince reads --since: an RFC 3339 time, or a duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want an RFC 3339 time (2026-12-01T00:00:00Z) or a duration back from now (24h)", s)
}

// auditStore is a store whose audit log keeps a chain.
type auditStore interface {
	store.AuditChain
	Close() error
}

// openAuditStore opens the store of --data DIR or --store URL, refusing a
// --data folder without a gateway.db (opening would create an empty one).
// With readOnly (verify, export) the SQLite file is opened read-only: not
// migrated, so one of an older schema is refused until serve opens it.
func openAuditStore(ctx context.Context, data, spec string, readOnly bool) (auditStore, error) {
	if spec == "memory" {
		return nil, errors.New(`--store memory holds no audit log after the process that wrote it`)
	}
	if data != "" {
		path := filepath.Join(data, "gateway.db")
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("%s: no store there: %w", path, errors.Unwrap(err))
		}
	}
	var st storeurl.Store
	var err error
	if spec == "" && readOnly {
		st, err = sqlitestore.Open(ctx, filepath.Join(data, "gateway.db"), &sqlitestore.Options{ReadOnly: true})
		if errors.Is(err, sqlitestore.ErrOlderSchema) {
			err = fmt.Errorf("%w: start toolgate serve on --data %s once (it migrates the store), then run this again", err, data)
		}
	} else {
		st, err = storeurl.Open(ctx, spec, data)
	}
	if err != nil {
		return nil, err
	}
	c, ok := st.(auditStore)
	if !ok {
		st.Close()
		return nil, fmt.Errorf("store %s keeps no audit chain", storeurl.Name(spec))
	}
	return c, nil
}

func auditVerify(ctx context.Context, prog, data, spec, file, pubPath, format string, stdin io.Reader, stdout, stderr io.Writer) int {
	var pub ed25519.PublicKey
	if pubPath != "" {
		var err error
		if pub, err = readPublicKey(pubPath); err != nil {
			return fail(stderr, prog, err)
		}
	}
	var rep auditchain.Report
	var err error
	source := file
	if file != "" {
		f, name, oerr := openInput("file", file, stdin)
		if oerr != nil {
			return fail(stderr, prog, oerr)
		}
		source = name
		rep, err = auditexport.Verify(f, name, pub)
		f.Close()
	} else {
		source = cmp.Or(data, storeurl.Redact(spec))
		st, oerr := openAuditStore(ctx, data, spec, true)
		if oerr != nil {
			return fail(stderr, prog, oerr)
		}
		rep, err = auditchain.Verify(ctx, st, pub)
		st.Close()
	}
	if err != nil {
		return fail(stderr, prog, err)
	}
	if format == "json" {
		out := struct {
			OK bool `json:"ok"`
			auditchain.Report
			First   uint64 `json:"first"`
			Last    uint64 `json:"last"`
			Problem any    `json:"problem"`
		}{OK: rep.Break == nil, Report: rep, First: rep.First, Last: rep.Last}
		if b := rep.Break; b != nil {
			p := map[string]any{"seq": b.Seq, "problem": b.Problem}
			if !b.Time.IsZero() {
				p["time"] = b.Time
			}
			if b.Where != "" {
				p["where"] = b.Where
			}
			out.Problem = p
		}
		if err := writeJSON(stdout, out); err != nil {
			return fail(stderr, prog, err)
		}
	} else {
		printAuditReport(stdout, source, rep, pub != nil)
	}
	if rep.Break != nil {
		return exitNegative
	}
	return exitOK
}

func printAuditReport(w io.Writer, source string, rep auditchain.Report, keyed bool) {
	if b := rep.Break; b != nil {
		fmt.Fprintf(w, "FAILED: %s\n", termtext.Line(b.Error()))
		fmt.Fprintf(w, "%d entries verified before it (from the anchor at entry %d)\n", rep.Entries, rep.Anchor.Seq)
		return
	}
	span := "no entries"
	if rep.Entries > 0 {
		span = fmt.Sprintf("%d entries, %d to %d", rep.Entries, rep.First, rep.Last)
	}
	if rep.Partial {
		// A tenant's entries are not consecutive: each is whole and in
		// order, but nothing shows one missing between them.
		fmt.Fprintf(w, "ok: %s: %s, a tenant's selection from the anchor at entry %d: each entry whole and in order, but one removed from the file goes unnoticed\n",
			termtext.Line(source), span, rep.Anchor.Seq)
	} else {
		fmt.Fprintf(w, "ok: %s: %s, chained from the anchor at entry %d\n", termtext.Line(source), span, rep.Anchor.Seq)
	}
	switch {
	case !keyed && rep.Checkpoints > 0:
		fmt.Fprintf(w, "%d checkpoints match their entries; give --pubkey to check their signatures\n", rep.Checkpoints)
	case keyed && rep.Signed == 0:
		fmt.Fprintln(w, "no signed checkpoint: nothing proves the chain was not rewritten as a whole")
	case keyed:
		fmt.Fprintf(w, "%d checkpoints signed by the key; the last covers the entries up to %d", rep.Signed, rep.LastSigned)
		switch {
		case rep.Last > rep.LastSigned && rep.Partial:
			// Between the numbers lie other tenants' entries too.
			fmt.Fprint(w, " (the entries of the file after it are not yet signed)")
		case rep.Last > rep.LastSigned:
			fmt.Fprintf(w, " (the %d after it are chained, not yet signed)", rep.Last-rep.LastSigned)
		}
		fmt.Fprintln(w)
	}
}

func auditExport(ctx context.Context, prog, data, spec string, o auditexport.Options, stdout, stderr io.Writer) int {
	st, err := openAuditStore(ctx, data, spec, true)
	if err != nil {
		return fail(stderr, prog, err)
	}
	defer st.Close()
	if _, err := auditexport.Export(ctx, stdout, st, o); err != nil {
		return fail(stderr, prog, err)
	}
	return exitOK
}

func auditCheckpoint(ctx context.Context, prog, data, spec, keyPath string, stdout, stderr io.Writer) int {
	key, err := readPrivateKey(keyPath)
	if err != nil {
		return fail(stderr, prog, err)
	}
	st, err := openAuditStore(ctx, data, spec, false)
	if err != nil {
		return fail(stderr, prog, err)
	}
	defer st.Close()
	cp, err := auditchain.Sign(ctx, st, key, time.Now())
	if errors.Is(err, store.ErrNotFound) {
		err = errors.New("the audit log holds no entry: nothing to sign")
	}
	if err != nil {
		return fail(stderr, prog, err)
	}
	fmt.Fprintf(stdout, "signed entry %d (hash %s) with key %s at %s\n", cp.Seq, cp.Hash, cp.KeyID, cp.Time.Format(time.RFC3339))
	return exitOK
}

// readKey reads an Ed25519 key of type K from the one PEM block of type
// typ in path, decoded by parse: a private key in PKCS #8 (what "openssl
// genpkey -algorithm ed25519" writes), a public key in PKIX (what "openssl
// pkey -pubout" writes).
func readKey[K ed25519.PrivateKey | ed25519.PublicKey](path, typ string, parse func([]byte) (any, error)) (K, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, errors.Unwrap(err))
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != typ {
		return nil, fmt.Errorf("%s: not a PEM %q block (make one with: openssl genpkey -algorithm ed25519)", path, typ)
	}
	k, err := parse(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	key, ok := k.(K)
	if !ok {
		return nil, fmt.Errorf("%s: %s, not an Ed25519 key (make one with: openssl genpkey -algorithm ed25519)", path, keyKind(k))
	}
	return key, nil
}

// keyKind names the algorithm of a key x509 parsed, in words (not its Go
// type, which says nothing to an operator).
func keyKind(k any) string {
	switch k.(type) {
	case *rsa.PrivateKey, *rsa.PublicKey:
		return "an RSA key"
	case *ecdsa.PrivateKey, *ecdsa.PublicKey:
		return "an ECDSA key"
	case *ecdh.PrivateKey, *ecdh.PublicKey:
		return "an X25519 key"
	}
	return "a key of another algorithm"
}

func readPrivateKey(path string) (ed25519.PrivateKey, error) {
	return readKey[ed25519.PrivateKey](path, "PRIVATE KEY", x509.ParsePKCS8PrivateKey)
}

func readPublicKey(path string) (ed25519.PublicKey, error) {
	return readKey[ed25519.PublicKey](path, "PUBLIC KEY", x509.ParsePKIXPublicKey)
}
