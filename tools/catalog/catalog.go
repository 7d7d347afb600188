// Package catalog reads tool catalog files: JSON Lines, a JSON array, or an
// MCP tools/list result, one tool object each (docs/catalogs.md). Each
// object becomes a [tools.Definition] and then, through [tools.DefineAll], a
// [tools.Tool], so a catalog line and an MCP server's tool get their cards by
// the same rules.
//
// Every problem is an *[Error] "FILE:LINE: reason" and costs only the tool it
// is about: Parse returns every good tool plus one error per problem. A
// document must have one meaning: a tool object with a duplicate member
// name, at any depth ({"scopes":["admin"],"scopes":[]}), is rejected, never
// read as its last member. Cost is linear in the file, which may hold at
// most [MaxFileBytes]; input schemas nest at most [tools.MaxSchemaDepth] levels.
// [LoadFilesCached] keeps the load of a list of files in a cache file, read
// instead of the files while they are unchanged.
//
//	ts, err := catalog.LoadAll("github=servers/github.json", "bank.jsonl")
//	if err != nil { ... } // each line "FILE:LINE: reason"
//	err = reg.Add(ts...)
package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/internal/fileline"
)

// MaxFileBytes is the largest catalog [Parse] reads (256 MiB: a hundred
// thousand tools with rich schemas).
const MaxFileBytes = 256 << 20

// Error is one problem in a catalog file: the [File], the 1-based Line where
// the offending tool object (or JSON value) starts, and the Reason it was
// rejected (fields File string, Line int, Reason string). Line 0 means the
// problem concerns the whole file (it cannot be read, is too large, or its
// namespace is invalid).
type Error fileline.Error

// Error formats the problem as "FILE:LINE: reason" ("FILE: reason" when
// Line is 0), the form editors and CI logs link to.
func (e *Error) Error() string { return (*fileline.Error)(e).Error() }

// ParseSpec splits a CLI catalog argument "NS=FILE" into its file path and
// namespace. Without "NS=" the namespace is the file's stem: its base name
// up to the first dot ("mcp/github.json" → "github"), with every character
// a namespace may not hold replaced by '-'. A spec whose part before '=' is
// not a valid namespace (it holds a path separator, say) is taken as a
// plain file path; [LoadFiles] reads it as one when such a file exists,
// and otherwise reports the namespace as not valid.
func ParseSpec(spec string) (path, ns string) {
	path, ns, _ = parseSpec(spec)
	return path, ns
}

// parseSpec is [ParseSpec] that also tells whether the namespace came
// from the file's name rather than from "NS=".
func parseSpec(spec string) (path, ns string, derived bool) {
	if before, after, ok := strings.Cut(spec, "="); ok && tools.CheckNamespace(before) == nil && after != "" {
		return after, before, false
	}
	return spec, fileNamespace(spec), true
}

// specError returns the error for a spec "NS=FILE" whose NS is empty or
// not a valid namespace, unless a file is named the whole spec (which
// [ParseSpec] then takes as a path): "a/b=x.json" is a namespace mistyped
// more often than a file's name.
func specError(spec string) error {
	before, after, ok := strings.Cut(spec, "=")
	if !ok || after == "" {
		return nil
	}
	err := tools.CheckNamespace(before)
	if err == nil {
		return nil
	}
	if _, statErr := os.Stat(spec); statErr == nil {
		return nil
	}
	_, reason, _ := strings.Cut(err.Error(), ": ")
	return &Error{File: fmt.Sprintf("--tools %q", spec), Reason: fmt.Sprintf("namespace %q is not valid: %s (and no file is named %q)", before, reason, spec)}
}

// checkNamespaces returns, for each spec, an error when its tools would
// silently share a namespace with an earlier spec's: when both took their
// namespace from their file's name ("über.json" beside "ber.json", both
// "ber"; two names with no character a namespace may hold, both
// "catalog"; "a/tools.json" beside "b/tools.json"), or when one named it
// with "NS=" and the other's name had to be changed to give it ("ber=x.json"
// beside "über.json"). Specs that name the same namespace with "NS=" share
// it on purpose, as does "a=x.json" beside "a.json".
func checkNamespaces(specs []string) []error {
	type spec struct {
		path, ns       string
		derived, lossy bool
	}
	errs := make([]error, len(specs))
	seen := map[string]spec{}
	for i, s := range specs {
		if err := specError(s); err != nil {
			errs[i] = err
			continue
		}
		var cur spec
		cur.path, cur.ns, cur.derived = parseSpec(s)
		cur.lossy = cur.derived && cur.ns != fileStem(cur.path)
		first, dup := seen[cur.ns]
		if !dup {
			seen[cur.ns] = cur
			continue
		}
		if !(first.derived && cur.derived) && !first.lossy && !cur.lossy {
			continue
		}
		var why string
		switch {
		case cur.derived && noNamespaceChar(cur.path):
			why = fmt.Sprintf("the file's name has no character a namespace may hold (A-Z a-z 0-9 _ . -), so its namespace would be %q, which is also %q's", cur.ns, first.path)
		case cur.derived:
			why = fmt.Sprintf("namespace %q, from the file's name, is also %q's", cur.ns, first.path)
		case noNamespaceChar(first.path):
			why = fmt.Sprintf("namespace %q is also %q's (the fallback for a name with no character a namespace may hold)", cur.ns, first.path)
		default:
			why = fmt.Sprintf("namespace %q is also %q's, from that file's name", cur.ns, first.path)
		}
		errs[i] = &Error{File: cur.path, Reason: why + "; give one of them its own namespace with --tools NS=FILE"}
	}
	return errs
}

