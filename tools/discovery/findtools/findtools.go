// Package findtools is the find_tools protocol tool, written once for every
// facade that offers it: the agent loop (package runtime) shows it to the
// model beside the shortlist, and the MCP facade (runtime/mcpserver) shows
// it to MCP clients. Both answer it here, on the caller's authorized view:
//
//	query, err := findtools.ParseArguments(call.Arguments)
//	res, err := findtools.Search(ctx, disc, view, query, &findtools.Options{K: 5})
//	body := findtools.Answer(res.Tools, func(t *tools.Tool) string { return t.ID }, "")
//
// A query is either what the caller needs in a few words (a discovery
// search over the view) or "select:a,b" to load tools by name. Names are
// resolved by Lookup: a tool ID, or a bare name that exactly one tool of
// the caller's tenant has (whatever its scopes, so that a name resolves
// alike for every caller). Everything here works on a [*tools.View], so a tool the
// caller may not use can be neither found nor selected, and a name that
// exists but is not authorized is answered exactly like one that does not
// exist (docs/design.md invariant 1).
package findtools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// Name is the tool's name, the same for models and MCP clients.
const Name = "find_tools"

// Description is the tool's description, shown with Schema.
const Description = "Find the tools you may use for a task when none of the listed tools fits. " +
	"Give what you need in a few words, or select:<name> to load a tool by name. " +
	"Returns tool names with one-line descriptions; found tools can be called from then on."

// DeferredDescription is the tool's description in deferred loading
// (runtime.Options.Deferred), where no tool is listed up front: every
// tool the caller may use is loaded by a search. It names neither the
// tool nor the listed tools, since an API may show the search under a
// name of its own (OpenAI Responses' tool_search).
const DeferredDescription = "Search the tools you may use for a task: give what you need in a few words, or select:<name> to load a tool by name. " +
	"Returns the tools found, with one-line descriptions; they can be called from then on."

// Schema is the JSON Schema of the tool's arguments. It is valid in
// OpenAI's strict form as it is.
var Schema = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What you need to do, in a few words, or select:<name> to load a tool by name."}},"required":["query"],"additionalProperties":false}`)

// MaxQueryBytes bounds a query: longer ones are refused by [ParseArguments].
const MaxQueryBytes = 2048

// MaxSelect bounds the names of one "select:" query.
const MaxSelect = 16

// selectPrefix starts a query that loads tools by name.
const selectPrefix = "select:"

// ErrArguments is wrapped by [ParseArguments] for arguments that do not match
// Schema; the message says what is wrong, for the model to correct.
var ErrArguments = errors.New(`find_tools needs {"query": "..."}`)

// ParseArguments returns the query of a find_tools call. The arguments must
// be exactly Schema's object: a "query" string that is not blank and at
// most [MaxQueryBytes] long, no other member, no member twice.
func ParseArguments(args json.RawMessage) (string, error) {
	v, err := jcs.Parse(args)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrArguments, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("%w: the arguments are not an object", ErrArguments)
	}
	for k := range obj {
		if k != "query" {
			return "", fmt.Errorf("%w: unknown member %q", ErrArguments, k)
		}
	}
	q, ok := obj["query"].(string)
	if !ok {
		return "", fmt.Errorf("%w: query must be a string", ErrArguments)
	}
	if err := CheckQuery(q); err != nil {
		return "", err
	}
	return q, nil
}

// CheckQuery refuses a blank query, one over [MaxQueryBytes], and one with
// no letter or digit in it (`{`, `???`: nothing a search can match; a weak
// model writing JSON into the query string does this), wrapping
// [ErrArguments]. [ParseArguments] calls it; a facade that receives the query
// another way (the turn envelope's find_tools action) calls it itself.
func CheckQuery(q string) error {
	switch {
	case strings.TrimSpace(q) == "":
		return fmt.Errorf("%w: query is empty", ErrArguments)
	case len(q) > MaxQueryBytes:
		return fmt.Errorf("%w: query is %d bytes, at most %d are allowed", ErrArguments, len(q), MaxQueryBytes)
	case !strings.ContainsFunc(q, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }):
		return fmt.Errorf("%w: query has no words: describe the tool you need in words", ErrArguments)
	}
	return nil
}

