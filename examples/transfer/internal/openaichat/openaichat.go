// Package openaichat is the transfer chat's OpenAI backend (Chat
// Completions or, with --api responses, the Responses API; OPENAI_API_KEY,
// OPENAI_BASE_URL for OpenAI-compatible servers such as llama.cpp's), in
// its own package so that only a program that runs it links the OpenAI SDK.
package openaichat

import (
	"context"
	"fmt"
	"os"
	"path"
	"time"

	"github.com/toolgate/toolgate/examples/transfer/internal/chat"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/openai"
)

// Backend is --backend openai: Chat Completions in grammar mode when the
// server is llama.cpp's (its /props endpoint says so: a weak local model
// needs the GBNF), else in native mode with strict function tools; with
// --api responses, the Responses API in native mode with hosted deferred
// loading.
func Backend(ctx context.Context, f chat.Flags) (chat.Setup, error) {
	base := os.Getenv("OPENAI_BASE_URL")
	if os.Getenv("OPENAI_API_KEY") == "" && base == "" {
		return chat.Setup{}, fmt.Errorf("--backend openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server)")
	}
	opts := &openai.Options{Temperature: f.Temperature, Seed: f.Seed}
	s := chat.Setup{Model: f.Model}
	if f.API == "responses" {
		if s.Model == "" {
			s.Model = chat.DefaultResponsesModel
		}
		s.Mode = chat.ModeOr(f.Mode, llm.ModeNative)
		// As for Anthropic: every authorized tool deferred, in its
		// namespace, loaded by toolgate's answers to tool_search.
		s.Deferred, s.StrictSchemas = s.Mode == llm.ModeNative, true
		b, err := openai.NewResponses(s.Model, opts)
		if err != nil {
			return chat.Setup{}, err
		}
		s.Backend = b
		return s, nil
	}
	mode := llm.ModeNative
	if base != "" {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		props, err := openai.ProbeLlamaCpp(pctx, base, nil)
		cancel()
		if err == nil {
			// llama.cpp: the GBNF constrains a weak local model, and its
			// server names the model it loaded.
			mode, opts.LegacyMaxTokens = llm.ModeGrammar, true
			s.ContextTokens = props.ContextSize
			if s.Model == "" {
				s.Model = "llama.cpp " + path.Base(props.ModelPath)
			}
		}
	}
	if s.Model == "" {
		s.Model = chat.DefaultOpenAIModel
	}
	s.Mode, s.StrictSchemas = chat.ModeOr(f.Mode, mode), !opts.LegacyMaxTokens
	b, err := openai.New(s.Model, opts)
	if err != nil {
		return chat.Setup{}, err
	}
	s.Backend = b
	return s, nil
}
