// Package anthropicchat is the transfer chat's Anthropic backend (the
// Messages API; ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL), in its own package
// so that only a program that runs it links the Anthropic SDK.
package anthropicchat

import (
	"context"
	"fmt"
	"os"

	"github.com/toolgate/toolgate/examples/transfer/internal/chat"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/anthropic"
)

// Backend is --backend anthropic: native mode with hosted deferred loading
// by default.
func Backend(_ context.Context, f chat.Flags) (chat.Setup, error) {
	if os.Getenv("ANTHROPIC_API_KEY") == "" && os.Getenv("ANTHROPIC_BASE_URL") == "" {
		return chat.Setup{}, fmt.Errorf("--backend anthropic needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL)")
	}
	s := chat.Setup{Model: f.Model, Mode: chat.ModeOr(f.Mode, llm.ModeNative)}
	if s.Model == "" {
		s.Model = chat.DefaultAnthropicModel
	}
	// Native mode defers every authorized tool and loads them with tool
	// references: the prompt prefix stays cached.
	s.Deferred = s.Mode == llm.ModeNative
	b, err := anthropic.New(s.Model, nil)
	if err != nil {
		return chat.Setup{}, err
	}
	s.Backend = b
	return s, nil
}
