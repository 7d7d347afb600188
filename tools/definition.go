package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Definition is a tool as its author states it: a catalog file's tool
// object, an MCP server's tools/list entry, a Go function's metadata.
// Define turns it into a [Tool], deriving the capability card (summary, risk)
// by one set of rules whatever the source. The json tags are the catalog
// file's member names (docs/catalogs.md).
type Definition struct {
	// Name is the tool's bare name; the Tool's ID is "<namespace>/<Name>".
	// Required; no control characters.
	Name string `json:"name"`
	// Title is an optional display name (MCP "title").
	Title string `json:"title,omitempty"`
	// Description is the author's full description. The card's summary is
	// its first sentence ([FirstSentence]) when Summary is empty, and the
	// title's when both are.
	Description string `json:"description,omitempty"`
	// Summary is the card's one-sentence summary, in the user's words.
	Summary string `json:"summary,omitempty"`
	// InputSchema is the JSON Schema of the arguments object; nil means an
	// object with no declared properties. It must pass [CheckInputSchema].
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Scopes are all required to use the tool; none means no scope is
	// needed. An empty or blank scope is an error.
	Scopes []string `json:"scopes,omitempty"`
	// Aliases are phrases users say for the capability.
	Aliases []string `json:"aliases,omitempty"`
	// NotFor says when not to use the tool, naming the sibling instead.
	NotFor string `json:"not_for,omitempty"`
	// Tags are free-form keywords.
	Tags []string `json:"tags,omitempty"`
	// Group is the workflow group ("payments").
	Group string `json:"group,omitempty"`
	// Tenants restricts the tool to these tenants; none means every tenant.
	Tenants []string `json:"tenants,omitempty"`
	// ReadOnly, Irreversible, Idempotent and OpenWorld state the card's risk
	// flags explicitly; Annotations may add to them. ReadOnly together with
	// Irreversible is an error.
	ReadOnly     bool `json:"read_only,omitempty"`
	Irreversible bool `json:"irreversible,omitempty"`
	Idempotent   bool `json:"idempotent,omitempty"`
	OpenWorld    bool `json:"open_world,omitempty"`
	// Annotations are MCP's behaviour hints; nil means none.
	Annotations *Annotations `json:"annotations,omitempty"`
}

// Annotations are the MCP tool annotations that bear on risk. Define reads
// them as: ReadOnlyHint → read-only, DestructiveHint → irreversible unless
// the tool is read-only (MCP gives the hint meaning only when readOnlyHint
// is false), IdempotentHint → idempotent, OpenWorldHint → open world.
//
// The fields are what a tool's annotations say once read: a catalog file
// or an MCP server whose tool has an annotations object without
// destructiveHint gets DestructiveHint true, MCP's default for it (a
// server that says readOnlyHint false and nothing more has said the tool
// may destroy), and every other absent hint false. A tool without
// annotations has no hints (nil): its risk is its own flags, or an
// operator's override.
type Annotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint,omitempty"`
	DestructiveHint bool `json:"destructiveHint,omitempty"`
	IdempotentHint  bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   bool `json:"openWorldHint,omitempty"`
}

// DefinitionField names the member of a [Definition] that a
// [DefinitionError] is about, by its catalog name.
type DefinitionField string

// The members a [DefinitionError] can name.
const (
	FieldName        DefinitionField = "name"
	FieldInputSchema DefinitionField = "inputSchema"
	FieldScopes      DefinitionField = "scopes"
	FieldReadOnly    DefinitionField = "read_only"
	FieldID          DefinitionField = "id"
)

// DefinitionError is why a [Definition] cannot become a [Tool]. It wraps
// [ErrInvalidTool], and Err (which wraps [ErrInvalidSchema]) when the input
// schema is at fault.
type DefinitionError struct {
	// Name is the definition's name as given.
	Name string
	// Field is the member at fault, by its catalog name.
	Field DefinitionField
	// Reason says what is wrong, naming the member ("\"scopes\" holds an
	// empty scope").
	Reason string
	// Err is the underlying error, if any (CheckInputSchema's).
	Err error
}

