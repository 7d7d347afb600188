package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// CatalogError is one problem in a catalog file: the file, the 1-based line
// where the offending tool object (or JSON value) starts, and why it was
// rejected. Line 0 means the problem concerns the whole file (it cannot be
// read, or its namespace is invalid).
type CatalogError struct {
	File   string
	Line   int
	Reason string
}

// Error formats the problem as "FILE:LINE: reason" ("FILE: reason" when
// Line is 0), the form editors and CI logs link to.
func (e *CatalogError) Error() string {
	if e.Line <= 0 {
		return e.File + ": " + e.Reason
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
}

// ParseCatalogSpec splits a CLI catalog argument "NS=FILE" into its file
// path and namespace. Without "NS=" the namespace is the file's stem: its
// base name up to the first dot ("mcp/github.json" → "github"), with every
// character a namespace may not hold replaced by '-'. A spec whose part
// before '=' is not a valid namespace (it holds a path separator, say) is
// taken as a plain file path.
func ParseCatalogSpec(spec string) (path, ns string) {
	if before, after, ok := strings.Cut(spec, "="); ok && namespacePattern.MatchString(before) && after != "" {
		return after, before
	}
	return spec, fileNamespace(spec)
}

var namespaceReplacer = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

func fileNamespace(path string) string {
	stem := filepath.Base(path)
	if i := strings.IndexByte(stem, '.'); i > 0 {
		stem = stem[:i]
	}
	stem = namespaceReplacer.ReplaceAllString(stem, "-")
	stem = strings.TrimLeft(stem, "_.-")
	if len(stem) > 64 {
		stem = stem[:64]
	}
	if stem == "" {
		stem = "catalog"
	}
	return stem
}

// LoadCatalog reads the catalog file at path and returns its tools with IDs
// "<namespace>/<name>". It is ParseCatalog on the file's contents, reporting
// positions against path; an unreadable file is a single *CatalogError with
// Line 0.
func LoadCatalog(path, namespace string) ([]Tool, error) {
	ts, _, err := parseCatalogFile(path, namespace)
	return ts, err
}

// parseCatalogFile is LoadCatalog that also returns each tool's line.
func parseCatalogFile(path, namespace string) ([]Tool, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, &CatalogError{File: path, Reason: "cannot read catalog: " + unwrapPathError(err)}
	}
	defer f.Close()
	return parseCatalog(f, path, namespace)
}

func unwrapPathError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// LoadCatalogs loads every "NS=FILE" (or "FILE") spec, in order, and
// rejects a tool whose ID an earlier file already defined. Like
// ParseCatalog it returns every good tool together with an error listing
// every problem.
func LoadCatalogs(specs ...string) ([]Tool, error) {
	var (
		all  []Tool
		errs []error
		seen = map[string]string{} // ID -> "FILE:LINE" of its first definition
	)
	for _, spec := range specs {
		path, ns := ParseCatalogSpec(spec)
		ts, lines, err := parseCatalogFile(path, ns)
		if err != nil {
			errs = append(errs, err)
		}
		for i, t := range ts {
			if first, dup := seen[t.ID]; dup {
				errs = append(errs, &CatalogError{File: path, Line: lines[i], Reason: fmt.Sprintf("duplicate tool %q (first defined at %s)", t.ID, first)})
				continue
			}
			seen[t.ID] = fmt.Sprintf("%s:%d", path, lines[i])
			all = append(all, t)
		}
	}
	return all, errors.Join(errs...)
}

// ParseCatalog reads a catalog from r and returns its tools with IDs
// "<namespace>/<name>"; file names the source in errors. Three formats are
// accepted, told apart by the first byte that is not white space (a UTF-8
// byte order mark is skipped):
//
//   - '[': a JSON array of tool objects;
//   - '{' and the first JSON value is an object with a "tools" array and
//     no "name": an MCP tools/list result {"tools":[...]} (a whole JSON-RPC
//     response {"result":{"tools":[...]}} works too);
//   - otherwise JSON Lines: one tool object per line; blank lines are
//     skipped and a trailing "\r" is ignored.
//
// One tool object holds "name" (required), "description" and/or "summary",
// "inputSchema" or "parameters" (a JSON Schema object, or null for none),
// and optionally "title", "scopes", "aliases", "not_for", "tags", "group",
// "tenants", "read_only", "irreversible", "idempotent", "open_world" and
// MCP "annotations" (readOnlyHint → read_only, destructiveHint →
// irreversible unless read-only, idempotentHint, openWorldHint). Other
// fields are ignored. The card's summary is "summary" when given, else the
// first sentence of the description, shortened to at most 30 words.
//
// Every problem is a *CatalogError "FILE:LINE: reason", LINE being where the
// offending object starts: invalid JSON, a missing or non-string name, a
// name with control characters, a field of the wrong type, an input schema
// that is not a JSON object or not a valid JSON Schema (compiled with the
// draft its "$schema" names, 2020-12 by default; remote references are
// never fetched), a duplicate ID. ParseCatalog loses nothing already
// accepted: it returns every good tool, in file order, plus an error
// joining one *CatalogError per problem (nil when there is none). A syntax
// error inside a JSON array or tools/list ends parsing of that file, since
// nothing after it can be located.
func ParseCatalog(r io.Reader, file, namespace string) ([]Tool, error) {
	ts, _, err := parseCatalog(r, file, namespace)
	return ts, err
}

