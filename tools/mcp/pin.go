package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/internal/fileline"
)

// Pinning defends against a "rug pull": an upstream server that changes a
// tool's definition (its description, schema or annotations: what the
// model reads and what the gateway trusts) after the operator reviewed it.
// A Lock holds the reviewed definitions' hashes; Verify decides, for each
// listing, which tools keep their pinned definition (accepted) and which
// do not (quarantined: neither registered nor callable until re-pinned).

// Errors of pinning.
var (
	// ErrLock is wrapped by every error reading a lock file.
	ErrLock = errors.New("mcp: invalid pin lock")
	// ErrQuarantined is returned (wrapped by tools.NoEffect) by the handler
	// of a tool whose current definition is quarantined.
	ErrQuarantined = errors.New("mcp: tool quarantined: its definition differs from its pin")
	// ErrUnpinned is wrapped by Connect's error when [Options.Unpinned] is
	// [UnpinnedRefuse] and the first listing holds a tool the lock does not pin.
	ErrUnpinned = errors.New("mcp: tool not pinned")
)

// hashPrefix names the hash function of a pin; another function would be
// a new prefix, so a lock says which one it holds.
const hashPrefix = "sha256:"

// DefinitionHash returns "sha256:" and the hex SHA-256 of the RFC 8785
// canonical JSON of t's security-relevant fields: the object of "name",
// "title" and "description" (when not empty), "inputSchema" and
// "outputSchema" (when present) and "annotations" (when present:
// "readOnlyHint" and "idempotentHint", "destructiveHint" and
// "openWorldHint" when given, "title" when not empty). What neither a
// model nor the gateway reads (_meta, icons) is left out, so a server
// that stamps a build number in _meta does not lose its pins.
func DefinitionHash(t *sdk.Tool) (string, error) {
	def := map[string]any{"name": t.Name}
	if t.Title != "" {
		def["title"] = t.Title
	}
	if t.Description != "" {
		def["description"] = t.Description
	}
	for _, s := range []struct {
		name   string
		schema any
	}{{"inputSchema", t.InputSchema}, {"outputSchema", t.OutputSchema}} {
		v, err := jsonValue(s.schema)
		if err != nil {
			return "", fmt.Errorf("mcp: hash %q: %s: %w", t.Name, s.name, err)
		}
		if v != nil {
			def[s.name] = v
		}
	}
	if a := t.Annotations; a != nil {
		ann := map[string]any{"readOnlyHint": a.ReadOnlyHint, "idempotentHint": a.IdempotentHint}
		if a.DestructiveHint != nil {
			ann["destructiveHint"] = *a.DestructiveHint
		}
		if a.OpenWorldHint != nil {
			ann["openWorldHint"] = *a.OpenWorldHint
		}
		if a.Title != "" {
			ann["title"] = a.Title
		}
		def["annotations"] = ann
	}
	canon, err := jcs.Append(nil, def)
	if err != nil {
		return "", fmt.Errorf("mcp: hash %q: %w", t.Name, err)
	}
	sum := sha256.Sum256(canon)
	return hashPrefix + hex.EncodeToString(sum[:]), nil
}

// jsonValue is a schema as the tree [jcs.Append] writes; nil for none (an
// absent member or JSON null).
func jsonValue(s any) (any, error) {
	var raw []byte
	switch s := s.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		raw = s
	default:
		var err error
		if raw, err = json.Marshal(s); err != nil {
			return nil, err
		}
	}
	return jcs.Parse(raw)
}

// Lock is the pinned definition hashes of upstream tools, by server and
// tool name: what `toolgate mcp pin` writes and `--pins` reads. Methods
// that change a Lock must not run concurrently with any other method;
// once built, a Lock may be read (Lookup, [Verify], MarshalText) by many
// goroutines.
type Lock struct {
	pins map[string]map[string]string // server → tool → hash
}

// NewLock returns an empty [Lock].
func NewLock() *Lock { return &Lock{pins: map[string]map[string]string{}} }

// Lookup returns the pinned hash of the server's tool.
func (l *Lock) Lookup(server, tool string) (hash string, ok bool) {
	if l == nil {
		return "", false
	}
	hash, ok = l.pins[server][tool]
	return hash, ok
}