// fileStem is path's base name up to its first dot, which
// [fileNamespace] makes a namespace.
func fileStem(path string) string {
	stem := filepath.Base(path)
	if i := strings.IndexByte(stem, '.'); i > 0 {
		stem = stem[:i]
	}
	return stem
}

// noNamespaceChar reports whether the stem of path has no character a
// namespace may hold, so that [fileNamespace] falls back to "catalog".
func noNamespaceChar(path string) bool {
	return strings.Trim(namespaceReplacer.ReplaceAllString(fileStem(path), "-"), "_.-") == ""
}

var namespaceReplacer = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

func fileNamespace(path string) string {
	stem := namespaceReplacer.ReplaceAllString(fileStem(path), "-")
	stem = strings.TrimLeft(stem, "_.-")
	if len(stem) > 64 {
		stem = stem[:64]
	}
	if stem == "" {
		stem = "catalog"
	}
	return stem
}

// Load reads the catalog file at path and returns its tools with IDs
// "<namespace>/<name>". It is [Parse] on the file's contents, reporting
// positions against path; an unreadable file is a single *[Error] with Line 0.
func Load(path, namespace string) ([]tools.Tool, error) {
	p, err := parseFile(path, namespace, nil)
	if p == nil {
		return nil, err
	}
	return p.tools, err
}

// parseFile is [Load] that returns the parser, which holds each tool's line
// and the file's format; it is nil when the file could not be read.
func parseFile(path, namespace string, sum *fileSum) (*parser, error) {
	f, err := fileline.Open(path)
	if err != nil {
		return nil, &Error{File: path, Reason: "cannot read catalog: " + err.Error()}
	}
	defer f.Close()
	var r io.Reader = f
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() <= MaxFileBytes {
		// One buffer of the file's size, not ReadAll's doubling: 76 MB
		// instead of 166 MB of allocations for 100,000 tools.
		r = &sizedReader{f, st.Size()}
	}
	return read(r, path, namespace, MaxFileBytes, sum)
}

// sizedReader is a reader whose size is known ahead, which read uses to
// size its buffer.
type sizedReader struct {
	io.Reader
	size int64
}

// Format is the layout of a catalog file, which [Parse] tells from its first
// value.
type Format string

// The formats [Parse] reads.
const (
	FormatJSONLines Format = "jsonl"
	FormatArray     Format = "array"
	// FormatToolsList is an MCP tools/list result (or a JSON-RPC response
	// holding one), whose tool objects have no aliases or not_for: only
	// card overlays give them those.
	FormatToolsList Format = "tools/list"
)

// File is one catalog file that [LoadFiles] read.
type File struct {
	// Path and Namespace are the spec's, as [ParseSpec] splits it.
	Path, Namespace string
	// Format is how the file was read.
	Format Format
	// Tools are the file's good tools, in file order, less those whose ID
	// an earlier file already defined. Empty for a file holding no tools.
	Tools []tools.Tool
	// NextCursor is a tools/list result's nextCursor: when not empty, the
	// file holds one page of a longer list, and the server lists tools
	// that it does not.
	NextCursor string
}

// LoadAll loads every "NS=FILE" (or "FILE") spec, in order, and rejects a
// tool whose ID an earlier file already defined. Like [Parse] it returns
// every good tool together with an error listing every problem.
func LoadAll(specs ...string) ([]tools.Tool, error) {
	files, err := LoadFiles(specs...)
	return Tools(files), err
}

// Tools returns the tools of files, in order: one file's own slice as it
// is, or a new one joining several files' (at 100,000 tools a copy of one
// file's wrote 45 MB, which [tools.Registry.Add] then copies anyway).
func Tools(files []File) []tools.Tool {
	if len(files) == 1 {
		return files[0].Tools
	}
	n := 0
	for _, f := range files {
		n += len(f.Tools)
	}
	all := make([]tools.Tool, 0, n)
	for _, f := range files {
		all = append(all, f.Tools...)
	}
	return all
}

