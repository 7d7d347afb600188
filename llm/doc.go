// Package llm is toolgate's model interface: a small [Backend] that sends a
// conversation with the turn's shortlist and its compiled output
// constraint, and returns the model's reply already parsed into one tool
// call, an answer, or a find_tools query.
//
// The adapters live in subpackages: llm/ollama (github.com/ollama/ollama/api),
// llm/openai (github.com/openai/openai-go/v3, Chat Completions, also for
// OpenAI-compatible servers such as llama.cpp's) and llm/scripted (a
// deterministic backend for tests and demos). This package imports
// neither tools nor grammar: the grammar package's artifacts (the
// envelope JSON Schema, the GBNF, OpenAI-strict parameter schemas) arrive
// as plain data in [Constraint] and [ToolSpec], and the runtime composes them.
//
// Three constraint modes ([Constraint.Mode]):
//
//   - ModeEnvelope (default): the model must reply with the turn envelope
//     ({"action":"call"|"answer"|"find_tools",...}), enforced by the
//     backend's structured output (Ollama `format`, OpenAI
//     `response_format` json_schema strict); the shortlist's schemas are
//     listed in the system prompt (ToolPrompt).
//   - ModeGrammar: the same envelope, enforced by a llama.cpp GBNF grammar
//     sent in the request's `grammar` field (llama.cpp server).
//   - ModeNative: the backend's own tool calling (OpenAI tools with
//     strict: true and parallel_tool_calls: false; Ollama tools).
//
// Every reply goes through [ParseReply]: a reply that is not of the mode's
// shape, names a tool outside [Request.Tools] or was truncated is an
// *[OutputError] and carries no call. Checked adds what production needs on
// top of any Backend: repair (the reason goes back to the model, a bounded
// number of times, then *[RepairError]), a caller's Validate hook, retries
// with backoff on 429/5xx honouring Retry-After, an explicit opt-in
// downgrade when a server rejects the constraint, and Prometheus metrics
// of token use (tool definitions sent vs. the whole catalog):
//
//	b, _ := ollama.New("qwen3:8b", nil) // OLLAMA_HOST
//	cb, err := llm.Checked(b, &llm.Options{Validate: validate, Registerer: prometheus.DefaultRegisterer})
//	resp, err := cb.Chat(ctx, &llm.Request{Messages: msgs, Tools: shortlist, Constraint: c})
//	switch resp.Action {
//	case llm.ActionCall: // resp.Calls[0] names a shortlisted tool, arguments validated
//	case llm.ActionAnswer, llm.ActionFindTools:
//	}
package llm