// Servers returns the servers the lock pins, sorted.
func (l *Lock) Servers() []string {
	if l == nil {
		return nil
	}
	out := make([]string, 0, len(l.pins))
	for s := range l.pins {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Tools returns the server's pins: tool name → hash. The map is a copy.
func (l *Lock) Tools(server string) map[string]string {
	out := map[string]string{}
	if l != nil {
		for t, h := range l.pins[server] {
			out[t] = h
		}
	}
	return out
}

// Pin replaces the server's pins with the hashes of the listed tools. A
// tool whose name a lock line cannot hold (see [ParseLock]), whose
// definition cannot be hashed, or whose name is listed again with another
// definition is left unpinned and reported in the joined error; the
// others are pinned (copies alike are one tool).
func (l *Lock) Pin(server string, listed []*sdk.Tool) error {
	if !serverName.MatchString(server) {
		return fmt.Errorf("%w: server name %q must match %s", ErrLock, server, serverName)
	}
	pins := make(map[string]string, len(listed))
	twice, said := listedTwice(listed), map[string]bool{}
	var errs []error
	for _, t := range listed {
		if !pinnableName(t.Name) {
			errs = append(errs, fmt.Errorf("%w: %s: tool name %q cannot be pinned (control characters, invalid UTF-8 or surrounding space)", ErrLock, server, t.Name))
			continue
		}
		if tw, dup := twice[t.Name]; dup && !tw.alike {
			// The server runs one of them and no pin can say which; the
			// upstream leaves every copy out (Upstream.dedupe).
			if !said[t.Name] {
				said[t.Name] = true
				errs = append(errs, fmt.Errorf("%w: %s: tool name %q is listed %d times with different definitions, so it cannot be pinned", ErrLock, server, t.Name, tw.copies))
			}
			continue
		}
		h, err := DefinitionHash(t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pins[t.Name] = h
	}
	l.pins[server] = pins
	return errors.Join(errs...)
}

// lockHeader opens every lock file MarshalText writes.
const lockHeader = `# toolgate MCP tool pins: one line per upstream tool, "SERVER/TOOL sha256:HEX", the SHA-256
# of the RFC 8785 JSON of the tool's name, title, description, inputSchema, outputSchema
# and annotations. A listed tool whose definition no longer matches its pin is quarantined.
# Regenerate with "toolgate mcp pin --pins FILE" and the server flags of "mcp serve"
# (--mcp, --mcp-url, --mcp-config); review the diff before you commit it.
`

// MarshalText writes the lock file: the header, then one line
// "SERVER/TOOL sha256:HEX" per pin, sorted by server and tool, so that a
// change of one definition is a change of one line in a diff.
func (l *Lock) MarshalText() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(lockHeader)
	for _, s := range l.Servers() {
		names := make([]string, 0, len(l.pins[s]))
		for t := range l.pins[s] {
			names = append(names, t)
		}
		sort.Strings(names)
		for _, t := range names {
			fmt.Fprintf(&b, "%s/%s %s\n", s, t, l.pins[s][t])
		}
	}
	return b.Bytes(), nil
}

// maxLockBytes bounds a lock file: 10,000 tools of a few hundred servers
// fit in a fraction of it.
const maxLockBytes = 16 << 20

// LockError is a lock file that cannot be read as one: the File, the
// 1-based Line of the problem (0 for the whole file) and the [Reason]. It
// wraps [ErrLock].
type LockError fileline.Error

// Error reads "FILE:LINE: reason" ("FILE: reason" when Line is 0).
func (e *LockError) Error() string { return (*fileline.Error)(e).Error() }

// Unwrap returns [ErrLock].
func (e *LockError) Unwrap() error { return ErrLock }

// LoadLock reads a lock file of at most 16 MiB (see [ParseLock]).
func LoadLock(path string) (*Lock, error) {
	f, err := fileline.Open(path)
	if err != nil {
		return nil, &LockError{File: path, Reason: err.Error()}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLockBytes+1))
	if err != nil {
		return nil, &LockError{File: path, Reason: err.Error()}
	}
	if len(data) > maxLockBytes {
		return nil, &LockError{File: path, Reason: fmt.Sprintf("larger than %d MiB", maxLockBytes>>20)}
	}
	return ParseLock(data, path)
}

// ParseLock reads a lock file's text (file names it in errors). Blank
// lines and lines that start with '#' are skipped; every other line is
// "SERVER/TOOL sha256:HEX": a server name as in a [Config], a tool name of
// valid UTF-8 without control characters or surrounding space (it may
// hold spaces: the hash follows the last one), and 64 lowercase hex
// digits. A tool pinned twice, or any other line, is a *[LockError] naming
// the line, so a lock has one meaning.
func ParseLock(data []byte, file string) (*Lock, error) {
	l := NewLock()
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		bad := func(format string, args ...any) error {
			return &LockError{File: file, Line: n + 1, Reason: fmt.Sprintf(format, args...)}
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			return nil, bad("want SERVER/TOOL sha256:HEX")
		}
		id, hash := line[:sp], line[sp+1:]
		server, tool, ok := strings.Cut(id, "/")
		switch {
		case !ok:
			return nil, bad("want SERVER/TOOL before the hash")
		case !serverName.MatchString(server):
			return nil, bad("server name %q must match %s", server, serverName)
		case !pinnableName(tool):
			return nil, bad("tool name %q holds control characters, invalid UTF-8 or surrounding space", tool)
		case !validHash(hash):
			return nil, bad("hash %q: want sha256: and 64 lowercase hex digits", hash)
		}
		if _, dup := l.pins[server][tool]; dup {
			return nil, bad("%s/%s is pinned twice", server, tool)
		}
		if l.pins[server] == nil {
			l.pins[server] = map[string]string{}
		}
		l.pins[server][tool] = hash
	}
	return l, nil
}

