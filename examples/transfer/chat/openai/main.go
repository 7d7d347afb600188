// Command openai is the transfer example's chat command with the OpenAI
// backend linked, and no other SDK: what
//
//	go run ./examples/transfer chat --backend openai ...
//
// builds and runs, so that the demo compiles no model SDK. It takes
// transfer chat's flags (go run ./examples/transfer chat --help).
package main

import (
	"os"

	"github.com/toolgate/toolgate/examples/transfer/internal/chat"
	"github.com/toolgate/toolgate/examples/transfer/internal/openaichat"
	"github.com/toolgate/toolgate/internal/embedflags/openaiembed"
)

func main() { os.Exit(chat.Main("openai", openaichat.Backend, openaiembed.APIs)) }
