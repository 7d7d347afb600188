// Package auditchain is the gateway's audit log as a hash chain: the
// hashes a store assigns as it appends ([Chain], [Digest], [Hash]), the
// verification of a chain ([Verify], [Verifier]) and Ed25519 checkpoints
// ([Sign], [Checkpointer]).
//
// The audit log is a hash chain (docs/operations.md, "A tamper-evident
// audit"): each entry carries its sequence number in the log ([store.AuditEntry.Seq],
// 1, 2, 3, … per store), the hash of the entry before it ([store.AuditEntry.Prev])
// and its own hash ([store.AuditEntry.Hash]), which covers the version, the
// sequence number, Prev and the entry's content. A store assigns them inside
// the write that appends the entry, atomically with the append, so that the
// entries of many gateways sharing one store form one chain. An entry
// edited, removed or moved breaks the chain where it was; Verifier
// names the first entry that does not fit.
//
// The hash of entry n is
//
//	hex(SHA-256("toolgate-audit/" + V + "\n" + n + "\n" + Prev + "\n" + Digest(e)))
//
// with n in decimal and Digest the hex SHA-256 of Body, the
// RFC 8785 (JCS) encoding of the entry's content: every field but the chain's, integers as decimal strings, the
// time as RFC 3339 in UTC with nanoseconds, strings as valid UTF-8 (an
// invalid byte becomes U+FFFD, as encoding/json writes it). The entry
// before the first has the hash Genesis.
package auditchain

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// Version is the version of the chain's hash input that this
// module writes ([store.AuditEntry.V]).
const Version = 1

// Genesis is the Prev of the first entry of a chain: 64 zeros.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// Body is the canonical (JCS) encoding of e's content, the part of
// the hash input that is the entry's own (the chain fields excluded).
func Body(e store.AuditEntry) []byte {
	// The members in RFC 8785's order (their names are ASCII, so UTF-16
	// order is byte order), written directly: TestAuditHashPinned checks
	// the result against jcs.
	fields := [...]struct{ name, value string }{
		{"actor", e.Actor}, {"approval_id", e.ApprovalID}, {"decision", string(e.Decision)}, {"key", e.Key},
		{"latency_ns", strconv.FormatInt(int64(e.Latency), 10)}, {"outcome", string(e.Outcome)}, {"principal", e.Principal},
		{"reason", e.Reason}, {"session_id", e.SessionID}, {"step", strconv.Itoa(e.Step)}, {"taint", e.Taint},
		{"tenant", e.Tenant}, {"time", e.Time.UTC().Format(time.RFC3339Nano)}, {"tool", e.Tool},
	}
	n := 2
	for _, f := range fields {
		n += len(f.name) + len(f.value) + 6
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, f.name...)
		b = append(b, '"', ':')
		b = jcs.AppendString(b, validUTF8(f.value))
	}
	return append(b, '}')
}

// Digest is the hex SHA-256 of e's Body: the entry's content
// as the chain hashes it.
func Digest(e store.AuditEntry) string {
	sum := sha256.Sum256(Body(e))
	return hex.EncodeToString(sum[:])
}

// ChainDigest is Chain with e's Digest computed already (a
// store computes it before taking its write lock, and hashes only the
// short chain link inside: 3 SHA-256 blocks, whatever the entry's size).
func ChainDigest(e store.AuditEntry, digest string, seq uint64, prev string) store.AuditEntry {
	e.Seq, e.Prev, e.V = seq, prev, Version
	e.Hash = Hash(e.V, seq, prev, digest)
	return e
}

// validUTF8 is v with each byte that is not part of valid UTF-8 replaced
// by U+FFFD, as encoding/json writes it ([strings.ToValidUTF8] would replace
// a run of such bytes by one).
func validUTF8(v string) string {
	if utf8.ValidString(v) {
		return v
	}
	var b strings.Builder
	for _, r := range v { // an invalid byte ranges as one [utf8.RuneError]
		b.WriteRune(r)
	}
	return b.String()
}