func parseCatalog(r io.Reader, file, namespace string) ([]Tool, []int, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, &CatalogError{File: file, Reason: "cannot read catalog: " + err.Error()}
	}
	if !namespacePattern.MatchString(namespace) {
		return nil, nil, &CatalogError{File: file, Reason: fmt.Sprintf("invalid namespace %q: must match %s", namespace, namespacePattern)}
	}
	p := &catalogParser{file: file, ns: namespace, data: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), firstLine: map[string]int{}}
	p.parse()
	slices.SortStableFunc(p.errs, func(a, b error) int { return a.(*CatalogError).Line - b.(*CatalogError).Line })
	return p.tools, p.lines, errors.Join(p.errs...)
}

type catalogParser struct {
	file      string
	ns        string
	data      []byte
	tools     []Tool
	lines     []int          // lines[i] is where tools[i] starts
	errs      []error        // every one a *CatalogError
	firstLine map[string]int // tool ID -> line of its first definition
	schemas   schemaChecker
}

func (p *catalogParser) fail(line int, format string, args ...any) {
	p.errs = append(p.errs, &CatalogError{File: p.file, Line: line, Reason: fmt.Sprintf(format, args...)})
}

// lineAt returns the 1-based line of byte offset off in p.data.
func (p *catalogParser) lineAt(off int64) int {
	if off > int64(len(p.data)) {
		off = int64(len(p.data))
	}
	return bytes.Count(p.data[:off], []byte("\n")) + 1
}

// skipSpace returns the offset of the first byte at or after off that is
// neither JSON white space nor (when commas is set) a comma.
func (p *catalogParser) skipSpace(off int64, commas bool) int64 {
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

func (p *catalogParser) parse() {
	start := p.skipSpace(0, false)
	if start == int64(len(p.data)) {
		return // an empty catalog holds no tools
	}
	switch p.data[start] {
	case '[':
		dec := json.NewDecoder(bytes.NewReader(p.data))
		dec.Token() // '['
		if p.parseArray(dec, "JSON array") {
			dec.Token() // ']'
			p.rejectTrailing(dec.InputOffset(), "JSON array")
		}
		return
	case '{':
		if path := p.toolsListPath(start); path != nil {
			p.parseToolsList(path)
			return
		}
	}
	p.parseLines()
}

// toolsListPath reports whether the first JSON value is a tools/list result
// and returns the keys leading to its "tools" member: ["tools"] or
// ["result","tools"]. It returns nil for a JSON Lines file.
func (p *catalogParser) toolsListPath(start int64) []string {
	var first map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(p.data[start:]))
	if err := dec.Decode(&first); err != nil {
		return nil
	}
	if _, isTool := first["name"]; isTool {
		return nil
	}
	var path []string
	if _, ok := first["tools"]; ok {
		path = []string{"tools"}
	} else if res, ok := first["result"]; ok {
		var inner map[string]json.RawMessage
		if json.Unmarshal(res, &inner) == nil {
			if _, ok := inner["tools"]; ok {
				path = []string{"result", "tools"}
			}
		}
	}
	if path != nil {
		p.rejectTrailing(start+dec.InputOffset(), "tools/list result")
	}
	return path
}

// rejectTrailing reports anything but white space from offset off on.
func (p *catalogParser) rejectTrailing(off int64, what string) {
	if at := p.skipSpace(off, false); at < int64(len(p.data)) {
		p.fail(p.lineAt(at), "unexpected data after the %s", what)
	}
}