// Error reads "tools: invalid tool "NAME": REASON".
func (e *DefinitionError) Error() string {
	return fmt.Sprintf("%v %q: %s", ErrInvalidTool, e.Name, e.Reason)
}

// Unwrap returns [ErrInvalidTool] and Err.
func (e *DefinitionError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidTool}
	}
	return []error{ErrInvalidTool, e.Err}
}

// Define turns def into the [Tool] with ID "<namespace>/<def.Name>". Text
// fields are trimmed of surrounding white space; the card's summary is
// def.Summary, else FirstSentence(def.Description), else the title's; the
// risk flags are the explicit ones joined with the annotations' (see
// [Annotations]), and a read-only tool is never irreversible. The input
// schema is checked with [CheckInputSchema] and stored compact (member
// order kept). Every error is
// a *[DefinitionError] or, for an invalid namespace, an error wrapping
// [ErrInvalidTool]. The Tool has no [Handler]; the caller sets one.
func Define(namespace string, def Definition) (Tool, error) {
	return define(namespace, def, nil)
}

// DefineAll defines every definition as [Define] does and returns one result
// per definition, in order: tools[i] is the [Tool] of defs[i] when errs[i] is
// nil. It compiles the input schemas with a shared JSON Schema compiler
// (replaced every 512 schemas, so that memory stays bounded), which takes
// a quarter less CPU than Define in a loop, and does not compile again a
// schema byte-identical to one that passed earlier in defs (the tools of
// such a schema share one compact copy of it, which they must not modify);
// a schema is never resolved against another's (see [CheckInputSchema]).
// The tools' strings and compact schemas are cut from blocks of 32 KiB
// that they share (a tool kept alone keeps its blocks), none of which may
// be written. The results are those of [Define], one definition at a
// time. A long defs is cut into parts defined in parallel, one per CPU
// ([runtime.GOMAXPROCS]), each with its own compiler: a schema repeated
// across parts is then checked once per part, and its tools share one
// copy per part.
func DefineAll(namespace string, defs []Definition) ([]Tool, []error) {
	ts := make([]Tool, len(defs))
	errs := make([]error, len(defs))
	parts := min(runtime.GOMAXPROCS(0), len(defs)/defineAllPart)
	if parts <= 1 {
		defineRange(namespace, defs, ts, errs)
		return ts, errs
	}
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(defs)/parts, (p+1)*len(defs)/parts
		wg.Go(func() { defineRange(namespace, defs[lo:hi], ts[lo:hi], errs[lo:hi]) })
	}
	wg.Wait()
	return ts, errs
}

// defineAllPart is the fewest definitions [DefineAll] gives a goroutine of
// their own: a few milliseconds of work.
const defineAllPart = 2048

func defineRange(namespace string, defs []Definition, ts []Tool, errs []error) {
	var df definer
	for i, d := range defs {
		ts[i], errs[i] = define(namespace, d, &df)
	}
}

// definer is what [DefineAll] shares across the definitions of one part:
// the schema checker, which also cuts the compact schemas from its blocks,
// and the blocks the tools' strings are cut from (see chunks).
type definer struct {
	sc   schemaChecker
	text chunks
}

// str returns s, a copy of it cut from df's blocks when df is not nil.
func (df *definer) str(s string) string {
	if df == nil {
		return s
	}
	return df.text.string(s)
}

