package mcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// wireServer is a streamable HTTP MCP server written by hand, so that its
// answers are exactly these bytes: it answers initialize, tools/list
// with listing and tools/call with result (unless it is empty), each as
// an application/json body or, when sse, as one event
// of a text/event-stream (its data split over two data lines, after a
// comment line); a notification with 202, any other request with
// "method not found", a GET with 405 (no standalone stream).
func wireServer(t *testing.T, sse bool, listing, result string) string {
	t.Helper()
	return statusServer(t, sse, listing, result, http.StatusOK, "")
}

// statusServer is [wireServer], except that a tools/call is answered
// with the HTTP status callStatus, and callBody ("$ID" in it replaced by
// the request's id) as an application/json body, when callStatus is not
// 200.
func statusServer(t *testing.T, sse bool, listing, result string, callStatus int, callBody string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req rpcRequest
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if req.Method == "tools/call" && callStatus != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(callStatus)
			io.WriteString(w, strings.ReplaceAll(callBody, "$ID", string(req.ID)))
			return
		}
		msg := req.answer(listing, result)
		if !sse {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, msg)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		head, tail, _ := strings.Cut(msg, `"result":`)
		fmt.Fprintf(w, ": a comment\nevent: message\ndata: %s\"result\":\r\ndata: %s\n\n", head, tail)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestStreamableHTTPMalformedToolLeftOut: over streamable HTTP, as over
// stdio, a tool of a tools/list answer that is no valid MCP tool (a number
// for its name) is left out and reported (Status.Rejected) by its place
// in the listing and what is wrong, and the server's other tools are
// imported, whether the answer comes as application/json or as an event
// of a text/event-stream. Before, the SDK refused the whole answer and
// Connect failed.
func TestStreamableHTTPMalformedToolLeftOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		sse  bool
	}{
		{"application/json", false},
		{"text/event-stream", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			reg := tools.NewRegistry()
			up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "web", URL: wireServer(t, tc.sse, badListing, "")}, &mcp.Options{Logger: quiet})
			wantBadToolLeftOut(t, up, err, reg, "web")
		})
	}
}
