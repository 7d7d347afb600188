package lint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/analysis"
)

// repeatCap is how many times discovery counts a term in one field of a
// card (its per-field saturation): the repeats beyond it buy nothing.
const repeatCap = 2

// keywordListItems is how many off-topic items of a card's keyword lists
// ([discovery.OffTopicLists]) make a keyword-list finding.
const keywordListItems = 3

// poisoning returns the findings of the catalog-poisoning kinds that skip
// does not leave out: names-other-tool, repeated-text, keyword-list,
// alias-flood, long-text and instructions, by tool in snap's order.
func poisoning(snap *tools.Snapshot, o Options, skip func(Kind) bool) ([]Finding, error) {
	var out []Finding
	var named, listed [][]string
	var spelled []string
	if !skip(NamesOtherTool) {
		named = discovery.NamedTools(snap)
		spelled = spelledTools(snap)
	}
	if !skip(KeywordList) {
		listed = discovery.OffTopicLists(snap, o.Analyzer)
	}
	for i, t := range snap.Tools() {
		if spelled != nil && spelled[i] != "" {
			out = append(out, Finding{Tool: t.ID, Kind: NamesOtherTool, Other: spelled[i],
				Message: fmt.Sprintf("its name spells %s, a tool of another server, with the server's name in it: a model or a person reading the name takes it for that tool; name it for what it does", spelled[i])})
		}
		if named != nil {
			for _, other := range named[i] {
				out = append(out, Finding{Tool: t.ID, Kind: NamesOtherTool, Other: other,
					Message: fmt.Sprintf("names %s, a tool of another server, as an identifier: discovery does not index the name for this tool; describe what it does in its own words", other)})
			}
		}
		if !skip(RepeatedText) {
			if msg := repeated(o, t); msg != "" {
				out = append(out, Finding{Tool: t.ID, Kind: RepeatedText, Message: msg})
			}
		}
		if listed != nil && len(listed[i]) >= keywordListItems {
			out = append(out, Finding{Tool: t.ID, Kind: KeywordList, Message: keywordList(listed[i])})
		}
		if n := len(t.Card.Aliases); !skip(AliasFlood) && n > o.MaxAliases {
			out = append(out, Finding{Tool: t.ID, Kind: AliasFlood,
				Message: fmt.Sprintf("%d aliases, over %d: keep the two or three phrases users say most", n, o.MaxAliases)})
		}
		if !skip(LongText) && t.Description != "" {
			n, err := tokens.Count(t.Description)
			if err != nil {
				return nil, err
			}
			if n > o.MaxTextTokens {
				out = append(out, Finding{Tool: t.ID, Kind: LongText, Tokens: n,
					Message: fmt.Sprintf("description is %d tokens, over %d: a model reads it on every turn that shortlists the tool; cut it to what the tool does", n, o.MaxTextTokens)})
			}
		}
		if !skip(Instructions) {
			out = append(out, instructions(t)...)
		}
	}
	return out, nil
}

// repeated says how t's card text repeats itself, or "" when it does not:
// an alias listed twice (analyzed), or a text of at least 8 terms (the
// summary, the description, the aliases together, the tags together) of
// which more than half are repeats beyond repeatCap. The descriptions of
// the real MCP catalogs and public datasets keep at least 61% of their
// terms under that saturation.
func repeated(o Options, t *tools.Tool) string {
	a := o.Analyzer
	seen := map[string]bool{}
	for _, s := range t.Card.Aliases {
		k := strings.Join(a.Terms(nil, s, ""), " ")
		if k != "" && seen[k] {
			return fmt.Sprintf("alias %q is listed twice: each alias once", s)
		}
		seen[k] = true
	}
	for _, f := range []struct{ name, text string }{
		{"summary", t.Card.Summary},
		{"description", t.Description},
		{"aliases", strings.Join(t.Card.Aliases, "\n")},
		{"tags", strings.Join(t.Card.Tags, "\n")},
	} {
		terms := a.Terms(nil, f.text, "")
		if len(terms) < 8 {
			continue
		}
		count := map[string]int{}
		kept, top, most := 0, "", 0
		for _, term := range terms {
			count[term]++
			if count[term] <= repeatCap {
				kept++
			}
			if count[term] > most {
				top, most = term, count[term]
			}
		}
		if 2*kept < len(terms) {
			return fmt.Sprintf("%s repeats its words (%q %d times; %d of its %d words are repeats): repetition earns no rank, say it once", f.name, top, most, len(terms)-kept, len(terms))
		}
	}
	return ""
}

// keywordList is the message of a keyword-list finding for a card whose
// keyword lists have the off-topic items.
func keywordList(items []string) string {
	var shown []string
	for _, s := range items[:min(len(items), 4)] {
		shown = append(shown, strconv.Quote(s))
	}
	if len(items) > len(shown) {
		shown = append(shown, "…")
	}
	return fmt.Sprintf("lists %d words its name and first sentence do not mention (%s): words a tool does not serve draw requests meant for other tools; leave those out", len(items), strings.Join(shown, ", "))
}

// spelledTools returns, for each tool of snap in order, the ID of a tool
// of another namespace that its name spells with that namespace in it
// (evil/github_create_issue, evil/GitHubCreateIssue or
// evil/github__create_issue for github/create_issue), or "" for none:
// the identifiers' folded words ([analysis.SplitIdentifier]) compared
// run together, whatever separated them.
func spelledTools(snap *tools.Snapshot) []string {
	fold := func(s string) string { return string(analysis.AppendIdentifier(nil, s, "")) }
	qualified := make(map[string]string, snap.Len())
	for _, t := range snap.Tools() {
		qualified[fold(t.Namespace()+"_"+t.Name())] = t.ID
	}
	out := make([]string, snap.Len())
	for i, t := range snap.Tools() {
		if id, ok := qualified[fold(t.Name())]; ok && id != t.ID && !strings.HasPrefix(id, t.Namespace()+"/") {
			out[i] = id
		}
	}
	return out
}
