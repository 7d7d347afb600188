// Package cards adds what a team knows about its tools to their capability
// cards without editing the upstream catalog or MCP server: the nicknames
// users say, example requests, when not to use a tool, tags, and aliases for
// a whole server ("k8s" for a Kubernetes server, "the wiki" for a
// Confluence one).
//
// An overlay is a JSON Lines file, one entry a line:
//
//	{"tool":"github/create_pull_request","hash":"sha256:1f0c9a3e5b7d2e48","aliases":["open a PR"],"examples":["open a pull request for my branch"],"not_for":"merging one: use github/merge_pull_request"}
//	{"tool":"kubernetes/*","aliases":["k8s","the cluster"]}
//
// A tool entry is keyed by the tool's ID and versioned by [Hash], a digest of
// the tool's name, description and input schema as the entry's author saw
// them: when the tool changes upstream, the entry is stale and is reported,
// never applied silently. A namespace entry ("NS/*") holds server-level
// aliases and tags and applies to every tool of the namespace; it carries
// no hash. Entries add to a card: aliases, examples and tags are appended
// (duplicates dropped, case-insensitively), a not_for replaces the card's.
// Examples are indexed by discovery (tools.Card.Examples) but are not part
// of the card text a model is shown or lint counts.
//
// Usage:
//
//	ov, err := cards.Load("team.cards.jsonl")         // FILE:LINE: reason on a bad line
//	ts, rep := ov.Apply(catalogTools)                  // rep.Stale, rep.Unknown: report them
//	err = reg.Add(ts...)
//
// For tools an MCP upstream registers (and re-registers on list_changed),
// pass [Overlay.Transform] as mcp.Options.Transform so every version is
// overlaid before the registry publishes it.
//
// Parsing is strict and bounded: invalid UTF-8, unknown fields, a member
// given twice in one entry, duplicate keys (within a file or across the
// files of one [Load]), a tool entry
// without a hash, and lines, lists or strings over the limits below are
// errors naming the file and line. A UTF-8 byte order mark and CRLF line
// ends are accepted. A tool entry with nothing but its hash, a line
// `toolgate cards hash` printed and nobody filled in yet, is skipped: it
// applies nothing, so the file that command writes is an overlay from the
// start (a namespace entry that adds nothing is an error). An [Overlay] is
// immutable once loaded and safe for concurrent use.
package cards