// LoadFiles is [LoadAll] with the tools kept by file, one [File] per spec in
// order, each with its format (a file that could not be read has no
// tools and an empty [Format]).
func LoadFiles(specs ...string) ([]File, error) {
	return loadFiles(specs, nil)
}

// loadFiles is [LoadFiles] that also sets sums[i], when sums is not nil, to
// the size and SHA-256 of the bytes it parsed for specs[i].
func loadFiles(specs []string, sums []fileSum) ([]File, error) {
	type at struct {
		path string
		line int
	}
	var (
		files []File
		errs  []error
		seen  = map[string]at{} // ID -> where it was first defined
	)
	nsErrs := checkNamespaces(specs)
	for i, spec := range specs {
		path, ns := ParseSpec(spec)
		file := File{Path: path, Namespace: ns}
		if nsErrs[i] != nil {
			// Not read: its namespace is not valid, or its tools would
			// join another file's namespace.
			errs = append(errs, nsErrs[i])
			files = append(files, file)
			continue
		}
		var sum *fileSum
		if sums != nil {
			sum = &sums[i]
		}
		p, err := parseFile(path, ns, sum)
		if err != nil {
			errs = append(errs, err)
		}
		if p != nil {
			file.Format, file.NextCursor = p.format, p.nextCursor
			file.Tools = p.tools[:0] // filtered in place
			for i, t := range p.tools {
				if first, dup := seen[t.ID]; dup {
					errs = append(errs, &Error{File: path, Line: p.lines[i], Reason: fmt.Sprintf("duplicate tool %q (first defined at %s:%d)", t.ID, first.path, first.line)})
					continue
				}
				seen[t.ID] = at{path, p.lines[i]}
				file.Tools = append(file.Tools, t)
			}
		}
		files = append(files, file)
	}
	return files, errors.Join(errs...)
}

// Parse reads a catalog from r and returns its tools with IDs
// "<namespace>/<name>"; file names the source in errors. Three formats are
// accepted, told apart by the first byte that is not white space (a UTF-8
// byte order mark is skipped):
//
//   - '[': a JSON array of tool objects;
//   - '{' and the first JSON value is an object with a "tools" array and
//     no "name": an MCP tools/list result {"tools":[...]} (a whole JSON-RPC
//     response {"result":{"tools":[...]}} works too; another JSON-RPC
//     response, an error say, is reported as not a tools/list result);
//   - otherwise JSON Lines: one tool object per line; blank lines are
//     skipped and a trailing "\r" is ignored.
//
// One tool object holds the members of [tools.Definition]: "name"
// (required), "description" and/or "summary", "inputSchema",
// "parameters" or "input_schema" (a JSON Schema object, or null for none;
// at most one of them), and optionally
// "title", "scopes", "aliases", "not_for", "tags", "group", "tenants",
// "read_only", "irreversible", "idempotent", "open_world" and MCP
// "annotations" (readOnlyHint, destructiveHint, idempotentHint,
// openWorldHint). Other members are ignored. [tools.Define] derives the card.
// OpenAI Chat Completions' wrapper {"type":"function","function":{...}}
// is read as the object under "function" (with the members beside it);
// an object without "name" whose "type" is not "function" is refused.
//
// Every problem is an *[Error] "FILE:LINE: reason", LINE being where the
// offending object starts: invalid JSON, a duplicate member name at any
// depth, a missing or non-string name, a name outside printable ASCII or
// with a space at an end ([tools.Define]: a lookalike of another name), a
// member of the wrong type, an input schema [tools.CheckInputSchema]
// refuses, a duplicate ID, a file over [MaxFileBytes]. Parse loses nothing
// already accepted: it returns every good tool, in file order, plus an
// error joining one *Error per problem (nil when there is none). A syntax
// error inside a JSON array or tools/list ends parsing of that file, since
// nothing after it can be located.
func Parse(r io.Reader, file, namespace string) ([]tools.Tool, error) {
	ts, _, err := parseLimited(r, file, namespace, MaxFileBytes)
	return ts, err
}

// parseLimited is [Parse] with a size limit of maxBytes, also returning
// each tool's line.
func parseLimited(r io.Reader, file, namespace string, maxBytes int64) ([]tools.Tool, []int, error) {
	p, err := read(r, file, namespace, maxBytes, nil)
	if p == nil {
		return nil, nil, err
	}
	return p.tools, p.lines, err
}

