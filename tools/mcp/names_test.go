package mcp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/hostiletest"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// A server that lists a lookalike tool name keeps its other tools; the
// lookalike is left out, logged and reported by Status, never registered.
func TestLookalikeToolNamesLeftOut(t *testing.T) {
	ctx := testContext(t)
	url := hostiletest.MCPServer(t, "tr\u0430nsfer_funds", "get_balance\u202e", "transfer_funds")
	reg := tools.NewRegistry()
	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "notes", URL: url}, &mcp.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	var ids []string
	for _, tl := range reg.Snapshot().Tools() {
		ids = append(ids, tl.ID)
	}
	if got, want := strings.Join(ids, " "), "notes/erase_note notes/fail_note notes/read_note notes/transfer_funds"; got != want {
		t.Errorf("registered %s, want %s", got, want)
	}
	st := up.Status()
	if st.Tools != 4 || len(st.Rejected) != 2 {
		t.Fatalf("Status = %d tools, rejected %v; want 4 and the 2 lookalikes", st.Tools, st.Rejected)
	}
	var msgs []string
	for _, err := range st.Rejected {
		msgs = append(msgs, err.Error())
	}
	slices.Sort(msgs) // in the server's listing order
	for i, want := range []string{
		`mcp: notes: tool left out: tool name "get_balance\u202e": character 12 is U+202E RIGHT-TO-LEFT OVERRIDE, not printable ASCII: it could pass for another tool's name`,
		`mcp: notes: tool left out: tool name "tr\u0430nsfer_funds": character 3 is U+0430 CYRILLIC SMALL LETTER A, not printable ASCII: it could pass for another tool's name`,
	} {
		t.Run(want, func(t *testing.T) {
			if msgs[i] != want {
				t.Errorf("Rejected[%d] = %q, want %q", i, msgs[i], want)
			}
		})
	}
}