// parseToolsList walks the object along path and parses the array there.
func (p *catalogParser) parseToolsList(path []string) {
	dec := json.NewDecoder(bytes.NewReader(p.data))
	for depth, key := range path {
		objStart := p.lineAt(p.skipSpace(dec.InputOffset(), false))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			p.fail(objStart, "%s is not a JSON object", strings.Join(path[:depth], "."))
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

// parseArray decodes the elements of an array whose '[' dec has consumed,
// and reports whether it reached the closing ']' (left unconsumed).
func (p *catalogParser) parseArray(dec *json.Decoder, what string) bool {
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
			p.fail(p.lineAt(at), "invalid JSON in %s: %s", what, jsonErrorReason(err))
			return false
		}
		p.addTool(p.lineAt(at), raw)
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

func (p *catalogParser) parseLines() {
	data := p.data
	for n := 1; len(data) > 0; n++ {
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
		p.addTool(n, line)
	}
}

// catalogTool is one tool object as written in a catalog file. Fields are
// raw so that a wrong type is reported per field, by name.
type catalogTool map[string]json.RawMessage

func (p *catalogParser) addTool(line int, raw json.RawMessage) {
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
	var obj catalogTool
	if err := json.Unmarshal(trimmed, &obj); err != nil {
		p.fail(line, "invalid JSON: %s", jsonErrorReason(err))
		return
	}
	t, reason := p.buildTool(obj)
	if reason != "" {
		p.fail(line, "%s", reason)
		return
	}
	if first, dup := p.firstLine[t.ID]; dup {
		p.fail(line, "duplicate tool %q (first defined at line %d)", t.ID, first)
		return
	}
	p.firstLine[t.ID] = line
	p.tools = append(p.tools, t)
	p.lines = append(p.lines, line)
}

// buildTool turns one object into a Tool, or returns why it cannot.
func (p *catalogParser) buildTool(obj catalogTool) (Tool, string) {
	var t Tool
	name, ok, reason := obj.str("name")
	switch {
	case reason != "":
		return t, reason
	case !ok:
		return t, `missing "name"`
	case strings.TrimSpace(name) == "":
		return t, `"name" is empty`
	case strings.IndexFunc(name, unicode.IsControl) >= 0 || !utf8.ValidString(name):
		return t, fmt.Sprintf("name %q contains control characters or invalid UTF-8", name)
	}
	t.ID = p.ns + "/" + name
	t.Card.Name = name
	fields := []struct {
		key string
		dst *string
	}{{"description", &t.Description}, {"summary", &t.Card.Summary}, {"not_for", &t.Card.NotFor}, {"group", &t.Card.Group}, {"title", &t.Title}}
	for _, f := range fields {
		s, _, reason := obj.str(f.key)
		if reason != "" {
			return t, fmt.Sprintf("%s: %s", name, reason)
		}
		*f.dst = strings.TrimSpace(s)
	}
	lists := []struct {
		key string
		dst *[]string
	}{{"scopes", &t.Card.Scopes}, {"aliases", &t.Card.Aliases}, {"tags", &t.Card.Tags}, {"tenants", &t.Tenants}}
	for _, f := range lists {
		l, reason := obj.strs(f.key)
		if reason != "" {
			return t, fmt.Sprintf("%s: %s", name, reason)
		}
		*f.dst = l
	}
	for _, s := range t.Card.Scopes {
		if strings.TrimSpace(s) == "" {
			return t, fmt.Sprintf(`%s: "scopes" holds an empty scope`, name)
		}
	}
	if reason := risk(obj, &t.Card); reason != "" {
		return t, fmt.Sprintf("%s: %s", name, reason)
	}
	if t.Card.Summary == "" {
		t.Card.Summary = FirstSentence(t.Description)
	}
	schema, reason := p.inputSchema(obj)
	if reason != "" {
		return t, fmt.Sprintf("%s: %s", name, reason)
	}
	t.InputSchema = schema
	if err := t.Validate(); err != nil {
		return t, strings.TrimPrefix(err.Error(), ErrInvalidTool.Error()+" ")
	}
	return t, ""
}

// risk fills the card's risk flags from the explicit fields and the MCP
// annotations. destructiveHint means irreversible only for a tool that is
// not read-only (MCP: the hint is meaningful only when readOnlyHint is false).
func risk(obj catalogTool, c *Card) string {
	flags := []struct {
		key string
		dst *bool
	}{{"read_only", &c.ReadOnly}, {"irreversible", &c.Irreversible}, {"idempotent", &c.Idempotent}, {"open_world", &c.OpenWorld}}
	for _, f := range flags {
		if reason := obj.boolean(f.key, f.dst); reason != "" {
			return reason
		}
	}
	explicitIrreversible := c.Irreversible
	if raw, ok := obj["annotations"]; ok && !isNull(raw) {
		var ann catalogTool
		if err := json.Unmarshal(raw, &ann); err != nil {
			return `"annotations" is not a JSON object`
		}
		var readOnly, destructive, idempotent, openWorld bool
		for _, f := range []struct {
			key string
			dst *bool
		}{{"readOnlyHint", &readOnly}, {"destructiveHint", &destructive}, {"idempotentHint", &idempotent}, {"openWorldHint", &openWorld}} {
			if reason := ann.boolean(f.key, f.dst); reason != "" {
				return "annotations: " + reason
			}
		}
		c.ReadOnly = c.ReadOnly || readOnly
		c.Idempotent = c.Idempotent || idempotent
		c.OpenWorld = c.OpenWorld || openWorld
		if destructive && !c.ReadOnly {
			c.Irreversible = true
		}
	}
	if c.ReadOnly && explicitIrreversible {
		return `"read_only" and "irreversible" contradict each other`
	}
	if c.ReadOnly {
		c.Irreversible = false
	}
	return ""
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// str returns the string field key; ok is false when it is absent or null.
func (o catalogTool) str(key string) (s string, ok bool, reason string) {
	raw, present := o[key]
	if !present || isNull(raw) {
		return "", false, ""
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, fmt.Sprintf("%q is not a string", key)
	}
	return s, true, ""
}

func (o catalogTool) strs(key string) ([]string, string) {
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

func (o catalogTool) boolean(key string, dst *bool) string {
	raw, present := o[key]
	if !present || isNull(raw) {
		return ""
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Sprintf("%q is not a boolean", key)
	}
	return ""
}

// inputSchema returns the tool's compact input schema (nil for none) or
// why it is not acceptable.
func (p *catalogParser) inputSchema(obj catalogTool) (json.RawMessage, string) {
	key := "inputSchema"
	raw, ok := obj[key]
	if alt, hasAlt := obj["parameters"]; hasAlt {
		if ok && !isNull(raw) && !isNull(alt) {
			return nil, `both "inputSchema" and "parameters" are given`
		}
		if !ok || isNull(raw) {
			key, raw, ok = "parameters", alt, true
		}
	}
	if !ok || isNull(raw) {
		return nil, ""
	}
	if err := p.schemas.check(raw); err != nil {
		return nil, fmt.Sprintf("invalid %q: %s", key, strings.TrimPrefix(err.Error(), ErrInvalidSchema.Error()+": "))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Sprintf("%q: %v", key, err)
	}
	return buf.Bytes(), ""
}

// ErrInvalidSchema is wrapped by every error CheckInputSchema returns.
var ErrInvalidSchema = errors.New("tools: invalid input schema")

// CheckInputSchema reports whether schema is acceptable as a tool's input
// schema: a JSON object that compiles as a JSON Schema under the draft its
// "$schema" names (2020-12 when absent), whose "type", when present, is
// "object" (arguments are always an object). Patterns are compiled as
// ECMAScript regular expressions, as JSON Schema specifies; references to
// other documents are never fetched, so a schema that needs one is invalid.
// The error wraps ErrInvalidSchema and reads as one line.
func CheckInputSchema(schema json.RawMessage) error {
	return (*schemaChecker)(nil).check(schema)
}

// schemaChecker checks many input schemas with one compiler, so that the
// meta-schemas are compiled once rather than once per tool (a quarter less
// CPU). A schema that could see another tool's schema through the shared
// compiler (it declares an identifier, "$id", "id", "$anchor",
// "$dynamicAnchor", "$recursiveAnchor", or names the shared compiler's
// URLs) is checked alone, and so is one that fails, so that a failure is
// never an artifact of sharing. A nil *schemaChecker checks every schema
// alone. Not safe for concurrent use.
type schemaChecker struct {
	c *jsonschema.Compiler
	n int
}

func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	c.UseRegexpEngine(ecmaRegexp)
	return c
}

// aloneMarkers are byte strings that make a schema be checked alone: the
// keywords that identify a schema resource, and the URL prefix under which
// the shared compiler files the other tools' schemas.
var aloneMarkers = [][]byte{[]byte(`"$id"`), []byte(`"id"`), []byte(`"$anchor"`), []byte(`"$dynamicAnchor"`), []byte(`"$recursiveAnchor"`), []byte(schemaURL)}

func (sc *schemaChecker) check(schema json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return fmt.Errorf("%w: not valid JSON: %v", ErrInvalidSchema, err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: not a JSON object", ErrInvalidSchema)
	}
	if typ, ok := obj["type"]; ok && typ != "object" {
		return fmt.Errorf("%w: type is %s, want \"object\"", ErrInvalidSchema, compactJSON(typ))
	}
	shared := sc != nil
	for _, kw := range aloneMarkers {
		shared = shared && !bytes.Contains(schema, kw)
	}
	if shared {
		if sc.c == nil {
			sc.c = newCompiler()
		}
		sc.n++
		url := fmt.Sprintf("%s:%d", schemaURL, sc.n)
		if sc.c.AddResource(url, doc) == nil {
			if _, err := sc.c.Compile(url); err == nil {
				return nil
			}
		}
		// Report the failure as the schema alone gives it. The shared
		// compiler may hold a half-compiled resource now; start afresh.
		sc.c = nil
		doc, _ = jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	}
	c := newCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidSchema, oneLine(err.Error()))
	}
	if _, err := c.Compile(schemaURL); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidSchema, schemaReason(err))
	}
	return nil
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// schemaReason turns the compiler's multi-line error into one line that
// names the failing keyword.
func schemaReason(err error) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		if ve, ok := sve.Err.(*jsonschema.ValidationError); ok {
			leaf := ve
			for len(leaf.Causes) > 0 {
				leaf = leaf.Causes[0]
			}
			at := "/" + strings.Join(leaf.InstanceLocation, "/")
			return fmt.Sprintf("at %s: %s", at, oneLine(leaf.ErrorKind.LocalizedString(englishPrinter)))
		}
	}
	return strings.ReplaceAll(oneLine(err.Error()), schemaURL, "schema")
}

