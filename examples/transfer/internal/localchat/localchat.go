// Package localchat is the transfer chat's local backend: the GGUF model
// --model names, run inside the chat program by llm/local (llama.cpp's
// library loaded without cgo, every token masked by toolgate's own
// engine), in its own package so that only a program that runs it links
// the binding.
package localchat

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/toolgate/toolgate/examples/transfer/internal/chat"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/local"
)

// Backend is --backend local: grammar mode by default (the turn
// envelope's GBNF masks every token); --library or TOOLGATE_LIBLLAMA
// names libllama.so.
func Backend(_ context.Context, f chat.Flags) (chat.Setup, error) {
	if f.Model == "" {
		return chat.Setup{}, fmt.Errorf("--backend local needs --model FILE.gguf")
	}
	b, err := local.New(f.Model, &local.Options{Library: f.Library, Temperature: f.Temperature, Seed: f.Seed})
	if err != nil {
		return chat.Setup{}, err
	}
	return chat.Setup{
		Backend:       b,
		Mode:          chat.ModeOr(f.Mode, llm.ModeGrammar),
		Model:         "local " + filepath.Base(f.Model),
		ContextTokens: b.ContextSize(),
	}, nil
}
