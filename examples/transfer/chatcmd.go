package main

import (
	"context"
	"io"
	"os"

	"github.com/toolgate/toolgate/examples/transfer/internal/chat"
	"github.com/toolgate/toolgate/internal/embedflags"
)

func init() { commands["chat"] = runChat }

// stdin is what chat reads requests and approval answers from; tests
// replace it.
var stdin io.Reader = os.Stdin

// chatBackends are the model backends linked into this program besides
// the scripted one: none, so that the demo compiles no vendor SDK; chat
// runs each of the others' own program ([chat.Programs]). Tests link them.
var chatBackends = map[string]chat.Backend{}

// chatEmbedders are the embedding clients linked into this program: none,
// for the same reason; tests link them.
var chatEmbedders = map[string]embedflags.API{}

// runChat is the chat command (package chat).
func runChat(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return chat.Run(ctx, args, stdout, stderr, &chat.Options{
		Backends:  chatBackends,
		Embedders: chatEmbedders,
		Usage:     helps["chat"].Usage,
		Catalogs:  loadEmbeddedCatalogs,
		Stdin:     stdin,
	})
}