// Hash is the hash of an entry at seq after prev, whose Digest
// is digest, in chain version v.
func Hash(v int, seq uint64, prev, digest string) string {
	in := make([]byte, 0, 40+len(prev)+len(digest))
	in = append(in, "toolgate-audit/"...)
	in = strconv.AppendInt(in, int64(v), 10)
	in = append(in, '\n')
	in = strconv.AppendUint(in, seq, 10)
	in = append(in, '\n')
	in = append(in, prev...)
	in = append(in, '\n')
	sum := sha256.Sum256(append(in, digest...))
	return hex.EncodeToString(sum[:])
}

// Chain returns e as the entry seq of the chain, after the entry whose
// hash is prev: with Seq, Prev, V and Hash set. Stores call it inside the
// write that appends e.
func Chain(e store.AuditEntry, seq uint64, prev string) store.AuditEntry {
	return ChainDigest(e, Digest(e), seq, prev)
}

// CheckpointMessage is what an store.AuditCheckpoint's signature signs.
func CheckpointMessage(seq uint64, hash string, t time.Time) []byte {
	return []byte("toolgate-audit-checkpoint/1\n" + strconv.FormatUint(seq, 10) + "\n" + hash + "\n" + t.UTC().Format(time.RFC3339Nano))
}

// KeyID is the KeyID of pub.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// Sign signs the chain's last entry with key at now and
// stores the checkpoint. It returns [store.ErrNotFound] when the chain holds no
// entry.
func Sign(ctx context.Context, c store.AuditChain, key ed25519.PrivateKey, now time.Time) (store.AuditCheckpoint, error) {
	last, err := c.LastAudit(ctx)
	if err != nil {
		return store.AuditCheckpoint{}, err
	}
	cp := signCheckpoint(last, key, now)
	return cp, c.AddAuditCheckpoint(ctx, cp)
}

// signCheckpoint is the checkpoint of entry last signed with key at now.
func signCheckpoint(last store.AuditEntry, key ed25519.PrivateKey, now time.Time) store.AuditCheckpoint {
	now = now.UTC()
	return store.AuditCheckpoint{Seq: last.Seq, Hash: last.Hash, Time: now, KeyID: KeyID(key.Public().(ed25519.PublicKey)),
		Sig: base64.StdEncoding.EncodeToString(ed25519.Sign(key, CheckpointMessage(last.Seq, last.Hash, now)))}
}

// auditPage is how many entries Verify reads at a time, which
// bounds its memory.
const auditPage = 1000

// Break is the first place where a chain does not verify.
type Break struct {
	// Seq is the sequence number of the first bad entry (for a removed
	// entry: the one missing), Time its time when known.
	Seq  uint64
	Time time.Time
	// Where locates it in a file ("audit.jsonl:12"); empty for a store.
	Where string
	// Problem says what is wrong, in words.
	Problem string
}

func (b *Break) Error() string {
	at := ""
	if !b.Time.IsZero() {
		at = " (" + b.Time.UTC().Format(time.RFC3339Nano) + ")"
	}
	where := ""
	if b.Where != "" {
		where = b.Where + ": "
	}
	return fmt.Sprintf("%saudit entry %d%s: %s", where, b.Seq, at, b.Problem)
}

// Report is what a verification found.
type Report struct {
	Anchor store.AuditAnchor `json:"anchor"`
	// Entries is how many entries were checked; First and Last their
	// sequence numbers (0 when none).
	Entries     int    `json:"entries"`
	First, Last uint64 `json:"-"`
	// Checkpoints is how many checkpoints matched their entries; Signed of
	// them had their signature checked against the public key.
	Checkpoints int `json:"checkpoints"`
	Signed      int `json:"signed"`
	// LastSigned is the Seq of the last checkpoint whose signature
	// verified (0 when none); entries after it are covered by the chain
	// only.
	LastSigned uint64 `json:"last_signed"`
	// Partial says the entries were a selection (see
	// [Verifier.Partial]): gaps were allowed.
	Partial bool `json:"partial,omitempty"`
	// Break is the first bad entry or checkpoint; nil when the chain
	// verifies.
	Break *Break `json:"-"`
}