// read parses the catalog in r, of at most maxBytes, and returns the
// parser holding its tools, their lines and the format; the parser is nil
// when r could not be read or the namespace is invalid. When sum is not
// nil, it is set to the size and SHA-256 of the bytes read.
func read(r io.Reader, file, namespace string, maxBytes int64, sum *fileSum) (*parser, error) {
	var data []byte
	var err error
	if sr, ok := r.(*sizedReader); ok && sr.size < maxBytes {
		// One byte more than the size, to see whether the file grew since
		// it was measured; then it reads on, up to the limit.
		data = make([]byte, sr.size+1)
		var n int
		n, err = io.ReadFull(sr.Reader, data)
		switch err {
		case io.EOF, io.ErrUnexpectedEOF:
			data, err = data[:n], nil
		case nil:
			var rest []byte
			rest, err = io.ReadAll(io.LimitReader(sr.Reader, maxBytes+1-int64(n)))
			data = append(data, rest...)
		}
	} else {
		data, err = io.ReadAll(io.LimitReader(r, maxBytes+1))
	}
	if err != nil {
		return nil, &Error{File: file, Reason: "cannot read catalog: " + err.Error()}
	}
	if int64(len(data)) > maxBytes {
		return nil, &Error{File: file, Reason: fmt.Sprintf("catalog is larger than %d MiB", maxBytes>>20)}
	}
	if sum != nil {
		*sum = fileSum{int64(len(data)), sha256.Sum256(data)}
	}
	if err := tools.CheckNamespace(namespace); err != nil {
		return nil, &Error{File: file, Reason: err.Error()}
	}
	p := &parser{file: file, data: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))}
	p.parse()
	p.data = nil // the objects hold copies; the file's bytes may go before define's
	p.define(namespace)
	slices.SortStableFunc(p.errs, func(a, b error) int { return a.(*Error).Line - b.(*Error).Line })
	return p, errors.Join(p.errs...)
}

type parser struct {
	file   string
	data   []byte
	format Format
	// nextCursor is a tools/list result's, "" when it has none.
	nextCursor string
	// defs and meta are the tool objects decoded, in file order, not yet
	// defined: apart, so that defs goes to [tools.DefineAll] as it is.
	defs []tools.Definition
	meta []objectMeta
	// schemas holds one copy of each input schema of defs, by content:
	// a big catalog's tools repeat their servers' schemas.
	schemas map[string]json.RawMessage
	tools   []tools.Tool
	lines   []int   // lines[i] is where tools[i] starts
	errs    []error // every one an *Error

	// lineOff and line cache the last lineAt answer, so that the
	// increasing offsets of a JSON array cost linear time in all.
	lineOff int64
	line    int
}

// object is one decoded tool object awaiting [tools.DefineAll].
type object struct {
	def tools.Definition
	objectMeta
}

// objectMeta is where an object was and what it called its schema.
type objectMeta struct {
	line      int
	schemaKey string // one of schemaKeys, for messages
}

// pend adds o to the objects awaiting define.
func (p *parser) pend(o object) {
	p.defs = append(p.defs, o.def)
	p.meta = append(p.meta, o.objectMeta)
}

func (p *parser) fail(line int, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Reason: fmt.Sprintf(format, args...)})
}

// lineAt returns the 1-based line of byte offset off in p.data.
func (p *parser) lineAt(off int64) int {
	off = min(off, int64(len(p.data)))
	if off < p.lineOff || p.line == 0 {
		p.lineOff, p.line = 0, 1
	}
	p.line += bytes.Count(p.data[p.lineOff:off], []byte("\n"))
	p.lineOff = off
	return p.line
}

// skipSpace returns the offset of the first byte at or after off that is
// neither JSON white space nor (when commas is set) a comma.
func (p *parser) skipSpace(off int64, commas bool) int64 {
	for off < int64(len(p.data)) {
		switch p.data[off] {
		case ' ', '\t', '\r', '\n':
		case ',':
			if !commas {
				return off
			}
		default:
			return off
		}
		off++
	}
	return off
}

func (p *parser) parse() {
	p.format = FormatJSONLines
	start := p.skipSpace(0, false)
	if start == int64(len(p.data)) {
		return // an empty catalog holds no tools
	}
	switch p.data[start] {
	case '[':
		p.format = FormatArray
		dec := json.NewDecoder(bytes.NewReader(p.data))
		dec.Token() // '['
		if p.parseArray(dec, "JSON array") {
			dec.Token() // ']'
			p.rejectTrailing(dec.InputOffset(), "JSON array")
		}
		return
	case '{':
		if path := p.toolsListPath(start); path != nil {
			p.format = FormatToolsList
			if len(path) > 0 {
				p.parseToolsList(path)
			}
			return
		}
	}
	p.parseLines()
}