var englishPrinter = message.NewPrinter(language.English)

// schemaURL names the schema being checked inside the compiler.
const schemaURL = "urn:toolgate:input-schema"

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("reference to %s is not fetched", url)
}

type ecmaRegexpAdapter struct{ re *regexp2.Regexp }

func (r ecmaRegexpAdapter) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return ok && err == nil
}

func (r ecmaRegexpAdapter) String() string { return r.re.String() }

func ecmaRegexp(s string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(s, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	return ecmaRegexpAdapter{re}, nil
}

// maxSummaryWords bounds a summary derived from a description, so that a
// card stays within its 30–50 token budget.
const maxSummaryWords = 30

// FirstSentence returns the first sentence of a description, as a card
// summary: text up to the first '.', '!' or '?' followed by white space (or
// the end), or up to the first line break, whichever is first. A sentence
// that is a question or has fewer than three words ("Planning something
// outdoors?") is a lead-in, so the next sentence is kept too. Runs of white
// space collapse to one space; a result over 30 words is cut at 30 words
// and ends with "…". Periods in common abbreviations ("e.g.", "i.e.",
// "etc.", "vs.") and in single-letter initials do not end a sentence.
func FirstSentence(desc string) string {
	desc = strings.TrimSpace(desc)
	if i := strings.IndexAny(desc, "\r\n"); i >= 0 {
		desc = desc[:i]
	}
	end := len(desc)
	for i := 0; i < len(desc); i++ {
		c := desc[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		if i+1 < len(desc) && desc[i+1] != ' ' && desc[i+1] != '\t' {
			continue
		}
		if c == '.' && isAbbreviation(desc[:i]) {
			continue
		}
		if c == '?' || len(strings.Fields(desc[:i])) < 3 {
			continue // a lead-in: keep the next sentence too
		}
		end = i + 1
		break
	}
	words := strings.Fields(desc[:end])
	if len(words) > maxSummaryWords {
		return strings.Join(words[:maxSummaryWords], " ") + "…"
	}
	return strings.Join(words, " ")
}

func isAbbreviation(before string) bool {
	word := before[strings.LastIndexAny(before, " \t(")+1:]
	switch strings.ToLower(word) {
	case "e.g", "i.e", "etc", "vs", "approx", "incl", "no", "dr", "mr", "mrs", "ms", "st":
		return true
	}
	r, size := utf8.DecodeRuneInString(word)
	return size == len(word) && unicode.IsLetter(r) // an initial: "J. Smith"
}
