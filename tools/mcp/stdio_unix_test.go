//go:build unix

package mcp_test

import (
	"encoding/json"
	"os"
	"syscall"
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// TestStdioServerHasItsOwnProcessGroup: a stdio server runs in a process
// group of its own, so the SIGINT a terminal's Ctrl-C sends to toolgate's
// group does not reach it: toolgate stops it after the calls in flight
// finished (serve's --shutdown-timeout), instead of the server dying under
// them and every such call ending uncertain.
func TestStdioServerHasItsOwnProcessGroup(t *testing.T) {
	ctx := testContext(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "environ", Command: []string{exe},
		Env: map[string]string{environServerEnv: "1"}}, &mcp.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	raw, err := call(t, ctx, reg, "environ/pid", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ PID int }
	if err := json.Unmarshal(raw, &got); err != nil || got.PID == 0 {
		t.Fatalf("pid = %s, %v; want the server's process id", raw, err)
	}
	pgid, err := syscall.Getpgid(got.PID)
	if err != nil {
		t.Fatal(err)
	}
	if pgid == syscall.Getpgrp() {
		t.Errorf("the server's process group = %d, toolgate's own: a Ctrl-C in toolgate's terminal stops it under the calls in flight", pgid)
	}
}
