// Package envbounds holds the default size bounds of the turn envelope: the
// one definition that package grammar's defaults (grammar.Options) and
// package llm's DefaultBounds, which the agent compiles every turn with,
// both name, since grammar and llm import none of each other. A change
// here changes the grammar toolgate grammar prints and the agent's alike.
package envbounds

const (
	// Answer bounds the text of an answer, in code points: with the
	// envelope around it llm.TokenBudget gives it 827 tokens, within
	// llm.DefaultMaxTokens, which every such reply of ASCII text fits at a
	// token per character.
	Answer = 600
	// Query bounds the query of a find_tools request, in code points.
	Query = 200
	// String bounds each string of a call's arguments whose schema leaves
	// its length free, in code points.
	String = 1000
	// Items bounds each array of a call's arguments whose schema leaves
	// its item count free.
	Items = 50
)
