package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/hostiletest"
)

// A chat whose model, tools and server write hostile text shows all of it
// escaped: model output, find_tools queries, call arguments, tool results,
// tool errors, validation errors and answers (security invariant 10).
func TestChatWritesNoTerminalControls(t *testing.T) {
	h := hostiletest.Text
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	script := writeScript(t,
		js(map[string]any{"text": "not an envelope " + h}),
		js(map[string]any{"find_tools": "read a note " + h}),
		js(map[string]any{"call": "read_note", "arguments": map[string]any{"id": h}}),
		js(map[string]any{"call": "fail_note", "arguments": map[string]any{"id": h}}),
		js(map[string]any{"call": "erase_note", "arguments": map[string]any{"id": h}}),
		js(map[string]any{"call": "get_balance", "arguments": map[string]any{"account": "ACC-00001" + h}}),
		js(map[string]any{"answer": "Done. " + h + "\nsecond line " + h}),
	)
	for i, extra := range [][]string{{"-v"}, nil} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			code, out, errOut := runChatCmd(t, "", chatArgs(t.TempDir(), append([]string{"--backend", "scripted", "--script", script,
				"--mcp-url", "notes=" + hostiletest.MCPServer(t), "--approve", "prompt", "--once", "read my note and delete it " + h}, extra...)...)...)
			if code != exitOK {
				t.Fatalf("chat %v = %d, stdout %s, stderr %s", extra, code, out, errOut)
			}
			hostiletest.CheckTerminal(t, "stdout", out)
			hostiletest.CheckTerminal(t, "stderr", errOut)
			if !strings.Contains(out, "approval needed: alice asks notes/erase_note") {
				t.Errorf("chat %v never asked to approve erase_note:\n%s", extra, out)
			}
		})
	}
}