// Options configures Search. Nil means defaults.
type Options struct {
	// K is the number of tools a discovery search returns. Zero means 5.
	K int
	// Alias, if set, maps a name the caller's session has shown (the
	// runtime's model-facing names, mcp serve's first-class names) to the
	// ID it is bound to. A name it maps stands for that tool alone: when
	// the view no longer has it, the name is missing, never resolved to
	// another tool. Lookup's rules apply to the names it does not map.
	Alias func(name string) (id string, ok bool)
	// Session, if set, goes to the discovery log with the search (or the
	// tools a select: loaded), so a later call can be linked to it
	// ([discovery.Misses]).
	Session string
}

// Result is what a find_tools query found.
type Result struct {
	// Tools are the tools found, best first (for a search) or in the order
	// named (for select:), each once. All are in the view. A search that
	// matched nothing finds none ([Answer] then says to rephrase).
	Tools []*tools.Tool
	// Selected reports a select: query.
	Selected bool
	// Missing are the names of a select: query that matched no authorized
	// tool, in the order given.
	Missing []string
	// Ambiguous are the bare names of a select: query that several tools
	// of the tenant share, which load none (a name resolves alike for
	// every caller, docs/design.md invariant 8), each with the tools of
	// them the caller may use (at least one, at most [MaxSelect]), so that
	// the model can select the one it means by its own name.
	Ambiguous []Ambiguity
}

// Ambiguity is a bare name of a select: query that several tools share.
type Ambiguity struct {
	Name  string
	Tools []*tools.Tool
}

// Search answers query on view: a discovery search for the K best tools,
// or "select:a,b" for the tools those names resolve to (at most [MaxSelect]
// names). The error is the discoverer's (the view's index could not be
// built, ctx ended).
func Search(ctx context.Context, disc *discovery.Discoverer, view *tools.View, query string, opts *Options) (*Result, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.K <= 0 {
		o.K = 5
	}
	res := &Result{}
	if sel, ok := strings.CutPrefix(strings.TrimSpace(query), selectPrefix); ok {
		res.Selected = true
		names := strings.Split(sel, ",")
		if len(names) > MaxSelect {
			names = names[:MaxSelect]
		}
		for _, name := range names {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			t, err := lookup(view, name, o.Alias)
			var amb *AmbiguousError
			switch {
			case errors.As(err, &amb):
				a := Ambiguity{Name: name}
				for _, id := range amb.Candidates[:min(len(amb.Candidates), MaxSelect)] {
					if t, ok := view.Get(id); ok {
						a.Tools = append(a.Tools, t)
					}
				}
				res.Ambiguous = append(res.Ambiguous, a)
				continue
			case err != nil:
				res.Missing = append(res.Missing, name)
				continue
			}
			if !slices.Contains(res.Tools, t) {
				res.Tools = append(res.Tools, t)
			}
		}
		out := discovery.Outcome{Session: o.Session, Source: discovery.SourceSelect, Query: query}
		for _, t := range res.Tools {
			out.Tools = append(out.Tools, t.ID)
		}
		disc.RecordOutcome(ctx, view, out)
		return res, nil
	}
	sl, err := disc.Shortlist(ctx, view, discovery.Request{Query: query, K: o.K, Session: o.Session, Source: discovery.SourceFindTools})
	if err != nil {
		return nil, err
	}
	for _, c := range sl.Candidates {
		res.Tools = append(res.Tools, c.Tool)
	}
	return res, nil
}

// ErrNotFound is returned by Lookup for a name no authorized tool has. It
// is also the answer for a tool that exists but is not authorized, so the
// caller learns nothing about tools it may not use.
var ErrNotFound = errors.New("findtools: no such tool")

