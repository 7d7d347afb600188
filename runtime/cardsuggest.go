package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/cards"
)

// suggestTool is the one tool the card-suggestion call may "call": its
// arguments are the proposed overlay entry.
const suggestTool = "write_card"

const suggestSchema = `{"type":"object","properties":{` +
	`"aliases":{"type":"array","items":{"type":"string","maxLength":80},"minItems":1,"maxItems":5},` +
	`"examples":{"type":"array","items":{"type":"string","maxLength":200},"minItems":3,"maxItems":5},` +
	`"not_for":{"type":"string","maxLength":200}},` +
	`"required":["aliases","examples","not_for"],"additionalProperties":false}`

// ErrSuggestion is wrapped when the model's card suggestion is unusable.
var ErrSuggestion = errors.New("runtime: unusable card suggestion")

// SuggestOptions configures [SuggestCard]. A nil *SuggestOptions means defaults.
type SuggestOptions struct {
	// Langs are the languages of the example requests ("en", "es", "pl").
	// Nil means English only.
	Langs []string
	// Mode constrains the reply: [llm.ModeEnvelope] (zero: structured
	// output), [llm.ModeGrammar] (GBNF) or [llm.ModeNative] (a strict tool).
	Mode llm.Mode
	// Timeout bounds one suggestion. Zero means 60s.
	Timeout time.Duration
	// Names are the catalog's tool names or IDs. A suggested alias that
	// reads as one of them other than the tool's own (compared by their
	// letters and digits, case-folded: "merge pull request" is
	// merge_pull_request) is dropped, since it would steer requests for
	// that tool to this one. The sibling's name is always such a name.
	Names []string
}

// Bounds of a suggestion, as suggestSchema states them (in code points).
const (
	suggestMaxAlias   = 80
	suggestMaxExample = 200
	suggestMaxNotFor  = 200
)

