package mcp_test

import (
	"context"
	"fmt"
	"log"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// Connect starts an MCP server, registers its tools under its name and
// keeps them current until Close. (Not run: it starts npx.)
func ExampleConnect() {
	ctx := context.Background()
	reg := tools.NewRegistry()

	up, err := mcp.Connect(ctx, reg, mcp.Server{
		Name:    "memory",
		Command: []string{"npx", "-y", "@modelcontextprotocol/server-memory"},
		Scopes:  []string{"memory:write"}, // required for every tool of this server
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer up.Close()
	fmt.Println(reg.Snapshot().Len(), "tools")
}
