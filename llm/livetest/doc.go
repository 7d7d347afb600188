// Package livetest holds toolgate's live tests against real inference
// engines: a llama.cpp server (TOOLGATE_LLAMACPP_URL), an Ollama server
// (OLLAMA_HOST, TOOLGATE_OLLAMA_MODEL) and a GGUF model run in process by
// llm/local (TOOLGATE_LIVE_LIBLLAMA, TOOLGATE_LIVE_LOCAL_MODEL). It has no
// API; its tests assert plumbing, never a model's judgement, so that a
// weak model passes:
//
//   - conformance: for the tools of the real MCP catalogs and the transfer
//     example, constrained generations (llama.cpp with the grammar
//     package's GBNF, Ollama with its JSON Schema format), each of which
//     must parse and validate against the tool's schema, or be a valid
//     answer or find_tools envelope; the local backend runs the same GBNF
//     through toolgate's own token mask.
//
// Without the variables the tests skip, saying why. .ci/engines builds,
// starts and names the engines in CI; docs/llm.md says how to run the
// tests against your own.
package livetest
