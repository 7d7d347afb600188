package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// badToolServerEnv makes the test binary, run by
// [TestStdioMalformedToolLeftOut], a stdio MCP server written by hand whose
// tools/list answer holds one tool that is not a valid MCP tool (its name
// a number) beside two that are.
const badToolServerEnv = "TOOLGATE_TEST_BAD_TOOL_SERVER"

// badListing is a tools/list result whose tool 1 is no valid MCP tool
// (its name a number), between two that are.
const badListing = `{"tools":[{"name":"first","inputSchema":{"type":"object"}},` +
	`{"name":123,"description":"a name that is no string","inputSchema":{"type":"object"}},` +
	`{"name":"last","description":"after the bad one","inputSchema":{"type":"object"}}]}`

// serveBadTool answers initialize and tools/list (badListing) on stdin
// and stdout, one JSON-RPC message a line, and any other request with
// "method not found", as a server of the 2025-11-25 revision does.
func serveBadTool() error {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req rpcRequest
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return err
		}
		if req.Method == "" {
			return fmt.Errorf("no method: %s", in.Text())
		}
		if len(req.ID) > 0 { // not a notification
			fmt.Println(req.answer(badListing, ""))
		}
	}
	return in.Err()
}

// rpcRequest is what the servers written by hand read of a JSON-RPC
// request.
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"params"`
}

// answer is the JSON-RPC answer to r: to initialize, the version asked
// for and the tools capability; to tools/list, the result listing; to
// tools/call, the result result unless it is empty; to any other request
// (one of a later revision, server/discover: the client falls back),
// "method not found".
func (r *rpcRequest) answer(listing, result string) string {
	switch r.Method {
	case "initialize":
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"bad","version":"1"}}}`,
			r.ID, r.Params.ProtocolVersion)
	case "tools/list":
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, r.ID, listing)
	case "tools/call":
		if result != "" {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, r.ID, result)
		}
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, r.ID)
}

// wantBadToolLeftOut checks what Connect gave, up and err, for the
// server named server, which listed badListing: its two valid tools
// registered in reg, and the other reported. It closes up when the test ends.
func wantBadToolLeftOut(t *testing.T, up *mcp.Upstream, err error, reg *tools.Registry, server string) {
	t.Helper()
	if err != nil {
		t.Fatalf("Connect to a server listing one malformed tool = %v, want its other tools imported", err)
	}
	t.Cleanup(func() { up.Close() })
	snap := reg.Snapshot()
	_, first := snap.Lookup(server + "/first")
	_, last := snap.Lookup(server + "/last")
	if !first || !last || snap.Len() != 2 {
		t.Errorf("registry holds %d tools, %s/first %v, %s/last %v; want those two", snap.Len(), server, first, server, last)
	}
	want := "mcp: " + server + ": tool left out: the listing's tool 1 is no valid MCP tool: name: a JSON number, where MCP wants a string"
	if rej := up.Status().Rejected; len(rej) != 1 || rej[0].Error() != want {
		t.Errorf("Status().Rejected = %v, want [%s]", rej, want)
	}
}

// TestStdioMalformedToolLeftOut: one tool of a server's tools/list that is
// not a valid MCP tool (a number for its name) is left out and reported
// as any tool left out is (Status.Rejected, a warning), naming the server,
// its place in the list and what is wrong, and the server's other tools
// are imported, instead of the whole server failing with the decoder's
// message about Go struct fields.
func TestStdioMalformedToolLeftOut(t *testing.T) {
	ctx := testContext(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	reg := tools.NewRegistry()
	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "bad", Command: []string{exe}, Env: map[string]string{badToolServerEnv: "1"}},
		&mcp.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	wantBadToolLeftOut(t, up, err, reg, "bad")
	if !strings.Contains(logs.String(), "server=bad") || !strings.Contains(logs.String(), "tool 1 is no valid MCP tool") {
		t.Errorf("log = %q; want a warning naming the server and the tool's place in the list", logs.String())
	}
}

// TestStreamableHTTPMalformedToolSaysWhat: a tools/list answer over
// streamable HTTP too large for the filter to hold (an application/json
// body over the SDK's 16 MiB event bound, which the SDK reads whole)
// passes as it came, so a tool in it that is no valid MCP tool still
// fails the listing; the error says what is wrong in the listing, in
// MCP's terms, not the decoder's Go struct fields.
func TestStreamableHTTPMalformedToolSaysWhat(t *testing.T) {
	ctx := testContext(t)
	big := strings.Repeat("x", sdk.DefaultMaxEventSize)
	listing := `{"tools":[{"name":"big","description":"` + big + `","inputSchema":{"type":"object"}},` +
		`{"name":123,"inputSchema":{"type":"object"}}]}`
	_, err := mcp.Connect(ctx, tools.NewRegistry(), mcp.Server{Name: "web", URL: wireServer(t, false, listing, "")}, &mcp.Options{Logger: quiet})
	const want = "the server's tools/list answer is no valid MCP: tools.1.name: a JSON number, where MCP wants a string"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "Go struct") {
		t.Fatalf("Connect over HTTP to a listing with a malformed tool = %.300v; want an error saying %q", err, want)
	}
}