// toolsListPath reports whether the first JSON value is a tools/list result
// and returns the keys leading to its "tools" member: ["tools"] or
// ["result","tools"]. It returns nil for a JSON Lines file, and an empty
// path for a tools/list result that is not valid JSON, whose error it has
// reported where it is (a JSON Lines reading would blame line 1).
func (p *parser) toolsListPath(start int64) []string {
	var first map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(p.data[start:]))
	if err := dec.Decode(&first); err != nil {
		if p.opensToolsList(start) {
			p.failJSON(start, "tools/list result", err)
			return []string{}
		}
		return nil
	}
	if _, isTool := first["name"]; isTool {
		return nil
	}
	var path []string
	page := first
	if _, ok := first["tools"]; ok {
		path = []string{"tools"}
	} else if res, ok := first["result"]; ok {
		var inner map[string]json.RawMessage
		if json.Unmarshal(res, &inner) == nil {
			if _, ok := inner["tools"]; ok {
				path, page = []string{"result", "tools"}, inner
			}
		}
	}
	if path != nil {
		// A page of a longer list says where the next one starts (a
		// member that is not a string is none).
		_ = json.Unmarshal(page["nextCursor"], &p.nextCursor)
	}
	if path != nil {
		p.rejectTrailing(start+dec.InputOffset(), "tools/list result")
	}
	if _, rpc := first["jsonrpc"]; rpc && path == nil {
		// A response recorded from the wrong request, or a failed one:
		// say so, rather than "missing "name"" of a JSON Lines reading.
		var e struct {
			Code    json.Number `json:"code"`
			Message string      `json:"message"`
		}
		if raw, ok := first["error"]; ok && json.Unmarshal(raw, &e) == nil {
			p.fail(p.lineAt(start), "a JSON-RPC error response (%s %+q), not a tools/list result", e.Code, e.Message[:min(len(e.Message), 200)])
		} else {
			p.fail(p.lineAt(start), `a JSON-RPC response whose result has no "tools": not a tools/list result`)
		}
		return []string{}
	}
	return path
}

// opensToolsList reports whether the JSON value at start, valid or not,
// names a "tools" or "result" member at its top level before any syntax
// error: a tools/list result (or JSON-RPC response) spread over lines,
// not a JSON Lines file.
func (p *parser) opensToolsList(start int64) bool {
	dec := json.NewDecoder(bytes.NewReader(p.data[start:]))
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
			if depth == 0 {
				return false
			}
		case "tools", "result":
			if depth == 1 {
				return true
			}
		}
	}
}

// failJSON reports err, from decoding the JSON value at byte start (of a
// what), at the line of the byte where it went wrong, with the column in
// bytes; an unfinished value is reported where it starts.
func (p *parser) failJSON(start int64, what string, err error) {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		p.fail(p.lineAt(start), "invalid JSON in %s: %s", what, jsonErrorReason(err))
		return
	}
	// A fresh decoder from start: se.Offset counts from there, and the
	// byte it stopped at is the one before it.
	var raw json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(p.data[start:])).Decode(&raw); errors.As(err, &se) {
		off := start + max(se.Offset-1, 0)
		col := off - int64(bytes.LastIndexByte(p.data[:off], '\n'))
		p.fail(p.lineAt(off), "invalid JSON in %s at column %d: %s", what, col, se.Error())
		return
	}
	p.fail(p.lineAt(start), "invalid JSON in %s: %s", what, jsonErrorReason(err))
}

// rejectTrailing reports anything but white space from offset off on.
func (p *parser) rejectTrailing(off int64, what string) {
	if at := p.skipSpace(off, false); at < int64(len(p.data)) {
		p.fail(p.lineAt(at), "unexpected data after the %s", what)
	}
}

// parseToolsList walks the object along path and parses the array there.
// A member on the path that appears twice ({"tools":[...],"tools":[]})
// makes the document ambiguous: it is reported and nothing is parsed.
func (p *parser) parseToolsList(path []string) {
	dec := json.NewDecoder(bytes.NewReader(p.data))
	for depth, key := range path {
		objStart := p.lineAt(p.skipSpace(dec.InputOffset(), false))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			p.fail(objStart, "%s is not a JSON object", strings.Join(path[:depth], "."))
			return
		}
		if dup := p.duplicateMember(dec.InputOffset()-1, key); dup != "" {
			p.fail(objStart, "duplicate member name %q", dup)
			return
		}
		for {
			if !dec.More() {
				p.fail(objStart, "tools/list result has no %q array", key)
				return
			}
			tok, err := dec.Token()
			if err != nil {
				p.fail(p.lineAt(dec.InputOffset()), "invalid JSON: %v", err)
				return
			}
			if tok == key {
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				p.fail(p.lineAt(dec.InputOffset()), "invalid JSON: %v", err)
				return
			}
		}
	}
	at := p.skipSpace(dec.InputOffset(), false)
	if at < int64(len(p.data)) && p.data[at] == ':' {
		at = p.skipSpace(at+1, false)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		p.fail(p.lineAt(at), "tools/list %q is not a JSON array", strings.Join(path, "."))
		return
	}
	p.parseArray(dec, "tools/list result")
}

