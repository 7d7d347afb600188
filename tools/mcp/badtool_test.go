package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
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

// serveBadTool answers initialize and tools/list on stdin and stdout, one
// JSON-RPC message a line, and any other request with "method not found",
// as a server of the 2025-11-25 revision does.
func serveBadTool() error {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return err
		}
		var result string
		switch req.Method {
		case "initialize":
			result = fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"bad","version":"1"}}`, req.Params.ProtocolVersion)
		case "tools/list":
			result = `{"tools":[{"name":"first","inputSchema":{"type":"object"}},` +
				`{"name":123,"description":"a name that is no string","inputSchema":{"type":"object"}},` +
				`{"name":"last","description":"after the bad one","inputSchema":{"type":"object"}}]}`
		case "":
			return fmt.Errorf("no method: %s", in.Text())
		default:
			if len(req.ID) > 0 { // a request of a later revision (server/discover): the client falls back
				fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", req.ID)
			}
			continue // or a notification
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
	}
	return in.Err()
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
	if err != nil {
		t.Fatalf("Connect to a server listing one malformed tool = %v, want its other tools imported", err)
	}
	defer up.Close()
	snap := reg.Snapshot()
	_, first := snap.Lookup("bad/first")
	_, last := snap.Lookup("bad/last")
	if !first || !last || snap.Len() != 2 {
		t.Errorf("registry holds %d tools, bad/first %v, bad/last %v; want those two", snap.Len(), first, last)
	}
	const want = "mcp: bad: tool left out: the listing's tool 1 is no valid MCP tool: name: a JSON number, where MCP wants a string"
	if rej := up.Status().Rejected; len(rej) != 1 || rej[0].Error() != want {
		t.Errorf("Status().Rejected = %v, want [%s]", rej, want)
	}
	if !strings.Contains(logs.String(), "server=bad") || !strings.Contains(logs.String(), "tool 1 is no valid MCP tool") {
		t.Errorf("log = %q; want a warning naming the server and the tool's place in the list", logs.String())
	}
}

// TestStreamableHTTPMalformedToolSaysWhat: over streamable HTTP a listing
// with a tool that is no valid MCP tool still fails the connection (the
// SDK decodes the whole answer), but the error says what is wrong in the
// listing, in MCP's terms, not the decoder's Go struct fields.
func TestStreamableHTTPMalformedToolSaysWhat(t *testing.T) {
	ctx := testContext(t)
	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	addEcho(srv, "echo_a")
	addEcho(srv, "echo_b")
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		maps.Copy(w.Header(), rec.Header())
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(bytes.Replace(rec.Body.Bytes(), []byte(`"name":"echo_b"`), []byte(`"name":123`), 1))
	}))
	defer ts.Close()
	_, err := mcp.Connect(ctx, tools.NewRegistry(), mcp.Server{Name: "web", URL: ts.URL}, &mcp.Options{Logger: quiet})
	const want = "the server's tools/list answer is no valid MCP: tools.1.name: a JSON number, where MCP wants a string"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "Go struct") {
		t.Fatalf("Connect over HTTP to a listing with a malformed tool = %v; want an error saying %q", err, want)
	}
}