func validHash(h string) bool {
	hexPart, ok := strings.CutPrefix(h, hashPrefix)
	if !ok || len(hexPart) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(hexPart); i++ {
		if c := hexPart[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// pinnableName reports whether a lock line can hold the tool name: a
// line break or a trailing space would change how the line reads back.
func pinnableName(name string) bool {
	if name == "" || !utf8.ValidString(name) || strings.TrimSpace(name) != name {
		return false
	}
	return !strings.ContainsFunc(name, unicode.IsControl)
}

// Unpinned is what becomes of a listed tool the lock has no pin for: a
// tool new in a pinned server, or any tool of a server the lock does not
// name.
type Unpinned string

const (
	// UnpinnedQuarantine keeps an unpinned tool out (not registered, not
	// callable, logged and counted) until it is pinned: the default, since a
	// lock file that exists says what was reviewed.
	UnpinnedQuarantine Unpinned = "quarantine"
	// UnpinnedAllow registers an unpinned tool as listed (logged at info).
	// A pinned tool whose definition changed is quarantined all the same.
	UnpinnedAllow Unpinned = "allow"
	// UnpinnedRefuse fails Connect when the first listing holds an unpinned
	// tool ([ErrUnpinned]); one that appears later is quarantined.
	UnpinnedRefuse Unpinned = "refuse"
)

// ParseUnpinned reads an [Unpinned] policy by name; "" is
// [UnpinnedQuarantine].
func ParseUnpinned(s string) (Unpinned, error) {
	switch p := Unpinned(s); p {
	case "":
		return UnpinnedQuarantine, nil
	case UnpinnedQuarantine, UnpinnedAllow, UnpinnedRefuse:
		return p, nil
	}
	return "", fmt.Errorf("mcp: unknown unpinned policy %q (want quarantine, allow or refuse)", s)
}

// Reason says why a tool is quarantined.
type Reason string

const (
	// ReasonChanged: the tool is pinned and its definition hashes otherwise.
	ReasonChanged Reason = "changed"
	// ReasonUnpinned: the lock has no pin for the tool ([UnpinnedQuarantine]
	// or [UnpinnedRefuse]).
	ReasonUnpinned Reason = "unpinned"
	// ReasonInvalid: the definition cannot be hashed (a schema that is not
	// JSON), so it cannot match a pin.
	ReasonInvalid Reason = "invalid"
)

// Quarantined is one listed tool kept out of the catalog.
type Quarantined struct {
	Tool   string
	Reason Reason
	// Pinned is the lock's hash; empty when the tool is not pinned.
	Pinned string
	// Listed is the hash of the definition the server listed; empty when
	// it cannot be hashed.
	Listed string
}

// Verdict is Verify's decision on one listing.
type Verdict struct {
	// Accepted are the listed tools to register, in listing order: pinned
	// ones whose definitions match, and unpinned ones [UnpinnedAllow] lets in.
	Accepted []*sdk.Tool
	// Quarantined are the listed tools kept out, sorted by name.
	Quarantined []Quarantined
	// Unpinned names the accepted tools the lock does not pin, sorted.
	Unpinned []string
	// Removed names the pinned tools the listing does not hold, sorted.
	Removed []string
}

// Verify decides which of a server's listed tools keep their pins. A tool
// whose definition hash ([DefinitionHash]) differs from its pin is
// quarantined whatever the policy; a tool the lock does not pin follows
// policy (the zero value is [UnpinnedQuarantine]); a name listed twice is
// judged on every copy, so one differing copy quarantines it. A nil lock
// pins nothing. Verify is a pure function of its arguments.
func Verify(lock *Lock, server string, listed []*sdk.Tool, policy Unpinned) Verdict {
	if policy == "" {
		policy = UnpinnedQuarantine
	}
	pins := lock.Tools(server)
	hashes := make(map[string][]string, len(listed)) // every copy's hash; "" when unhashable
	for _, t := range listed {
		h, err := DefinitionHash(t)
		if err != nil {
			h = ""
		}
		hashes[t.Name] = append(hashes[t.Name], h)
	}
	var v Verdict
	out := map[string]bool{}
	for name, hs := range hashes {
		pinned, ok := pins[name]
		q := Quarantined{Tool: name, Pinned: pinned}
		for _, h := range hs {
			if h == "" {
				q.Reason, q.Listed = ReasonInvalid, ""
				break
			}
			if ok && h != pinned && q.Reason == "" {
				q.Reason, q.Listed = ReasonChanged, h
			}
		}
		if q.Reason == "" && !ok {
			if policy == UnpinnedAllow {
				v.Unpinned = append(v.Unpinned, name)
			} else {
				q.Reason, q.Listed = ReasonUnpinned, hs[0]
			}
		}
		if q.Reason != "" {
			v.Quarantined = append(v.Quarantined, q)
			out[name] = true
		}
	}
	for _, t := range listed {
		if !out[t.Name] {
			v.Accepted = append(v.Accepted, t)
		}
	}
	for name := range pins {
		if _, ok := hashes[name]; !ok {
			v.Removed = append(v.Removed, name)
		}
	}
	slices.SortFunc(v.Quarantined, func(a, b Quarantined) int { return strings.Compare(a.Tool, b.Tool) })
	sort.Strings(v.Unpinned)
	sort.Strings(v.Removed)
	return v
}

// ListTools connects to the server, lists its tools as it states them
// (following pagination, at most [Options.MaxTools]; no Transform, no
// pins) and disconnects: what `toolgate mcp pin` hashes.
func ListTools(ctx context.Context, cfg Server, opts *Options) ([]*sdk.Tool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	u := newUpstream(nil, cfg, opts)
	var listed []*sdk.Tool
	err := u.bounded(ctx, func(ctx context.Context) error {
		cs, err := u.dial(ctx)
		if err != nil {
			return fmt.Errorf("mcp: connect %s: %w", cfg.Name, err)
		}
		defer cs.Close()
		if listed, err = u.list(ctx, cs); err != nil {
			return fmt.Errorf("mcp: list tools of %s: %w", cfg.Name, err)
		}
		return nil
	})
	return listed, err
}

// Tools returns the tools [Connect] would register for listed, a listing
// of cfg's server (what [ListTools] returns): the same conversion and
// configuration, with errors for the tools it leaves out. `toolgate mcp
// pin` lints them before the reviewer pins them.
func Tools(cfg Server, listed []*sdk.Tool) ([]tools.Tool, []error) {
	ts, errs, _ := newUpstream(nil, cfg, nil).convert(listed)
	return ts, errs
}

// pinState is an Upstream's view of its last verdict, kept so that each
// change is logged and counted once, not at every listing.
type pinState struct {
	quarantined map[string]Quarantined // by tool
	removed     map[string]bool        // pinned tools not listed
	unpinned    map[string]bool        // accepted under [UnpinnedAllow]
}

// applyVerdict logs and counts what changed since the last verdict and
// returns the new state. Only transitions are reported: a change listed
// again, or a removal seen again, is not.
func (u *Upstream) applyVerdict(prev pinState, v Verdict) pinState {
	log, server := u.opts.Logger, u.cfg.Name
	next := pinState{quarantined: map[string]Quarantined{}, removed: map[string]bool{}, unpinned: map[string]bool{}}
	for _, q := range v.Quarantined {
		next.quarantined[q.Tool] = q
		if old, ok := prev.quarantined[q.Tool]; ok && old == q {
			continue
		}
		switch q.Reason {
		case ReasonChanged:
			log.Warn("mcp: tool quarantined: definition differs from its pin", "server", server, "tool", q.Tool,
				"pinned", q.Pinned, "listed", q.Listed)
		case ReasonUnpinned:
			log.Warn("mcp: tool quarantined: not pinned", "server", server, "tool", q.Tool, "listed", q.Listed)
		default:
			log.Warn("mcp: tool quarantined: definition cannot be hashed", "server", server, "tool", q.Tool, "pinned", q.Pinned)
		}
		u.metrics.mismatch(server, q.Reason)
	}
	for tool, old := range prev.quarantined {
		if _, still := next.quarantined[tool]; !still {
			log.Info("mcp: tool released from quarantine", "server", server, "tool", tool, "was", string(old.Reason))
		}
	}
	for _, tool := range v.Removed {
		next.removed[tool] = true
		if !prev.removed[tool] {
			pinned, _ := u.opts.Pins.Lookup(server, tool)
			log.Warn("mcp: pinned tool no longer listed", "server", server, "tool", tool, "pinned", pinned)
		}
	}
	for _, tool := range v.Unpinned {
		next.unpinned[tool] = true
		if !prev.unpinned[tool] {
			log.Info("mcp: unpinned tool accepted (unpinned policy allow)", "server", server, "tool", tool)
		}
	}
	u.metrics.set(server, v.Quarantined)
	return next
}
