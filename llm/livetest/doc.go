// Package livetest holds toolgate's live tests against real inference
// engines: a llama.cpp server (TOOLGATE_LLAMACPP_URL) and an Ollama server
// (OLLAMA_HOST, TOOLGATE_OLLAMA_MODEL). It has no API; its tests assert
// plumbing, never a model's judgement, so that a weak model passes:
//
//   - conformance: for the tools of the real MCP catalogs and the transfer
//     example, constrained generations (llama.cpp with the grammar
//     package's GBNF, Ollama with its JSON Schema format), each of which
//     must parse and validate against the tool's schema, or be a valid
//     answer or find_tools envelope.
//
// Without the variables the tests skip, saying why. .ci/engines builds,
// starts and names both engines in CI; docs/llm.md says how to run the
// tests against your own.
package livetest