// duplicateMember returns the name of a member that the object starting at
// byte off holds twice among its own members when key is one of them
// (duplicates deeper inside are each tool's own concern), or "".
func (p *parser) duplicateMember(off int64, key string) string {
	dec := json.NewDecoder(bytes.NewReader(p.data[off:]))
	dec.Token() // '{'
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		if err != nil || !ok {
			return ""
		}
		if seen[name] && name == key {
			return name
		}
		seen[name] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// parseArray decodes the elements of an array whose '[' dec has consumed,
// and reports whether it reached the closing ']' (left unconsumed).
func (p *parser) parseArray(dec *json.Decoder, what string) bool {
	for {
		at := p.skipSpace(dec.InputOffset(), true)
		if at >= int64(len(p.data)) {
			p.fail(p.lineAt(at), "truncated %s: missing ']'", what)
			return false
		}
		if p.data[at] == ']' {
			return true
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			p.failJSON(at, what, err)
			return false
		}
		p.addObject(p.lineAt(at), raw)
	}
}

func jsonErrorReason(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of file"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Error()
	}
	return err.Error()
}

// parseLines parses a JSON Lines file. A big one is cut at line ends into
// parts parsed in parallel, one per CPU ([runtime.GOMAXPROCS]), whose
// objects and errors are joined in file order.
func (p *parser) parseLines() {
	parts := min(runtime.GOMAXPROCS(0), len(p.data)/parallelLinesPart)
	if parts <= 1 {
		lines := bytes.Count(p.data, []byte("\n")) + 1
		p.defs = make([]tools.Definition, 0, lines)
		p.meta = make([]objectMeta, 0, lines)
		p.parseLinesFrom(p.data, 1)
		return
	}
	// Each part appends to its own window of one array, as long as its
	// lines: no part grows a slice, and joining them moves each window
	// down over the unused ends before it.
	subs := make([]parser, parts)
	ends := make([]int, parts) // the newlines of each part
	rest, total := p.data, 0
	for i := range subs {
		part := rest
		if i < parts-1 {
			cut := min(len(rest), len(p.data)/parts)
			if nl := bytes.IndexByte(rest[cut:], '\n'); nl >= 0 {
				part = rest[:cut+nl+1]
			}
		}
		rest = rest[len(part):]
		subs[i].data = part
		ends[i] = bytes.Count(part, []byte("\n"))
		total += ends[i] + 1
	}
	defs, meta := make([]tools.Definition, total), make([]objectMeta, total)
	var wg sync.WaitGroup
	line, at := 1, 0
	for i := range subs {
		sub, first, n := &subs[i], line, ends[i]+1
		sub.file = p.file
		sub.defs, sub.meta = defs[at:at:at+n], meta[at:at:at+n]
		wg.Go(func() { sub.parseLinesFrom(sub.data, first) })
		line, at = line+ends[i], at+n
	}
	wg.Wait()
	k := 0
	for i := range subs {
		copy(meta[k:], subs[i].meta)
		k += copy(defs[k:], subs[i].defs)
		p.errs = append(p.errs, subs[i].errs...)
	}
	clear(defs[k:]) // what the parts left behind in the tail
	p.defs, p.meta = defs[:k:k], meta[:k:k]
}

// parallelLinesPart is the fewest bytes of a JSON Lines file parseLines
// gives a goroutine of their own: a few thousand tools.
const parallelLinesPart = 4 << 20

// parseLinesFrom parses data, whose first line is the file's line first.
func (p *parser) parseLinesFrom(data []byte, first int) {
	for n := first; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		p.addObject(n, line)
	}
}

// members is one tool object as written in a catalog file. Members are raw
// so that a wrong type is reported per member, by name.
type members map[string]json.RawMessage

