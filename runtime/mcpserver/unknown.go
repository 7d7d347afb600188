package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// notHandled starts the SDK's plain-text 400 for a message whose method it
// does not know (its jsonrpc2.ErrNotHandled, as the session transport
// writes it).
var notHandled = []byte("JSON RPC not handled")

// methodGuard turns the SDK's answer to a session request of a method it
// does not know (400, text/plain "JSON RPC not handled: ...", the SDK's
// words) into what JSON-RPC and the stdio transport answer: a -32601
// "method not found" error for the request's id, or 202 for a
// notification, which gets no answer. body is the request's body; any
// other answer passes unchanged.
type methodGuard struct {
	heldWriter // holds a 400
	body       []byte
	done       bool
}

func (g *methodGuard) WriteHeader(code int) {
	if code == http.StatusBadRequest && !g.done {
		g.held = code
		return
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *methodGuard) Write(b []byte) (int, error) {
	if g.held == 0 {
		if g.done {
			return len(b), nil
		}
		return g.ResponseWriter.Write(b)
	}
	g.held = 0
	msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(g.body))
	req, ok := msg.(*jsonrpc.Request)
	if !bytes.HasPrefix(b, notHandled) || err != nil || !ok {
		g.ResponseWriter.WriteHeader(http.StatusBadRequest)
		return g.ResponseWriter.Write(b)
	}
	g.done = true
	h := g.Header()
	h.Del("X-Content-Type-Options")
	if !req.IsCall() {
		h.Del("Content-Type")
		g.ResponseWriter.WriteHeader(http.StatusAccepted)
		return len(b), nil
	}
	id, _ := json.Marshal(req.ID.Raw())
	h.Set("Content-Type", "application/json")
	g.ResponseWriter.WriteHeader(http.StatusOK)
	_, err = g.ResponseWriter.Write(errorFrame(validID(id), jsonrpc.CodeMethodNotFound, fmt.Sprintf("method not found: %q", req.Method)))
	return len(b), err
}

// serveGuarded serves r with next through a methodGuard over body.
func serveGuarded(next http.Handler, w http.ResponseWriter, r *http.Request, body []byte) {
	g := &methodGuard{heldWriter: heldWriter{ResponseWriter: w}, body: body}
	next.ServeHTTP(g, r)
	g.finish()
}
