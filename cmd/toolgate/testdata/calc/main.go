// Command calc is a minimal MCP server over stdio for the tests of
// `toolgate serve`: add adds two integers and counts its executions in
// the file named by CALC_COUNT (when set); slow_add does the same after
// writing a byte to the FIFO CALC_STARTED and reading one from the FIFO
// CALC_RELEASE, so a test can hold a call in flight without sleeping.
package main

import (
	"context"
	"log"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type addIn struct {
	A int `json:"a" jsonschema:"the first addend"`
	B int `json:"b" jsonschema:"the second addend"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func main() {
	s := sdk.NewServer(&sdk.Implementation{Name: "calc", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Add two integers and return their sum."},
		func(ctx context.Context, req *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
			count()
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "slow_add", Description: "Add two integers slowly, when released."},
		func(ctx context.Context, req *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
			if err := os.WriteFile(os.Getenv("CALC_STARTED"), []byte("s"), 0); err != nil {
				return nil, addOut{}, err
			}
			if _, err := os.ReadFile(os.Getenv("CALC_RELEASE")); err != nil {
				return nil, addOut{}, err
			}
			count()
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

// count appends one byte to the file CALC_COUNT names.
func count() {
	if path := os.Getenv("CALC_COUNT"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			f.WriteString("x")
			f.Close()
		}
	}
}