// define is [Define] with the state of [DefineAll]'s part, or nil.
func define(namespace string, def Definition, df *definer) (Tool, error) {
	var sc *schemaChecker
	if df != nil {
		sc = &df.sc
	}
	if err := CheckNamespace(namespace); err != nil {
		return Tool{}, fmt.Errorf("%w: %v", ErrInvalidTool, err)
	}
	name := def.Name
	fail := func(field DefinitionField, format string, args ...any) (Tool, error) {
		return Tool{}, &DefinitionError{Name: name, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case strings.TrimSpace(name) == "":
		return fail(FieldName, `"name" is empty`)
	}
	if err := checkName(name); err != nil {
		return fail(FieldName, "%v", err)
	}
	for _, s := range def.Scopes {
		if strings.TrimSpace(s) == "" {
			return fail(FieldScopes, `"scopes" holds an empty scope`)
		}
	}
	var id string
	if df != nil {
		id = df.text.string(namespace, "/", name)
	} else {
		id = namespace + "/" + name
	}
	t := Tool{
		ID:          id,
		Title:       df.str(strings.TrimSpace(def.Title)),
		Description: df.str(strings.TrimSpace(def.Description)),
		Tenants:     def.Tenants,
		Card: Card{
			// The name shares the ID's bytes: at 100,000 tools a copy
			// each held 4.6 MiB.
			Name:    id[len(namespace)+1:],
			Summary: strings.TrimSpace(def.Summary),
			Scopes:  def.Scopes,
			Aliases: def.Aliases,
			NotFor:  df.str(strings.TrimSpace(def.NotFor)),
			Tags:    def.Tags,
			Group:   df.str(strings.TrimSpace(def.Group)),
		},
	}
	if !deriveRisk(def, &t.Card) {
		return fail(FieldReadOnly, `"read_only" and "irreversible" contradict each other`)
	}
	if t.Card.Summary == "" {
		t.Card.Summary = FirstSentence(t.Description)
	}
	if t.Card.Summary == "" {
		t.Card.Summary = FirstSentence(t.Title) // a model is shown something
	}
	// A summary that begins the description (a derived one mostly does)
	// shares its bytes.
	if d := t.Description; strings.HasPrefix(d, t.Card.Summary) {
		t.Card.Summary = d[:len(t.Card.Summary)]
	} else {
		t.Card.Summary = df.str(t.Card.Summary)
	}
	if len(def.InputSchema) > 0 && !bytes.Equal(bytes.TrimSpace(def.InputSchema), []byte("null")) {
		c, err := sc.compact(def.InputSchema)
		if err != nil {
			return Tool{}, &DefinitionError{Name: name, Field: FieldInputSchema,
				Reason: "invalid \"inputSchema\": " + SchemaReason(err), Err: err}
		}
		t.InputSchema = c
	}
	// The schema, if any, is a checked JSON object: only the rest needs
	// validating.
	if err := t.validateCard(); err != nil {
		return Tool{}, &DefinitionError{Name: name, Field: FieldID, Reason: strings.TrimPrefix(err.Error(), ErrInvalidTool.Error()+" "), Err: err}
	}
	return t, nil
}

// SchemaReason returns the text of a [CheckInputSchema] error without its
// "tools: invalid input schema: " prefix, for messages that name the
// schema themselves.
func SchemaReason(err error) string {
	return strings.TrimPrefix(err.Error(), ErrInvalidSchema.Error()+": ")
}

// deriveRisk fills the card's risk flags from def and reports false when
// they contradict each other (read-only and explicitly irreversible).
func deriveRisk(def Definition, c *Card) bool {
	c.ReadOnly, c.Irreversible, c.Idempotent, c.OpenWorld = def.ReadOnly, def.Irreversible, def.Idempotent, def.OpenWorld
	if a := def.Annotations; a != nil {
		c.ReadOnly = c.ReadOnly || a.ReadOnlyHint
		c.Idempotent = c.Idempotent || a.IdempotentHint
		c.OpenWorld = c.OpenWorld || a.OpenWorldHint
		if a.DestructiveHint && !c.ReadOnly {
			c.Irreversible = true
		}
	}
	if c.ReadOnly && def.Irreversible {
		return false
	}
	if c.ReadOnly {
		c.Irreversible = false
	}
	return true
}

// ErrInvalidNamespace is wrapped by CheckNamespace's errors.
var ErrInvalidNamespace = errors.New("invalid namespace")

// CheckNamespace reports whether ns may be a tool ID's namespace: a letter
// or digit, then up to 63 letters, digits, '_', '.' or '-'.
func CheckNamespace(ns string) error {
	if !namespacePattern.MatchString(ns) {
		return fmt.Errorf("%w %q: must match %s", ErrInvalidNamespace, ns, namespacePattern)
	}
	return nil
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