// SuggestCard asks the model for an overlay entry for t: 1–5 aliases, 3–5
// example requests in the users' words, and a not_for naming sibling (the
// nearest other tool, from lint; empty when there is none). The reply is
// constrained to a call of one tool whose arguments are that entry, then
// validated, since not every backend enforces every bound of a constraint
// (OpenAI's strict mode drops maxLength): counts, lengths, text, and a
// not_for that names the sibling as a word of its own. Aliases that name
// another tool (the sibling, or one of [SuggestOptions.Names]) are dropped;
// a reply left with none is unusable. A tool whose card has a not_for
// keeps it: the entry then has none. The entry carries t's hash
// ([cards.Hash]). The model is shown t's name and description and the
// sibling's name only (its ID when the bare name is t's own, or another
// tool's of [SuggestOptions.Names]).
func SuggestCard(ctx context.Context, backend llm.Backend, t *tools.Tool, sibling string, opts *SuggestOptions) (cards.Entry, error) {
	var o SuggestOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout < 0 {
		return cards.Entry{}, fmt.Errorf("runtime: SuggestOptions.Timeout %v is negative", o.Timeout)
	}
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	if len(o.Langs) == 0 {
		o.Langs = []string{"en"}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	label := siblingLabel(t, sibling, o.Names)
	req, err := suggestRequest(t, label, o)
	if err != nil {
		return cards.Entry{}, err
	}
	resp, err := backend.Chat(ctx, req)
	if err != nil {
		return cards.Entry{}, fmt.Errorf("runtime: suggest %s: %w", t.ID, err)
	}
	if resp.Action != llm.ActionCall || len(resp.Calls) != 1 || resp.Calls[0].Name != suggestTool {
		return cards.Entry{}, fmt.Errorf("%w for %s: the reply is not a %s call", ErrSuggestion, t.ID, suggestTool)
	}
	var got struct {
		Aliases  []string `json:"aliases"`
		Examples []string `json:"examples"`
		NotFor   string   `json:"not_for"`
	}
	dec := json.NewDecoder(strings.NewReader(string(resp.Calls[0].Arguments)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		return cards.Entry{}, fmt.Errorf("%w for %s: %v", ErrSuggestion, t.ID, err)
	}
	switch {
	case len(got.Aliases) < 1 || len(got.Aliases) > 5:
		return cards.Entry{}, fmt.Errorf("%w for %s: %d aliases, want 1–5", ErrSuggestion, t.ID, len(got.Aliases))
	case len(got.Examples) < 3 || len(got.Examples) > 5:
		return cards.Entry{}, fmt.Errorf("%w for %s: %d examples, want 3–5", ErrSuggestion, t.ID, len(got.Examples))
	case label != "" && !namesWord(got.NotFor, label):
		return cards.Entry{}, fmt.Errorf("%w for %s: not_for %q does not name %s", ErrSuggestion, t.ID, got.NotFor, label)
	}
	for _, b := range []struct {
		field string
		texts []string
		max   int
	}{{"alias", got.Aliases, suggestMaxAlias}, {"example", got.Examples, suggestMaxExample}, {"not_for", []string{got.NotFor}, suggestMaxNotFor}} {
		for _, text := range b.texts {
			if n := utf8.RuneCountInString(text); n > b.max {
				return cards.Entry{}, fmt.Errorf("%w for %s: %s of %d characters, at most %d", ErrSuggestion, t.ID, b.field, n, b.max)
			}
		}
	}
	taken := map[string]bool{}
	if sibling != "" {
		taken[nameKey(siblingName(sibling))] = true
	}
	for _, n := range o.Names {
		taken[nameKey(siblingName(n))] = true
	}
	delete(taken, nameKey(t.Name()))
	aliases := got.Aliases[:0]
	for _, a := range got.Aliases {
		if !taken[nameKey(a)] {
			aliases = append(aliases, a)
		}
	}
	if len(aliases) == 0 {
		return cards.Entry{}, fmt.Errorf("%w for %s: every alias names another tool (%q)", ErrSuggestion, t.ID, got.Aliases)
	}
	e := cards.Entry{Tool: t.ID, Hash: cards.Hash(t), Aliases: aliases, Examples: got.Examples, NotFor: got.NotFor}
	if t.Card.NotFor != "" {
		// An overlay's not_for replaces the card's: keep the one the
		// tool's owner (or a team overlay) wrote.
		e.NotFor = ""
	}
	if _, err := cards.New([]cards.Entry{e}); err != nil {
		return cards.Entry{}, fmt.Errorf("%w for %s: %v", ErrSuggestion, t.ID, err)
	}
	return e, nil
}

// nameKey is a tool name or phrase by its letters and digits, case-folded:
// "Merge pull-request" and merge_pull_request have one key.
func nameKey(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}

// namesWord reports whether text holds name not inside a longer identifier
// ("use query" names query; "use queries" and "use query_plan" do not).
func namesWord(text, name string) bool {
	isIdent := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	for i := 0; name != ""; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if (start == 0 || !isIdent(before)) && (end == len(text) || !isIdent(after)) {
			return true
		}
		i = start + 1
	}
	return false
}

// siblingLabel is how the model is told of sibling, and how its not_for
// must name it: the bare name, or the ID when the bare name is t's own
// (github/create_issue's nearest is often gitlab/create_issue) or another
// tool's of names too, so that "use create_issue" cannot pass for naming it.
func siblingLabel(t *tools.Tool, sibling string, names []string) string {
	if sibling == "" {
		return ""
	}
	name := siblingName(sibling)
	if name == t.Name() {
		return sibling
	}
	for _, n := range names {
		if strings.Contains(n, "/") && n != sibling && siblingName(n) == name {
			return sibling
		}
	}
	return name
}

func siblingName(id string) string {
	if _, name, ok := strings.Cut(id, "/"); ok {
		return name
	}
	return id
}

// suggestRequest is the constrained request for one tool; sibling is its
// label (siblingLabel).
func suggestRequest(t *tools.Tool, sibling string, o SuggestOptions) (*llm.Request, error) {
	desc := t.Description
	if desc == "" {
		desc = t.Card.Summary
	}
	var user strings.Builder
	fmt.Fprintf(&user, "Tool: %s\nDescription: %s\n", t.Name(), oneLine(desc, 600))
	if sibling != "" {
		fmt.Fprintf(&user, "Sibling: %s\n", sibling)
	}
	fmt.Fprintf(&user, "Languages: %s\n", strings.Join(o.Langs, ", "))
	sys := "You help users find software tools. For the tool below, call " + suggestTool + " with: aliases, 1 to 5 short phrases users say for what it does; " +
		"examples, 3 to 5 requests a user would type to an assistant that need exactly this tool, in the languages listed, in everyday words (not the tool's name); " +
		"not_for, one sentence saying when not to use it"
	if sibling != "" {
		sys += ", naming the sibling tool to use instead by its exact name"
	}
	sys += "."
	req := &llm.Request{
		Messages:  []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: user.String()}},
		MaxTokens: 400,
		Tools:     []llm.ToolSpec{{Name: suggestTool, Description: "Write the card.", Parameters: []byte(suggestSchema)}},
	}
	env := []grammar.EnvelopeTool{{Name: suggestTool, Schema: []byte(suggestSchema)}}
	gopts := &grammar.Options{NoAnswer: true, NoFindTools: true}
	switch o.Mode {
	case llm.ModeEnvelope:
		schema, _, err := grammar.EnvelopeSchema(env, gopts)
		if err != nil {
			return nil, fmt.Errorf("runtime: suggestion schema: %w", err)
		}
		req.Constraint = llm.Constraint{Mode: llm.ModeEnvelope, EnvelopeSchema: schema}
	case llm.ModeGrammar:
		res, err := grammar.Envelope(env, gopts)
		if err != nil {
			return nil, fmt.Errorf("runtime: suggestion grammar: %w", err)
		}
		req.Constraint = llm.Constraint{Mode: llm.ModeGrammar, GBNF: res.GBNF}
	case llm.ModeNative:
		strict, _, err := grammar.OpenAIStrict([]byte(suggestSchema))
		if err != nil {
			return nil, fmt.Errorf("runtime: suggestion schema: %w", err)
		}
		req.Constraint = llm.Constraint{Mode: llm.ModeNative}
		req.Tools[0].StrictParameters = strict
	default:
		return nil, fmt.Errorf("runtime: SuggestOptions.Mode %v is unknown", o.Mode)
	}
	return req, nil
}

// oneLine collapses s's white space and cuts it to at most n bytes, at a
// character boundary.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return s
}
