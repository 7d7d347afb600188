// Command local is the transfer example's chat command with the local
// backend linked (llm/local: a GGUF model in process, through llama.cpp's
// library loaded without cgo), and no model SDK: what
//
//	go run ./examples/transfer chat --backend local --model FILE.gguf ...
//
// builds and runs, so that the demo itself links no backend. It takes
// transfer chat's flags (go run ./examples/transfer chat --help).
package main

import (
	"os"

	"github.com/toolgate/toolgate/examples/transfer/internal/chat"
	"github.com/toolgate/toolgate/examples/transfer/internal/localchat"
)

func main() { os.Exit(chat.Main("local", localchat.Backend, nil)) }
