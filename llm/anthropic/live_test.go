package anthropic_test

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/anthropic"
	"github.com/toolgate/toolgate/llm/internal/backendtest"
)

// TestLive runs against the real Messages API (or ANTHROPIC_BASE_URL) when
// ANTHROPIC_API_KEY is set (model: TOOLGATE_ANTHROPIC_MODEL, default
// claude-sonnet-4-5, which has tool search). It is skipped, saying so,
// otherwise. It asserts the plumbing: a reply that parses in each mode,
// and in deferred mode that the tool reference loads the tool.
func TestLive(t *testing.T) {
	model := testenv.HostedModel(t, "ANTHROPIC_API_KEY", "TOOLGATE_ANTHROPIC_MODEL", "claude-sonnet-4-5", "Anthropic API")
	b, err := anthropic.New(model, nil)
	if err != nil {
		t.Fatal(err)
	}
	backendtest.LiveModes(t, b, 2*time.Minute, false, func(t *testing.T, _ *llm.Request, resp *llm.Response) {
		if resp.Action == "" {
			t.Error("no action parsed from the reply")
		}
	}, llm.ModeEnvelope, llm.ModeNative)
	t.Run("deferred", func(t *testing.T) {
		cb, err := llm.Checked(b, nil)
		if err != nil {
			t.Fatal(err)
		}
		req := deferredRequest()
		resp := backendtest.LiveChat(t, cb, req, 2*time.Minute)
		if resp.Action != llm.ActionCall || resp.Calls[0].Name != "find_tools" {
			t.Skipf("the model did not search first (%s): nothing more to check", resp.Raw)
		}
		// The second Chat, after the tool reference, must succeed too.
		req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleTool, ToolCallID: resp.Calls[0].ID,
			Name: "find_tools", Content: "1 tool found", ToolReferences: []string{"get_balance"}})
		backendtest.LiveChat(t, cb, req, 2*time.Minute)
	})
}