// addObject decodes one tool object into a pending Definition, or reports
// why it cannot.
func (p *parser) addObject(line int, raw json.RawMessage) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if !json.Valid(trimmed) {
			var v any
			err := json.Unmarshal(trimmed, &v)
			p.fail(line, "invalid JSON: %s", jsonErrorReason(err))
			return
		}
		p.fail(line, "tool is not a JSON object")
		return
	}
	// One strict pass (jcs: no duplicate member, valid UTF-8, ...) gives
	// the members as slices of trimmed; what the object keeps is copied
	// below, so the file's bytes can go before define.
	obj := make(members, 8)
	if err := jcs.CheckMembers(trimmed, func(name, value []byte) error {
		obj[string(name)] = value
		return nil
	}); err != nil {
		p.failObject(line, trimmed, err)
		return
	}
	obj, reason := unwrapFunction(obj)
	if reason != "" {
		p.fail(line, "%s", reason)
		return
	}
	o, reason := decodeDefinition(obj)
	if reason != "" {
		p.fail(line, "%s", reason)
		return
	}
	o.line = line
	if raw := o.def.InputSchema; len(raw) > 0 {
		if s, ok := p.schemas[string(raw)]; ok {
			o.def.InputSchema = s
		} else {
			if p.schemas == nil {
				p.schemas = make(map[string]json.RawMessage)
			}
			s = slices.Clone(raw)
			// The key aliases s, a copy the parser owns and never changes.
			p.schemas[unsafe.String(unsafe.SliceData(s), len(s))] = s
			o.def.InputSchema = s
		}
	}
	p.pend(o)
}

// failObject reports why a tool object is not strict JSON: encoding/json's
// reason where it refuses the object too, else jcs's (a duplicate member,
// invalid UTF-8, a lone surrogate, ...).
func (p *parser) failObject(line int, obj []byte, err error) {
	var m members
	if uerr := json.Unmarshal(obj, &m); uerr != nil {
		p.fail(line, "invalid JSON: %s", jsonErrorReason(uerr))
		return
	}
	var se *jcs.SyntaxError
	if errors.As(err, &se) {
		p.fail(line, "%s", se.Msg)
	} else {
		p.fail(line, "invalid JSON: %v", err)
	}
}

// define turns the pending objects into tools, in file order, and rejects
// repeated IDs.
func (p *parser) define(namespace string) {
	ts, errs := tools.DefineAll(namespace, p.defs)
	firstLine := make(map[string]int, len(ts)) // tool ID -> line of its first definition
	p.tools = ts[:0]                           // filtered in place: tools[i] is never ahead of ts[i]
	p.lines = make([]int, 0, len(ts))
	for i, o := range p.meta {
		if errs[i] != nil {
			p.fail(o.line, "%s", definitionReason(o, errs[i]))
			continue
		}
		t := ts[i]
		if first, dup := firstLine[t.ID]; dup {
			p.fail(o.line, "duplicate tool %q (first defined at line %d)", t.ID, first)
			continue
		}
		firstLine[t.ID] = o.line
		p.tools = append(p.tools, t)
		p.lines = append(p.lines, o.line)
	}
	p.defs, p.meta, p.schemas = nil, nil, nil
}

// definitionReason words a [tools.Define] error in the file's terms: prefixed
// with the tool's name, the schema named by the member that held it.
func definitionReason(o objectMeta, err error) string {
	var de *tools.DefinitionError
	if !errors.As(err, &de) {
		return err.Error()
	}
	switch de.Field {
	case tools.FieldName, tools.FieldID:
		return de.Reason
	case tools.FieldInputSchema:
		if de.Err != nil {
			return fmt.Sprintf("%s: invalid %q: %s", de.Name, o.schemaKey, tools.SchemaReason(de.Err))
		}
	}
	return de.Name + ": " + de.Reason
}

// unwrapFunction returns the tool object obj stands for: the object
// under "function" for OpenAI Chat Completions' {"type":"function",
// "function":{...}} (an object without "name"), else obj itself. An
// object without "name" whose "type" names another kind of tool (a
// hosted one, web_search say) is refused as such.
func unwrapFunction(obj members) (members, string) {
	if _, named := obj["name"]; named {
		return obj, ""
	}
	typ, _, _ := obj.str("type")
	if typ != "" && typ != "function" {
		return nil, fmt.Sprintf("a %+q tool, not a function: only function tools can be read", typ[:min(len(typ), 64)])
	}
	raw, ok := obj["function"]
	if !ok {
		return obj, ""
	}
	fn := make(members, 8)
	if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' {
		return nil, `"function" is not a JSON object`
	}
	// The whole object passed jcs's strict check: this one cannot fail.
	_ = jcs.CheckMembers(raw, func(name, value []byte) error {
		fn[string(name)] = value
		return nil
	})
	// Members beside "function" (toolgate's "scopes", say) belong to the
	// tool too: dropping them would drop a scope unseen.
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if k == "type" || k == "function" {
			continue
		}
		if _, both := fn[k]; both {
			return nil, fmt.Sprintf("%+q is given both inside and beside \"function\"", k[:min(len(k), 64)])
		}
		fn[k] = obj[k]
	}
	return fn, ""
}

