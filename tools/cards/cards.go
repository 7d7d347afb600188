package cards

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/internal/fileline"
)

// Limits bound what one entry may hold, so that an overlay's cost is
// bounded whatever file it comes from.
const (
	MaxLineBytes = 64 << 10 // one entry's JSON
	MaxList      = 64       // aliases, examples or tags of one entry
	MaxText      = 300      // bytes of one alias, example, tag or not_for
	MaxEntries   = 100_000  // entries of one Load
	MaxBytes     = 64 << 20 // bytes of the files of one Load, comments and blank lines included
)

// Entry is one line of an overlay file.
type Entry struct {
	// Tool is a tool ID ("github/create_issue") or a namespace key
	// ("github/*").
	Tool string `json:"tool"`
	// Hash is the tool's Hash when the entry was written; required for a
	// tool entry, absent for a namespace entry.
	Hash string `json:"hash,omitempty"`
	// Aliases are phrases users say for the tool; for a namespace entry,
	// the names users call the server by (they become tags of its tools).
	Aliases []string `json:"aliases,omitempty"`
	// Examples are requests in the users' words that need the tool.
	Examples []string `json:"examples,omitempty"`
	// NotFor says when not to use the tool, naming the sibling to use.
	NotFor string `json:"not_for,omitempty"`
	// Tags are free-form keywords.
	Tags []string `json:"tags,omitempty"`

	// File and Line say where the entry was read; zero for built entries.
	File string `json:"-"`
	Line int    `json:"-"`
}

// Namespace reports the namespace of a namespace entry ("github" for
// "github/*") and whether the entry is one.
func (e *Entry) Namespace() (string, bool) {
	ns, ok := strings.CutSuffix(e.Tool, "/*")
	return ns, ok
}

func (e *Entry) where() string {
	if e.File == "" {
		return e.Tool
	}
	return fmt.Sprintf("%s:%d", e.File, e.Line)
}

