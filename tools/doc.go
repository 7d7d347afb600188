// Package tools holds what toolgate knows about tools before any model sees
// them: the [Tool] itself (its handler and full JSON Schema), its capability
// Card (the 30–50 tokens discovery searches), the [Principal] that asks, and
// the [Registry] that keeps the catalog current while tools come and go.
//
// Authorization happens here, first and deterministically: a [Snapshot] of the
// registry is turned into a [View] for one principal (deny by default, every
// scope of a tool required, tenant isolation), and everything downstream —
// discovery, schemas, grammars, prompts — works only on that View. A tool the
// principal may not use never exists for that turn.
//
//	t, err := tools.Define("bank", tools.Definition{Name: "get_balance",
//		Description: "Show the balance of an account.", InputSchema: schema,
//		Scopes: []string{"accounts:read"}, Annotations: &tools.Annotations{ReadOnlyHint: true}})
//	t.Handler = getBalance
//	reg := tools.NewRegistry()
//	err = reg.Add(t)
//	view := reg.Snapshot().Authorize(tools.Principal{ID: "u1", Tenant: "acme",
//		Scopes: []string{"accounts:read"}})
//	for _, t := range view.Tools() { ... }
//
// There is one way to define a tool: a [Definition] (name, description,
// input schema, scopes, aliases, risk flags, MCP annotations) given to
// Define or [DefineAll], which derive the card (summary from the
// description, risk from the flags and annotations) and check the schema.
// Catalog files (package tools/catalog: JSON Lines, a JSON array or an MCP
// tools/list result, every problem reported "FILE:LINE: reason"), MCP
// servers (package tools/mcp) and typed Go functions ([NewFunc], whose input
// schema is derived from the argument struct with
// github.com/google/jsonschema-go, as the official MCP Go SDK does) all
// come through it.
//
// Handlers report their outcome with plain errors plus two markers the
// gateway records differently: a *[DomainError] (the tool ran and refused for a
// business reason, e.g. insufficient funds; stored and replayed) and an error
// wrapped by [NoEffect] (the tool failed before any side effect; safe to run
// again). Any other error means the outcome is unknown.
package tools
