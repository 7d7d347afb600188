// Package auditexport writes the gateway's audit log (a [store.AuditChain])
// as JSON Lines that a SIEM can ingest, and reads such a file back to
// verify its hash chain away from the store.
//
// A file is, one JSON object per line, each with a "type":
//
//	{"type":"audit_anchor","seq":41,"hash":"…"}                 first: where the chain starts
//	{"type":"audit_checkpoint","seq":90,"hash":"…","time":"…","key_id":"…","sig":"…"}  zero or more
//	{"type":"audit_entry","time":"…","tenant":"acme",…,"seq":42,"prev":"…","hash":"…","v":1}  one per entry
//
// The entries are in the chain's order (by seq); each carries every field
// of [store.AuditEntry], chain fields included. An export of one tenant's
// entries says so in its anchor line ("tenant"); its entries are not
// consecutive, so Verify checks each entry's hash and order, the links
// only between entries that follow each other, and that each entry is of
// that tenant.
//
// Verify is a parser of untrusted input with a bounded cost: lines of at
// most [MaxLine] bytes, at most [MaxCheckpoints] checkpoints (kept in memory),
// entries streamed in constant memory. Member names are exact: a duplicate,
// a member named in another case than a line's member, or a member no
// line has (which no hash would cover), is an error.
package auditexport

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// The line types.
const (
	TypeAnchor     = "audit_anchor"
	TypeCheckpoint = "audit_checkpoint"
	TypeEntry      = "audit_entry"
)

// Bounds of Verify.
const (
	// MaxLine is the longest line Verify reads, in bytes. An entry's
	// fields are bounded by the gateway (reasons, taints, tool and
	// session IDs are truncated), so a real entry is far shorter.
	MaxLine = 1 << 20
	// MaxCheckpoints is the most checkpoint lines a file may have.
	MaxCheckpoints = 100_000
)

// Anchor is the first line of a file.
type Anchor struct {
	Type string `json:"type"`
	store.AuditAnchor
	// Tenant, when set, says the file holds that tenant's entries only.
	Tenant string `json:"tenant,omitempty"`
}

// Checkpoint is a checkpoint line.
type Checkpoint struct {
	Type string `json:"type"`
	store.AuditCheckpoint
}

// Entry is an entry line.
type Entry struct {
	Type string `json:"type"`
	store.AuditEntry
}

// Options selects what Export writes.
type Options struct {
	// Since, when set, starts the export at the first entry (in the
	// chain's order) whose Time is at or after it; the anchor line is
	// then the entry before it, so the file verifies from there.
	Since time.Time
	// Tenant, when set, writes only that tenant's entries.
	Tenant string
}

// page is how many entries Export reads from the store at a time.
const page = 1000