// Error is a malformed overlay line.
type Error struct {
	File   string
	Line   int
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// Overlay is a parsed set of entries, at most one per key. It is immutable
// and safe for concurrent use.
type Overlay struct {
	tools map[string]*Entry // by tool ID
	ns    map[string]*Entry // by namespace
	order []*Entry          // in file order
	bytes int64             // read so far, for [MaxBytes]
}

// Entries returns the entries in the order they were read. The slice and
// entries must not be modified.
func (o *Overlay) Entries() []*Entry {
	if o == nil {
		return nil
	}
	return o.order
}

// Len returns the number of entries.
func (o *Overlay) Len() int {
	if o == nil {
		return 0
	}
	return len(o.order)
}

var (
	namespaceKey = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	hashPattern  = regexp.MustCompile(`^sha256:[0-9a-f]{16}$`)
)

// Load reads and merges overlay files; a key in two files is refused like
// a key twice in one file. No path gives an empty overlay.
func Load(paths ...string) (*Overlay, error) {
	o := &Overlay{tools: map[string]*Entry{}, ns: map[string]*Entry{}}
	for _, p := range paths {
		f, err := fileline.Open(p)
		if err != nil {
			return nil, fmt.Errorf("cards: %s: %w", p, err)
		}
		err = o.read(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Parse reads one overlay from r; file names it in errors. The first bad
// line is returned as an *[Error].
func Parse(r io.Reader, file string) (*Overlay, error) {
	o := &Overlay{tools: map[string]*Entry{}, ns: map[string]*Entry{}}
	if err := o.read(r, file); err != nil {
		return nil, err
	}
	return o, nil
}

// New builds an overlay from entries (for cards learn and suggest), with
// the checks [Parse] applies to each.
func New(entries []Entry) (*Overlay, error) {
	o := &Overlay{tools: map[string]*Entry{}, ns: map[string]*Entry{}}
	for i := range entries {
		e := entries[i]
		if reason := check(&e); reason != "" {
			return nil, &Error{File: e.File, Line: e.Line, Reason: reason}
		}
		if e.unfilled() {
			continue
		}
		if err := o.add(&e); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func (o *Overlay) read(r io.Reader, file string) error {
	cr := &countingReader{r: r, n: &o.bytes}
	sc := fileline.NewScanner(cr, MaxLineBytes)
	for sc.Scan() {
		b, line := sc.Bytes(), sc.Line()
		if o.bytes > MaxBytes {
			return &Error{File: file, Line: line, Reason: fmt.Sprintf("overlays larger than %d MiB in all", MaxBytes>>20)}
		}
		if b[0] == '#' {
			continue
		}
		e, reason := parseLine(b)
		if reason != "" {
			return &Error{File: file, Line: line, Reason: reason}
		}
		if e.unfilled() {
			continue
		}
		e.File, e.Line = file, line
		if err := o.add(e); err != nil {
			return err
		}
	}
	if sc.Err() != nil {
		return &Error{File: file, Line: sc.Line(), Reason: sc.Reason()}
	}
	if o.bytes > MaxBytes {
		return &Error{File: file, Line: sc.Line(), Reason: fmt.Sprintf("overlays larger than %d MiB in all", MaxBytes>>20)}
	}
	return nil
}

// countingReader adds what it reads to *n, and stops a little past
// [MaxBytes], so that a huge file (of comments or blank lines too) costs no
// more than reading [MaxBytes].
type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if *c.n > MaxBytes {
		return 0, io.EOF
	}
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

func (o *Overlay) add(e *Entry) error {
	if len(o.order) >= MaxEntries {
		return &Error{File: e.File, Line: e.Line, Reason: fmt.Sprintf("more than %d entries", MaxEntries)}
	}
	m, key := o.tools, e.Tool
	if ns, ok := e.Namespace(); ok {
		m, key = o.ns, ns
	}
	if prev, dup := m[key]; dup {
		reason := fmt.Sprintf("duplicate entry for %q (first at %s)", e.Tool, prev.where())
		if prev.File != e.File {
			// Typically a learned or suggested overlay beside the team's.
			reason += "; a key has one entry across the files: merge the two"
		}
		return &Error{File: e.File, Line: e.Line, Reason: reason}
	}
	m[key] = e
	o.order = append(o.order, e)
	return nil
}

// parseLine decodes and checks one entry, or returns why not.
func parseLine(b []byte) (*Entry, string) {
	if !utf8.Valid(b) {
		// encoding/json would turn the bytes into U+FFFD and go on: an
		// alias nobody wrote.
		return nil, "not valid UTF-8"
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var e Entry
	if err := dec.Decode(&e); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return nil, fmt.Sprintf("field %q: want %s, got JSON %s", ute.Field, goType(ute.Type.String()), ute.Value)
		}
		return nil, "invalid entry: " + strings.TrimPrefix(err.Error(), "json: ")
	}
	if dec.More() {
		return nil, "more than one JSON value on the line"
	}
	// encoding/json keeps the last of a member given twice: a reviewer
	// reading {"hash":H1,...,"hash":H2} sees another entry than the one
	// applied.
	var se *jcs.SyntaxError
	if err := jcs.Check(b); errors.As(err, &se) {
		return nil, "invalid entry: " + se.Msg
	}
	if reason := check(&e); reason != "" {
		return nil, reason
	}
	return &e, ""
}

func goType(t string) string {
	switch t {
	case "string":
		return "a string"
	case "[]string":
		return "an array of strings"
	}
	return t
}

// check validates an entry's key, hash and contents, and trims its texts.
func check(e *Entry) string {
	ns, isNS := e.Namespace()
	switch {
	case e.Tool == "":
		return `missing "tool" (a tool ID or NS/*)`
	case isNS && !namespaceKey.MatchString(ns):
		return fmt.Sprintf("tool %q: namespace must match %s", e.Tool, namespaceKey)
	case isNS && e.Hash != "":
		return fmt.Sprintf("tool %q: a namespace entry has no hash", e.Tool)
	case isNS && (len(e.Examples) > 0 || e.NotFor != ""):
		return fmt.Sprintf("tool %q: a namespace entry takes only aliases and tags", e.Tool)
	case !isNS:
		t := tools.Tool{ID: e.Tool}
		t.Card.Name = t.Name()
		if err := t.Validate(); err != nil {
			return fmt.Sprintf("tool %q is not a tool ID (<namespace>/<name>) or NS/*", e.Tool)
		}
		if e.Hash == "" {
			return fmt.Sprintf(`tool %q: missing "hash" (toolgate cards hash prints it)`, e.Tool)
		}
		if !hashPattern.MatchString(e.Hash) {
			return fmt.Sprintf("tool %q: hash %q must match %s", e.Tool, e.Hash, hashPattern)
		}
	}
	for _, l := range []struct {
		name string
		list *[]string
	}{{"aliases", &e.Aliases}, {"examples", &e.Examples}, {"tags", &e.Tags}} {
		if len(*l.list) > MaxList {
			return fmt.Sprintf("%s: %d entries, at most %d", l.name, len(*l.list), MaxList)
		}
		for i, s := range *l.list {
			s = strings.TrimSpace(s)
			if reason := checkText(s); reason != "" {
				return fmt.Sprintf("%s[%d]: %s", l.name, i, reason)
			}
			(*l.list)[i] = s
		}
	}
	if e.NotFor != "" {
		e.NotFor = strings.TrimSpace(e.NotFor)
		if reason := checkText(e.NotFor); reason != "" {
			return "not_for: " + reason
		}
	}
	if e.addsNothing() && e.Hash == "" {
		return fmt.Sprintf("tool %q: the entry adds nothing (aliases, examples, not_for, tags)", e.Tool)
	}
	return ""
}

func (e *Entry) addsNothing() bool {
	return len(e.Aliases)+len(e.Examples)+len(e.Tags) == 0 && e.NotFor == ""
}

// unfilled reports whether e is a line as toolgate cards hash prints it, a
// tool and its hash only, not filled in yet: it applies nothing, so a file
// of such lines is an overlay to grow, not an error.
func (e *Entry) unfilled() bool { return e.Hash != "" && e.addsNothing() }

func checkText(s string) string {
	switch {
	case s == "":
		return "empty"
	case len(s) > MaxText:
		return fmt.Sprintf("%d bytes, at most %d", len(s), MaxText)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "contains control characters"
	}
	return ""
}

// Hash returns the version of t an entry is written against: the first 16
// hex digits of the SHA-256 of the tool's name, its description (the
// summary when it has none) and its input schema in RFC 8785 canonical
// form, each prefixed by its length. Card fields an overlay may change do
// not enter it, so applying an overlay never changes a tool's hash.
func Hash(t *tools.Tool) string {
	desc := t.Description
	if desc == "" {
		desc = t.Card.Summary
	}
	schema := []byte(t.InputSchema)
	if len(bytes.TrimSpace(schema)) > 0 {
		if c, err := jcs.Canonicalize(schema); err == nil {
			schema = c
		}
	} else {
		schema = nil
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(t.Name()), []byte(desc), schema} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)[:8])
}

// Problem is an entry that was not applied.
type Problem struct {
	// Entry is the entry not applied.
	Entry *Entry
	// Hash is the tool's current hash, for a stale entry.
	Hash string
}

// String formats the problem as one line: "FILE:LINE: ID: reason".
func (p Problem) String() string {
	if p.Hash != "" {
		return fmt.Sprintf("%s: %s: stale entry not applied: written for %s, the tool is now %s (review it and update its hash)",
			p.Entry.where(), p.Entry.Tool, p.Entry.Hash, p.Hash)
	}
	return fmt.Sprintf("%s: %s: no such tool or namespace in the catalog; entry not applied", p.Entry.where(), p.Entry.Tool)
}

// Report says what applying an overlay did.
type Report struct {
	// Changed lists the IDs of the tools whose cards changed, sorted.
	Changed []string
	// Stale lists tool entries whose hash differs from the tool's.
	Stale []Problem
	// Unknown lists entries whose tool or namespace is not in the catalog.
	// A partial catalog (one upstream down) reports these too; they are
	// warnings, not errors.
	Unknown []Problem
}

// Problems returns Stale and Unknown in the overlay's order.
func (r *Report) Problems() []Problem {
	out := append(append([]Problem(nil), r.Stale...), r.Unknown...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Entry, out[j].Entry
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return out
}

// Apply returns copies of ts with the overlay applied and a report of what
// changed and what was not applied. ts is not modified. A nil overlay
// returns ts unchanged.
func (o *Overlay) Apply(ts []tools.Tool) ([]tools.Tool, *Report) {
	rep := &Report{}
	if o.Len() == 0 {
		return ts, rep
	}
	out := make([]tools.Tool, len(ts))
	seenTool := map[string]bool{}
	seenNS := map[string]bool{}
	for i := range ts {
		t := ts[i]
		seenNS[t.Namespace()] = true
		changed := false
		if e := o.ns[t.Namespace()]; e != nil {
			changed = addNamespace(&t.Card, e) || changed
		}
		if e := o.tools[t.ID]; e != nil {
			seenTool[t.ID] = true
			if h := Hash(&t); h != e.Hash {
				rep.Stale = append(rep.Stale, Problem{Entry: e, Hash: h})
			} else {
				changed = addTool(&t.Card, e) || changed
			}
		}
		if changed {
			rep.Changed = append(rep.Changed, t.ID)
		}
		out[i] = t
	}
	for _, e := range o.order {
		ns, isNS := e.Namespace()
		if (isNS && !seenNS[ns]) || (!isNS && !seenTool[e.Tool]) {
			rep.Unknown = append(rep.Unknown, Problem{Entry: e})
		}
	}
	sort.Strings(rep.Changed)
	sortProblems(rep.Stale)
	return out, rep
}

// Transform applies the overlay to ts and discards the report: the form
// mcp.Options.Transform takes, for tools an upstream re-registers. Report
// stale entries once with Apply (or Check) at start.
func (o *Overlay) Transform(ts []tools.Tool) []tools.Tool {
	out, _ := o.Apply(ts)
	return out
}

// Check reports, for the tools of snap, what Apply would change and which
// entries are stale or unknown, without changing anything.
func (o *Overlay) Check(snap *tools.Snapshot) *Report {
	ts := make([]tools.Tool, snap.Len())
	for i, t := range snap.Tools() {
		ts[i] = *t
	}
	_, rep := o.Apply(ts)
	return rep
}

func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].Entry, ps[j].Entry
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
}

func addTool(c *tools.Card, e *Entry) bool {
	changed := false
	c.Aliases, changed = merge(c.Aliases, e.Aliases, changed)
	c.Examples, changed = merge(c.Examples, e.Examples, changed)
	c.Tags, changed = merge(c.Tags, e.Tags, changed)
	if e.NotFor != "" && e.NotFor != c.NotFor {
		c.NotFor = e.NotFor
		changed = true
	}
	return changed
}

// addNamespace adds a server's aliases and tags to one of its tools' tags:
// they name the system, not the action, and the tags field is where
// discovery weighs such words.
func addNamespace(c *tools.Card, e *Entry) bool {
	changed := false
	c.Tags, changed = merge(c.Tags, e.Aliases, changed)
	c.Tags, changed = merge(c.Tags, e.Tags, changed)
	return changed
}

// merge appends the items of add that list lacks (compared folded to lower
// case), copying list first so a caller's slice is never written.
func merge(list, add []string, changed bool) ([]string, bool) {
	var out []string
	for _, s := range add {
		if slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) }) ||
			slices.ContainsFunc(out, func(x string) bool { return strings.EqualFold(x, s) }) {
			continue
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return list, changed
	}
	return append(slices.Clip(list), out...), true
}

// Write writes entries as an overlay file, one JSON object a line, sorted
// by key, so that a generated overlay diffs well under review.
func Write(w io.Writer, entries []Entry) error {
	sorted := slices.Clone(entries)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Tool < sorted[j].Tool })
	bw := bufio.NewWriter(w)
	for i := range sorted {
		b, err := marshal(&sorted[i])
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func marshal(e *Entry) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, fmt.Errorf("cards: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