// decodeDefinition reads the members of one tool object into a
// Definition, or returns why a member has the wrong type.
func decodeDefinition(obj members) (object, string) {
	var o object
	d := &o.def
	name, ok, reason := obj.str("name")
	switch {
	case reason != "":
		return o, reason
	case !ok:
		return o, `missing "name"`
	}
	d.Name = name
	if reason := toolMembers.NearMiss(maps.Keys(obj)); reason != "" {
		return o, fmt.Sprintf("%s: %s", name, reason)
	}
	texts := []struct {
		key string
		dst *string
	}{{"description", &d.Description}, {"summary", &d.Summary}, {"not_for", &d.NotFor}, {"group", &d.Group}, {"title", &d.Title}}
	for _, f := range texts {
		s, _, reason := obj.str(f.key)
		if reason != "" {
			return o, fmt.Sprintf("%s: %s", name, reason)
		}
		*f.dst = s
	}
	lists := []struct {
		key string
		dst *[]string
	}{{"scopes", &d.Scopes}, {"aliases", &d.Aliases}, {"tags", &d.Tags}, {"tenants", &d.Tenants}}
	for _, f := range lists {
		l, reason := obj.strs(f.key)
		if reason != "" {
			return o, fmt.Sprintf("%s: %s", name, reason)
		}
		*f.dst = l
	}
	if reason := obj.booleans(flag{"read_only", &d.ReadOnly}, flag{"irreversible", &d.Irreversible},
		flag{"idempotent", &d.Idempotent}, flag{"open_world", &d.OpenWorld}); reason != "" {
		return o, fmt.Sprintf("%s: %s", name, reason)
	}
	if raw, ok := obj["annotations"]; ok && !isNull(raw) {
		var ann members
		if err := json.Unmarshal(raw, &ann); err != nil {
			return o, fmt.Sprintf(`%s: "annotations" is not a JSON object`, name)
		}
		if reason := annotationMembers.NearMiss(maps.Keys(ann)); reason != "" {
			return o, fmt.Sprintf("%s: annotations: %s", name, reason)
		}
		// destructiveHint is true unless said otherwise: MCP's default
		// ([tools.Annotations]).
		a := &tools.Annotations{DestructiveHint: true}
		if reason := ann.booleans(flag{"readOnlyHint", &a.ReadOnlyHint}, flag{"destructiveHint", &a.DestructiveHint},
			flag{"idempotentHint", &a.IdempotentHint}, flag{"openWorldHint", &a.OpenWorldHint}); reason != "" {
			return o, fmt.Sprintf("%s: annotations: %s", name, reason)
		}
		d.Annotations = a
	}
	// The schema under MCP's name, OpenAI's or Anthropic's (which is also
	// how toolgate's own JSON writes a tool): one of them, or none.
	for _, key := range schemaKeys {
		raw, ok := obj[key]
		if !ok || isNull(raw) {
			continue
		}
		if d.InputSchema != nil {
			return o, fmt.Sprintf(`%s: both %q and %q are given`, name, o.schemaKey, key)
		}
		o.schemaKey, d.InputSchema = key, raw
	}
	if o.schemaKey == "" {
		o.schemaKey = schemaKeys[0]
	}
	return o, ""
}

// schemaKeys are the members a tool object may hold its input schema in.
var schemaKeys = [...]string{"inputSchema", "parameters", "input_schema"}

// toolMembers and annotationMembers are the members a tool object, and
// its MCP annotations, are read from; other members are ignored, unless
// misspelt ([fileline.Members.NearMiss]).
var (
	toolMembers = fileline.NewMembers("name", "description", "summary", "not_for", "group", "title",
		"scopes", "aliases", "tags", "tenants", "read_only", "irreversible", "idempotent", "open_world",
		"annotations", "inputSchema", "parameters", "input_schema", "type", "function")
	annotationMembers = fileline.NewMembers("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
)

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// str returns the string member key; ok is false when it is absent or null.
func (o members) str(key string) (s string, ok bool, reason string) {
	raw, present := o[key]
	if !present || isNull(raw) {
		return "", false, ""
	}
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		// A string without escapes, checked strictly by jcs: its bytes
		// are its value.
		return string(raw[1 : len(raw)-1]), true, ""
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, fmt.Sprintf("%q is not a string", key)
	}
	return s, true, ""
}

func (o members) strs(key string) ([]string, string) {
	raw, present := o[key]
	if !present || isNull(raw) {
		return nil, ""
	}
	var l []string
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Sprintf("%q is not an array of strings", key)
	}
	return l, ""
}

// flag is a boolean member and where to store it.
type flag struct {
	key string
	dst *bool
}

// booleans stores the flags' members (an absent or null one leaves its
// destination as it is) and returns why the first that is not a boolean
// is refused, or "".
func (o members) booleans(flags ...flag) string {
	for _, f := range flags {
		raw, present := o[f.key]
		if !present || isNull(raw) {
			continue
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return fmt.Sprintf("%q is not a boolean", f.key)
		}
	}
	return ""
}