// Export writes c's chain to w as JSON Lines and returns the number of
// entries written.
func Export(ctx context.Context, w io.Writer, c store.AuditChain, o Options) (int, error) {
	// The first page comes before the anchor, as in
	// [auditchain.Verify]: a purge meanwhile only moves the anchor
	// past entries already read, which are then skipped.
	entries, err := c.ReadAuditChain(ctx, 0, page)
	if err != nil {
		return 0, err
	}
	a, err := c.AuditAnchor(ctx)
	if err != nil {
		return 0, err
	}
	cps, err := c.AuditCheckpoints(ctx)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	started, n := false, 0
	start := func() error {
		started = true
		if err := enc.Encode(Anchor{Type: TypeAnchor, AuditAnchor: a, Tenant: o.Tenant}); err != nil {
			return err
		}
		for _, cp := range cps {
			if cp.Seq > a.Seq {
				if err := enc.Encode(Checkpoint{Type: TypeCheckpoint, AuditCheckpoint: cp}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for len(entries) > 0 {
		for _, e := range entries {
			switch {
			case e.Seq <= a.Seq:
				continue
			case !started && !o.Since.IsZero() && e.Time.Before(o.Since):
				a = store.AuditAnchor{Seq: e.Seq, Hash: e.Hash}
				continue
			case !started:
				if err := start(); err != nil {
					return n, err
				}
			}
			if o.Tenant != "" && e.Tenant != o.Tenant {
				continue
			}
			if err := enc.Encode(Entry{Type: TypeEntry, AuditEntry: e}); err != nil {
				return n, err
			}
			n++
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if entries, err = c.ReadAuditChain(ctx, max(entries[len(entries)-1].Seq, a.Seq), page); err != nil {
			return n, err
		}
	}
	if !started {
		if err := start(); err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// names are the members of the lines' types.
var names = func() []string {
	var ns []string
	for _, t := range []reflect.Type{reflect.TypeFor[Anchor](), reflect.TypeFor[Checkpoint](), reflect.TypeFor[Entry]()} {
		for _, f := range reflect.VisibleFields(t) {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && !f.Anonymous {
				ns = append(ns, name)
			}
		}
	}
	return ns
}()

// exactName refuses a member named as one of the lines' members in
// another case ("TOOL", or "ſtep" under Unicode folding): encoding/json
// binds it to that member, the last one written winning, so Verify would
// check a value that a case-sensitive reader of the file (jq, a SIEM)
// does not see. It refuses a member that no line has too
// ("approved_by"): decoding would drop it, so no hash covers what a
// reader of the file is shown.
func exactName(name, _ []byte) error {
	for _, n := range names {
		if string(name) == n {
			return nil
		}
	}
	for _, n := range names {
		if bytes.EqualFold(name, []byte(n)) {
			return fmt.Errorf("member %q is %q in another case: names are exact", name, n)
		}
	}
	return fmt.Errorf("member %q is no member of an export's lines: no hash would cover it", name)
}

// Verify reads an export from r, named name in what it reports
// ("audit.jsonl:12"), and verifies its chain from the anchor line, and its
// checkpoints, their signatures with pub when it is not nil. A file that
// is not an export (a line that is not JSON, or not of a known type, in
// the wrong place, or too long) is an error naming the line; a chain that
// does not verify is a report with Break set, Break.Where naming the line.
func Verify(r io.Reader, name string, pub ed25519.PublicKey) (auditchain.Report, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	v := &auditchain.Verifier{PublicKey: pub}
	var cps []store.AuditCheckpoint
	line := 0
	state := 0 // 0: want the anchor; 1: checkpoints; 2: entries
	fail := func(format string, args ...any) (auditchain.Report, error) {
		return auditchain.Report{}, fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		err := jcs.CheckMembers(b, exactName)
		switch {
		case err != nil && !errors.Is(err, jcs.ErrSyntax):
			return fail("%v", err)
		case err == nil:
			err = json.Unmarshal(b, &head)
		}
		if err != nil {
			return fail("not a JSON object: %v", err)
		}
		switch {
		case head.Type == TypeAnchor && state == 0:
			var a Anchor
			if err := json.Unmarshal(b, &a); err != nil {
				return fail("anchor: %v", err)
			}
			v.Partial, v.Tenant = a.Tenant != "", a.Tenant
			state = 1
			v.Start(a.AuditAnchor)
		case state == 0:
			return fail("the first line must be the %q line, not %q", TypeAnchor, head.Type)
		case head.Type == TypeCheckpoint && state == 1:
			if len(cps) == MaxCheckpoints {
				return fail("more than %d checkpoints", MaxCheckpoints)
			}
			var c Checkpoint
			if err := json.Unmarshal(b, &c); err != nil {
				return fail("checkpoint: %v", err)
			}
			if n := len(cps); n > 0 && c.Seq <= cps[n-1].Seq {
				return fail("checkpoint %d does not come after checkpoint %d", c.Seq, cps[n-1].Seq)
			}
			cps = append(cps, c.AuditCheckpoint)
		case head.Type == TypeEntry:
			if state == 1 {
				v.Want(cps)
				state = 2
			}
			var e Entry
			if err := json.Unmarshal(b, &e); err != nil {
				return fail("entry: %v", err)
			}
			if !v.Add(e.AuditEntry, fmt.Sprintf("%s:%d", name, line)) {
				return v.Finish(nil), nil
			}
		case head.Type == TypeAnchor || head.Type == TypeCheckpoint:
			return fail("a %q line after the entries began", head.Type)
		default:
			return fail("unknown type %q (want %s, %s or %s)", head.Type, TypeAnchor, TypeCheckpoint, TypeEntry)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			line++
			return fail("line longer than %d bytes", MaxLine)
		}
		return auditchain.Report{}, fmt.Errorf("%s: %w", name, err)
	}
	if state == 0 {
		return auditchain.Report{}, fmt.Errorf("%s: empty: no %q line", name, TypeAnchor)
	}
	if state == 1 {
		v.Want(cps)
	}
	return v.Finish(cps), nil
}