// Verifier checks a chain entry by entry, in the order read,
// in memory bounded by the checkpoints: Start with the anchor, Want the
// checkpoints, Add every entry, then Finish with the checkpoints. The first break found is kept; later calls
// change nothing.
type Verifier struct {
	// PublicKey, when set, is the key every checkpoint must be signed
	// with; without it checkpoints are matched to their entries only.
	PublicKey ed25519.PublicKey
	// Partial says the entries are a selection (one tenant's): a gap in
	// the sequence numbers is no break, an entry after a gap is checked
	// against its own hash only, and a checkpoint whose entry is not in
	// the selection is skipped.
	Partial bool
	// Tenant, when set, is the one tenant the entries are of (a tenant's
	// selection, with Partial): an entry of another tenant is a break,
	// since entry by entry it would verify in its place (spliced in).
	Tenant string

	rep      Report
	prevSeq  uint64
	prevHash string
	// hashes of the entries at checkpointed sequence numbers, to match the
	// checkpoints in Finish; want holds the numbers wanted.
	want   map[uint64]bool
	hashes map[uint64]string
}

// Start begins a verification from a, the chain's anchor.
func (v *Verifier) Start(a store.AuditAnchor) {
	v.rep = Report{Anchor: a, Partial: v.Partial}
	v.prevSeq, v.prevHash = a.Seq, a.Hash
	v.want, v.hashes = map[uint64]bool{}, map[uint64]string{}
}

// Want names the checkpoints that Finish will check, before the entries
// are added, so that only those entries' hashes are kept.
func (v *Verifier) Want(cps []store.AuditCheckpoint) {
	for _, cp := range cps {
		v.want[cp.Seq] = true
	}
}

// Add checks the next entry e, read at where ("" for a store), and
// reports whether the chain still verifies.
func (v *Verifier) Add(e store.AuditEntry, where string) bool {
	if v.rep.Break != nil {
		return false
	}
	bad := func(seq uint64, t time.Time, format string, args ...any) bool {
		v.rep.Break = &Break{Seq: seq, Time: t, Where: where, Problem: fmt.Sprintf(format, args...)}
		return false
	}
	want := v.prevSeq + 1
	switch {
	case e.V == 0 || e.Hash == "":
		return bad(e.Seq, e.Time, "not chained: it has no hash, so it was not appended by the store's chained write (a forged or foreign entry)")
	case e.V != Version:
		return bad(e.Seq, e.Time, "chain version %d is not one this toolgate knows (%d)", e.V, Version)
	case e.Seq > want && v.Partial:
		if Hash(e.V, e.Seq, e.Prev, Digest(e)) != e.Hash {
			return bad(e.Seq, e.Time, "edited or moved: its content does not match its hash")
		}
	case e.Seq > want:
		if e.Seq == want+1 {
			return bad(want, time.Time{}, "missing: the next entry held is %d (this one was removed, or moved later)", e.Seq)
		}
		return bad(want, time.Time{}, "missing: the next entry held is %d (entries %d to %d were removed, or moved later)", e.Seq, want, e.Seq-1)
	case e.Seq < want:
		return bad(e.Seq, e.Time, "out of order: it comes after entry %d (entries were moved or repeated)", v.prevSeq)
	case Hash(e.V, e.Seq, e.Prev, Digest(e)) != e.Hash:
		return bad(e.Seq, e.Time, "edited or moved: its content does not match its hash")
	case e.Prev != v.prevHash:
		if e.Seq == v.rep.Anchor.Seq+1 {
			return bad(e.Seq, e.Time, "does not follow the anchor (entry %d): its prev is not the anchor's hash (the anchor or this entry was changed)", v.rep.Anchor.Seq)
		}
		return bad(e.Seq, e.Time, "does not follow entry %d: its prev is not that entry's hash (entry %d was replaced, or the chain rewritten from here)", v.prevSeq, v.prevSeq)
	}
	if v.Tenant != "" && e.Tenant != v.Tenant {
		return bad(e.Seq, e.Time, "of another tenant than the selection's: spliced in (entry by entry, it verifies in its place)")
	}
	v.prevSeq, v.prevHash = e.Seq, e.Hash
	if v.want[e.Seq] {
		v.hashes[e.Seq] = e.Hash
	}
	if v.rep.Entries == 0 {
		v.rep.First = e.Seq
	}
	v.rep.Entries++
	v.rep.Last = e.Seq
	return true
}

