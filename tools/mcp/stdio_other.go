//go:build !unix

package mcp

import "os/exec"

// ownProcessGroup does nothing outside Unix: there a console's Ctrl-C
// still reaches the server (Windows' CREATE_NEW_PROCESS_GROUP would be the
// counterpart, untested).
func ownProcessGroup(*exec.Cmd) {}
