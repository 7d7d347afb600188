// Package mcp imports tools from Model Context Protocol servers into a
// tools.Registry, on the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// Connect starts a stdio server (a command line) or opens a Streamable HTTP
// endpoint, lists its tools (following pagination), and registers each as
// "<server>/<tool>" through tools.DefineAll, the rules every tool follows
// (summary from the description; readOnlyHint → read-only, destructiveHint →
// irreversible, idempotentHint, openWorldHint), plus the scopes and
// overrides of the server's configuration. The tools stay current: a
// notifications/tools/list_changed re-lists them; a server that dies or
// hangs (keep-alive pings fail) is reconnected with exponential backoff,
// its tools known meanwhile with their last definitions and a call of one
// refused as retryable (tools.Unavailable); Close takes them out.
//
//	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "memory",
//		Command: []string{"npx", "-y", "@modelcontextprotocol/server-memory"},
//		Scopes:  []string{"memory:write"}}, nil)
//	defer up.Close()
//
// A stdio server is started with a default environment
// ([DefaultPassEnv]: PATH, HOME and the like), the variables its
// [Server.PassEnv] names and its [Server.Env], never the rest of
// toolgate's: a secret in the parent's environment is not the server's to
// read.
//
// Each imported tool's handler calls the upstream. Its errors follow the
// gateway's recording table: a tool error (isError) is a *tools.DomainError;
// a JSON-RPC error the server answered the call with, or a disconnected
// server, is wrapped by tools.NoEffect (nothing ran); a transport failure or
// timeout mid-call is an unknown outcome, and so is a JSON-RPC error the
// SDK makes up (for a frame it cannot read, or an HTTP 5xx or 429 status). A result that lacks or breaks the structuredContent the
// tool's outputSchema declares is a *tools.DomainError too, with Code
// [CodeInvalidOutput]: the call ran, so the gateway records the refusal
// and replays it, and the broken result is not passed on. So is an answer
// that is no valid MCP tool result at all (content that is no array, a
// content block of a type MCP does not know), which the SDK could not
// decode: the server answered, so the tool ran. The call's
// idempotency key travels in the request's _meta under
// [MetaIdempotencyKey], for servers that deduplicate.
//
// Pinning defends against a server that changes a tool's definition after
// it was reviewed (a "rug pull"): [ListTools] and [Lock.Pin] write a lock of
// definition hashes ([DefinitionHash]: SHA-256 over the RFC 8785 JSON of the
// name, title, description, schemas and annotations), and [Options.Pins]
// makes every listing pass [Verify]: a tool whose definition differs from
// its pin is quarantined (not registered, its handler refusing calls,
// logged with both hashes, counted in toolgate_mcp_quarantined_tools)
// until it matches again or is re-pinned; [Options.Unpinned] says what
// becomes of a tool the lock does not know.
//
// The package needs nothing above package tools: execution through the
// gateway is composed by the caller.
package mcp
