// Package local is the [llm.Backend] that runs a GGUF model inside the Go
// process: llama.cpp's C library (libllama.so) loaded at run time without
// cgo, its logits masked by toolgate's own token-mask engine
// ([github.com/toolgate/toolgate/grammar/mask]) and sampled in Go. No
// server runs; the grammar that constrains the model is enforced by
// toolgate's code, token by token.
//
//	b, err := local.New("tinyllama-1.1b-chat-q4_0.gguf", &local.Options{Library: "/opt/llama/libllama.so"})
//	defer b.Close()
//	resp, err := b.Chat(ctx, &llm.Request{Messages: msgs, Tools: shortlist, Constraint: c})
//
// # The library
//
// [Options.Library] names libllama.so (the TOOLGATE_LIBLLAMA environment
// variable when it is ""), with the libggml*.so it needs beside it or on
// the loader's path. The binding (internal/llamacpp) was written against
// the llama.cpp of node-llama-cpp 3.21.1 (tag v0.4.0), which .ci/engines
// builds with build_libllama; a library of another version is refused
// with an error saying so, found by reading llama.cpp's default
// parameters back through the binding's struct layouts (with room after
// them, so that a newer library's longer structs are caught, not written
// past Go's memory).
//
// # Modes
//
//   - llm.ModeGrammar: [llm.Constraint.GBNF] is parsed by grammar/gbnf and
//     masks every token.
//   - llm.ModeEnvelope: [llm.Constraint.EnvelopeSchema] is compiled to a
//     GBNF by the grammar package ([grammar.FromSchema]) and masks the
//     same way.
//   - llm.ModeNative: refused with an *[llm.ConstraintError]; a local
//     model has no native tool calling.
//
// In both envelope modes the shortlist's schemas go in the system prompt
// ([llm.WithToolPrompt]) and the conversation is rendered with the model's
// chat template (from the GGUF, llama_chat_apply_template; "chatml" when
// the GGUF has none; [Options.Template] overrides).
//
// # Sampling and stopping
//
// At temperature 0 (the default) the most likely allowed token is taken;
// above 0, one is drawn from the softmax of the allowed logits over the
// temperature with a PCG generator seeded by the request's or the
// options' seed (random when neither sets one). A reply stops as soon as
// the grammar is complete and allows no more text (the envelope's closing
// brace: no token is decoded for its end), at an end-of-generation token
// the grammar allows, or at the request's MaxTokens ([llm.FinishLength],
// which [llm.ParseReply] reports as truncated). ctx is checked before
// every decode, so a cancelled request stops within one token (or one
// prompt batch).
//
// # Prompt cache
//
// The backend keeps the tokens its KV cache holds; a request whose prompt
// shares a prefix with them (the system prompt and the turns before,
// from one step of an agent to the next) decodes only the rest, from the
// first token that differs (llama_memory_seq_rm). [llm.Usage.CachedPromptTokens]
// reports the tokens reused.
//
// # Concurrency and resources
//
// A Backend holds one llama.cpp context (one sequence): it is safe for
// concurrent use, and concurrent Chats run one at a time, in turn, on a
// mutex; [llm.Request.OnDelta] runs with it held, so it must not call the
// same Backend. Open one Backend per parallel stream (each loads the weights
// again, memory-mapped). Close frees the context and the model; a Chat
// after Close fails.
package local
