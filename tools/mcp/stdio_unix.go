//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in a process group of its own, so that the
// SIGINT a terminal's Ctrl-C sends to toolgate's group does not stop the
// server under the calls in flight: toolgate closes it after they finish.
// A server whose toolgate was killed still sees its stdin close.
func ownProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}
