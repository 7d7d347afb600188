package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var quietLog = slog.New(slog.DiscardHandler)

// listServer is a transport to a fake server that answers initialize and
// tools/list (with result, as written) and refuses other requests. Its
// answers reach the client in their wire form through the SDK's own
// jsonrpc.DecodeMessage, as the SDK's transports read them, so what the
// client then makes of a listing is the SDK's decoding.
type listServer struct {
	result  string
	replies chan []byte
	closed  chan struct{}
	once    sync.Once
}

func (s *listServer) Connect(context.Context) (sdk.Connection, error) { return s, nil }

func (s *listServer) Write(_ context.Context, m jsonrpc.Message) error {
	r, ok := m.(*jsonrpc.Request)
	if !ok || !r.ID.IsValid() {
		return nil // a notification
	}
	id, err := json.Marshal(r.ID.Raw())
	if err != nil {
		return err
	}
	reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id)
	switch r.Method {
	case "initialize":
		reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`, id)
	case "tools/list":
		reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, s.result)
	}
	select {
	case s.replies <- []byte(reply):
		return nil
	case <-s.closed:
		return io.EOF
	}
}

func (s *listServer) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case b := <-s.replies:
		return jsonrpc.DecodeMessage(b)
	case <-s.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *listServer) Close() error      { s.once.Do(func() { close(s.closed) }); return nil }
func (s *listServer) SessionID() string { return "" }

// sdkLists returns what the SDK's client makes of result as the answer
// to tools/list: its tools, or its error.
func sdkLists(t testing.TB, result string) ([]*sdk.Tool, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := &listServer{result: result, replies: make(chan []byte, 4), closed: make(chan struct{})}
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{Logger: quietLog})
	cs, err := client.Connect(ctx, srv, nil)
	if err != nil {
		t.Fatalf("connect to the fake server: %v", err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	return res.Tools, nil
}

// keeps reports whether listFilter keeps tool, the raw JSON of one tool
// of a tools/list answer.
func keeps(tool string) bool {
	return len(toolsOf((&listFilter{server: "s"}).validTools(json.RawMessage(`{"tools":[`+tool+`]}`)))) == 1
}

// toolsOf returns the tools of a tools/list result as listFilter reads
// them; none when it cannot.
func toolsOf(result json.RawMessage) []json.RawMessage {
	var res map[string]json.RawMessage
	var listed []json.RawMessage
	if json.Unmarshal(result, &res) != nil || json.Unmarshal(res["tools"], &listed) != nil {
		return nil
	}
	return listed
}

// TestListFilterDecodesAsSDK: listFilter leaves a tool out exactly when
// the SDK's client would fail the listing that holds it. The SDK decodes
// member names case-sensitively (segmentio/encoding, as its internal/json
// sets it up), so a member whose name differs from MCP's only in case is
// an unknown member it ignores: the filter, deciding with encoding/json,
// left out a tool with "Title": 7 or "Annotations": {"readOnlyHint": "no"}
// that the SDK takes.
func TestListFilterDecodesAsSDK(t *testing.T) {
	deep := strings.Repeat("[", 997) + strings.Repeat("]", 997)
	for _, tc := range []struct {
		name, tool string
		keep       bool
	}{
		{"valid", `{"name":"a","inputSchema":{"type":"object"}}`, true},
		{"a number for its name", `{"name":1,"inputSchema":{"type":"object"}}`, false},
		{"Title in another case, a number", `{"name":"a","Title":7,"inputSchema":{"type":"object"}}`, true},
		{"Name in another case, a string", `{"Name":"a","inputSchema":{"type":"object"}}`, true},
		{"Name in another case beside name", `{"name":"a","NAME":1,"inputSchema":{"type":"object"}}`, true},
		{"Annotations in another case", `{"name":"a","Annotations":{"readOnlyHint":"no"},"inputSchema":{"type":"object"}}`, true},
		{"readOnlyHint in another case", `{"name":"a","annotations":{"ReadOnlyHint":"no"},"inputSchema":{"type":"object"}}`, true},
		{"readOnlyHint a string", `{"name":"a","annotations":{"readOnlyHint":"no"},"inputSchema":{"type":"object"}}`, false},
		{"name twice, the second a number", `{"name":"a","name":1,"inputSchema":{"type":"object"}}`, false},
		{"_meta a number", `{"name":"a","_meta":1,"inputSchema":{"type":"object"}}`, false},
		{"null", `null`, true},
		{"nested as deep as the SDK reads", `{"name":"a","inputSchema":{"type":"object"},"x":` + deep[1:len(deep)-1] + `}`, true},
		{"nested deeper than the SDK reads", `{"name":"a","inputSchema":{"type":"object"},"x":` + deep + `}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, sdkErr := sdkLists(t, `{"tools":[`+tc.tool+`]}`)
			if sdkOK := sdkErr == nil; sdkOK != tc.keep {
				t.Fatalf("the SDK's listing of %.80s: err %v; the test expects it to decode: %v", tc.tool, sdkErr, tc.keep)
			}
			if got := keeps(tc.tool); got != tc.keep {
				t.Errorf("listFilter keeps %.80s = %v, want %v, as the SDK decodes it", tc.tool, got, tc.keep)
			}
		})
	}
}
