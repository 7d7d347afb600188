package main

import (
	"github.com/toolgate/toolgate/examples/transfer/internal/anthropicchat"
	"github.com/toolgate/toolgate/examples/transfer/internal/localchat"
	"github.com/toolgate/toolgate/examples/transfer/internal/ollamachat"
	"github.com/toolgate/toolgate/examples/transfer/internal/openaichat"
	"github.com/toolgate/toolgate/internal/embedflags/ollamaembed"
	"github.com/toolgate/toolgate/internal/embedflags/openaiembed"
)

// The tests link every backend into the chat command, so that they run
// each in process against an httptest server or a live engine; the
// program itself links none (TestDemoLinksNoSDK).
func init() {
	chatBackends["ollama"] = ollamachat.Backend
	chatBackends["openai"] = openaichat.Backend
	chatBackends["anthropic"] = anthropicchat.Backend
	chatBackends["local"] = localchat.Backend
	chatEmbedders["ollama"] = ollamaembed.New
	chatEmbedders["openai"] = openaiembed.New
}