// AmbiguousError is returned by Lookup for a bare name that several tools
// of the caller's tenant share. Candidates are the IDs of those the caller
// may use (at least one); the others are never named.
type AmbiguousError struct {
	Name       string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("findtools: %q names several tools; use the ID of one of yours: %s", e.Name, strings.Join(e.Candidates, ", "))
}

// Lookup resolves name on view ([tools.View.Resolve]): a tool ID, or a
// bare name that exactly one tool of the view's tenant has, whatever its
// scopes, so that a name resolves alike for every caller (docs/design.md
// invariant 8). It returns [ErrNotFound] (also for a name only tools the
// caller may not use have) or an [*AmbiguousError].
func Lookup(view *tools.View, name string) (*tools.Tool, error) {
	return lookup(view, name, nil)
}

func lookup(view *tools.View, name string, alias func(string) (string, bool)) (*tools.Tool, error) {
	if alias != nil {
		if id, ok := alias(name); ok {
			if t, ok := view.Get(id); ok {
				return t, nil
			}
			return nil, ErrNotFound
		}
	}
	t, ids := view.Resolve(name)
	switch {
	case t != nil:
		return t, nil
	case len(ids) == 0:
		return nil, ErrNotFound
	}
	return nil, &AmbiguousError{Name: name, Candidates: ids}
}

// Found is one tool of an Answer.
type Found struct {
	Name         string `json:"name"`
	Summary      string `json:"summary"`
	ReadOnly     bool   `json:"read_only,omitempty"`
	Irreversible bool   `json:"irreversible,omitempty"`
}

// NoMatchNote is the note of a search that found no tool: the request
// matched no tool the caller may use ([discovery.Shortlist.Candidates]),
// and the model is told to rephrase rather than left to guess.
const NoMatchNote = "No tool matches this query. Rephrase it: say in other words what you need to do " +
	"(the action and what it acts on), or answer without a tool."

// AmbiguousNote is the note of an answer whose select: named a bare name
// several tools share ([Result.Ambiguous]).
const AmbiguousNote = "Each name under \"ambiguous\" is shared by several tools, so none was loaded: select the one you mean by the name listed for it."

// Answer renders found tools as the tool's result:
// {"tools":[{"name","summary","read_only"?,"irreversible"?}],"missing"?,"ambiguous"?:{NAME:[names]},"note"?}.
// name gives the name the caller is to call each tool by. A search that
// found nothing gets [NoMatchNote] as its note instead of note; a select:
// with an ambiguous name gets [AmbiguousNote] after note.
func Answer(res *Result, name func(*tools.Tool) string, note string) string {
	if !res.Selected && len(res.Tools) == 0 {
		note = NoMatchNote
	}
	out := struct {
		Tools     []Found             `json:"tools"`
		Missing   []string            `json:"missing,omitempty"`
		Ambiguous map[string][]string `json:"ambiguous,omitempty"`
		Note      string              `json:"note,omitempty"`
	}{Tools: make([]Found, 0, len(res.Tools)), Missing: res.Missing, Note: note}
	for _, t := range res.Tools {
		out.Tools = append(out.Tools, Found{Name: name(t), Summary: t.Card.Summary, ReadOnly: t.Card.ReadOnly, Irreversible: t.Card.Irreversible})
	}
	for _, a := range res.Ambiguous {
		if out.Ambiguous == nil {
			out.Ambiguous = map[string][]string{}
			if out.Note != "" && !strings.HasSuffix(out.Note, ".") {
				out.Note += "."
			}
			out.Note = strings.TrimSpace(out.Note + " " + AmbiguousNote)
		}
		for _, t := range a.Tools {
			out.Ambiguous[a.Name] = append(out.Ambiguous[a.Name], name(t))
		}
	}
	body, _ := json.Marshal(out) // strings and booleans only: it cannot fail
	return string(body)
}
