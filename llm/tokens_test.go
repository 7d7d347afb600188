package llm_test

import (
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
)

func TestToolPromptTokens(t *testing.T) {
	catalog := backendtest.CatalogTools(t)
	for i, tools := range [][]llm.ToolSpec{nil, backendtest.Shortlist()[:1], backendtest.Shortlist(), catalog} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			got := llm.ToolPromptTokens(tools)
			want, err := tokens.Count(llm.ToolPrompt(tools))
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("ToolPromptTokens(%d tools) = %d, want %d (the count of ToolPrompt)", len(tools), got, want)
			}
		})
	}
}
