// Command ollama is the transfer example's chat command with the Ollama
// backend linked, and no other SDK: what
//
//	go run ./examples/transfer chat --backend ollama ...
//
// builds and runs, so that the demo compiles no model SDK. It takes
// transfer chat's flags (go run ./examples/transfer chat --help).
package main

import (
	"os"

	"github.com/toolgate/toolgate/examples/transfer/internal/chat"
	"github.com/toolgate/toolgate/examples/transfer/internal/ollamachat"
	"github.com/toolgate/toolgate/internal/embedflags/ollamaembed"
)

func main() { os.Exit(chat.Main("ollama", ollamachat.Backend, ollamaembed.APIs)) }
