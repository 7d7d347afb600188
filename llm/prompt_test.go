package llm_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
)

// TestToolPromptPlaceholdersAreNotReplies: a weak model copies the
// prompt's examples; none of them may be a reply the parser accepts.
func TestToolPromptPlaceholdersAreNotReplies(t *testing.T) {
	for i, tools := range [][]llm.ToolSpec{nil, backendtest.Shortlist()} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for line := range strings.SplitSeq(llm.ToolPrompt(tools), "\n") {
				example, _, ok := strings.Cut(line, "} to ")
				if !ok || !strings.HasPrefix(example, `{"action"`) {
					continue
				}
				example += "}"
				if env, err := llm.ParseEnvelope([]byte(example)); err == nil {
					t.Errorf("ParseEnvelope(%s) = %+v, want an error: the prompt's placeholder is a valid reply", example, env)
				}
			}
		})
	}
}
