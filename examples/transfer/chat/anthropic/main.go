// Command anthropic is the transfer example's chat command with the Anthropic
// backend linked, and no other SDK: what
//
//	go run ./examples/transfer chat --backend anthropic ...
//
// builds and runs, so that the demo compiles no model SDK. It takes
// transfer chat's flags (go run ./examples/transfer chat --help).
package main

import (
	"os"

	"github.com/toolgate/toolgate/examples/transfer/internal/anthropicchat"
	"github.com/toolgate/toolgate/examples/transfer/internal/chat"
)

func main() { os.Exit(chat.Main("anthropic", anthropicchat.Backend, nil)) }
