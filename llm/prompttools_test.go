package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWithToolPromptListsPromptTools: [Request.PromptTools] limits the
// system prompt's tool section to the first tools; the rest are the
// caller's to show in the conversation (in ToolLine's form).
func TestWithToolPromptListsPromptTools(t *testing.T) {
	tools := []ToolSpec{
		{Name: "a", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "b", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "c", Parameters: json.RawMessage(`{"type":"object"}`)},
	}
	for _, tc := range []struct {
		promptTools int
		listed      string
	}{{0, "abc"}, {1, "a"}, {2, "ab"}, {3, "abc"}, {7, "abc"}} {
		t.Run(tc.listed, func(t *testing.T) {
			msgs := WithToolPrompt(&Request{Tools: tools, PromptTools: tc.promptTools, Messages: []Message{{Role: RoleUser, Content: "hi"}}})
			var got string
			for _, tl := range tools {
				if strings.Contains(msgs[0].Content, ToolLine(tl)) {
					got += tl.Name
				}
			}
			if got != tc.listed {
				t.Errorf("PromptTools %d lists %q, want %q", tc.promptTools, got, tc.listed)
			}
		})
	}
}