// Finish checks the checkpoints (in sequence order) against the entries
// added and returns the report. A checkpoint at or before the anchor is
// skipped (its entry was pruned); one past the last entry means the tail
// it signed was removed, except in a Partial selection, where a
// checkpoint whose entry is not in the selection is skipped.
func (v *Verifier) Finish(cps []store.AuditCheckpoint) Report {
	for _, cp := range cps {
		if v.rep.Break != nil {
			break
		}
		if cp.Seq <= v.rep.Anchor.Seq {
			continue
		}
		bad := func(format string, args ...any) {
			v.rep.Break = &Break{Seq: cp.Seq, Time: cp.Time, Problem: "checkpoint: " + fmt.Sprintf(format, args...)}
		}
		h, ok := v.hashes[cp.Seq]
		switch {
		case !ok && v.Partial:
			// Not in the selection: a checkpoint signs the chain's newest
			// entry, often past a tenant's last one.
			continue
		case cp.Seq > v.rep.Last:
			bad("it signs entry %d, but the log ends at %d: entries were removed from its end", cp.Seq, v.rep.Last)
			continue
		case !ok:
			bad("entry %d was not read", cp.Seq)
			continue
		case h != cp.Hash:
			bad("it signed another hash for this entry: the entries up to it were changed and the chain rewritten")
			continue
		}
		v.rep.Checkpoints++
		if v.PublicKey == nil {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(cp.Sig)
		switch {
		case cp.KeyID != KeyID(v.PublicKey):
			bad("signed by key %q, not by the public key given (%s)", cp.KeyID, KeyID(v.PublicKey))
		case err != nil || !ed25519.Verify(v.PublicKey, CheckpointMessage(cp.Seq, cp.Hash, cp.Time), sig):
			bad("its signature does not verify with the public key given (a forged checkpoint)")
		default:
			v.rep.Signed++
			v.rep.LastSigned = cp.Seq
		}
	}
	return v.rep
}

// Verify verifies the chain held by c from its anchor, reading it
// a page at a time, and checks its checkpoints, their signatures with pub
// when it is not nil. A store failure is an error; a chain that does not
// verify is a report with Break set.
func Verify(ctx context.Context, c store.AuditChain, pub ed25519.PublicKey) (Report, error) {
	cps, err := c.AuditCheckpoints(ctx)
	if err != nil {
		return Report{}, err
	}
	// The head is read before the entries, so that entries appended
	// meanwhile lie past it: the log must reach it, whatever follows.
	var head *store.AuditAnchor
	if h, ok := c.(store.AuditHeader); ok {
		hd, err := h.AuditHead(ctx)
		if err != nil {
			return Report{}, err
		}
		head = &hd
	}
	var atHead *store.AuditEntry // the entry at the head's Seq, once read
	// The first page is read before the anchor: a purge running meanwhile
	// moves the anchor past entries already read, which are then skipped,
	// instead of leaving a gap that would read as removed entries.
	page, err := c.ReadAuditChain(ctx, 0, auditPage)
	if err != nil {
		return Report{}, err
	}
	a, err := c.AuditAnchor(ctx)
	if err != nil {
		return Report{}, err
	}
	v := &Verifier{PublicKey: pub}
	v.Start(a)
	v.Want(cps)
	for len(page) > 0 {
		for _, e := range page {
			if e.Seq <= a.Seq {
				continue
			}
			if !v.Add(e, "") {
				return v.rep, nil
			}
			if head != nil && e.Seq == head.Seq {
				atHead = &e
			}
		}
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		// Entries at or before the anchor (written before the chain, or
		// pruned meanwhile) are skipped by reading from the anchor on.
		if page, err = c.ReadAuditChain(ctx, max(page[len(page)-1].Seq, a.Seq), auditPage); err != nil {
			return Report{}, err
		}
	}
	rep := v.Finish(cps)
	if rep.Break != nil || head == nil {
		return rep, nil
	}
	// The entries alone cannot show a cut-off tail, or a last entry
	// replaced and rehashed: the head, moved by the write that appended
	// it, can (a checkpoint, checked above, is the stronger evidence).
	switch end := max(rep.Last, a.Seq); {
	case head.Seq > end:
		removed := fmt.Sprintf("entries %d to %d were", end+1, head.Seq)
		if head.Seq == end+1 {
			removed = "it was"
		}
		rep.Break = &Break{Seq: end + 1, Problem: fmt.Sprintf(
			"missing: the log ends at %d, but the store's chain head is entry %d (%s removed from its end)", end, head.Seq, removed)}
	case atHead != nil && atHead.Hash != head.Hash:
		rep.Break = &Break{Seq: atHead.Seq, Time: atHead.Time,
			Problem: "edited or moved: its hash is not the one the store's chain head holds (the entry was replaced and the chain rewritten)"}
	}
	return rep, nil
}

// Checkpointer signs checkpoints of an audit chain as it grows: every
// Every entries, checked by Tick (Run calls it on an interval), off the
// call path. A gateway process runs one beside its gateway, with a key its
// store's other writers do not hold; "toolgate audit checkpoint" signs one
// on demand.
type Checkpointer struct {
	Chain store.AuditChain
	Key   ed25519.PrivateKey
	// Every is how many entries the chain grows by between checkpoints;
	// zero means 1000.
	Every uint64
	// Clock stamps the checkpoints (a gateway's Clock serves); nil means
	// the wall clock.
	Clock interface{ Now() time.Time }
}

// Tick signs the chain's last entry when it is at least Every entries past
// the last checkpoint stored (by any key), or when the chain has entries
// and no checkpoint yet. It returns the checkpoint signed, or nil.
func (a *Checkpointer) Tick(ctx context.Context) (*store.AuditCheckpoint, error) {
	every := a.Every
	if every == 0 {
		every = 1000
	}
	last, err := a.Chain.LastAudit(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cps, err := a.Chain.AuditCheckpoints(ctx)
	if err != nil {
		return nil, err
	}
	if n := len(cps); n > 0 && last.Seq < cps[n-1].Seq+every {
		return nil, nil
	}
	clock := a.Clock
	if clock == nil {
		clock = wallClock{}
	}
	cp := signCheckpoint(last, a.Key, clock.Now())
	if err := a.Chain.AddAuditCheckpoint(ctx, cp); err != nil {
		return nil, err
	}
	return &cp, nil
}

// Run calls Tick every interval until ctx ends, and returns ctx's error.
// A failed Tick is tried again at the next interval; onError, when not
// nil, hears of it.
func (a *Checkpointer) Run(ctx context.Context, interval time.Duration, onError func(error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if _, err := a.Tick(ctx); err != nil && onError != nil {
				onError(err)
			}
		}
	}
}

// wallClock is the wall clock, for a Checkpointer without one.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }
