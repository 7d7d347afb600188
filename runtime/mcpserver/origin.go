package mcpserver

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/runtime/server"
)

// codeForbiddenOrigin is the JSON-RPC error code of a request refused for
// its Origin: an implementation-defined server error (-32000 to -32099).
const codeForbiddenOrigin = -32000

// checkOrigin refuses, with 403 and before anything else, a request whose
// Origin header is present and names neither the request's own host nor
// one of Options.AllowedOrigins: the Streamable HTTP transport's defence
// against DNS rebinding and cross-site requests from a browser ("servers
// MUST validate the Origin header ... If the Origin header is present and
// invalid, servers MUST respond with HTTP 403 Forbidden"). A request
// without Origin (every client that is not a browser) passes. The MCP
// endpoint answers with a JSON-RPC error (id null), the approval
// endpoints with the HTTP contract's error body.
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || s.originAllowed(origin, r.Host) {
			next.ServeHTTP(w, r)
			return
		}
		msg := server.ForbiddenOriginMessage(origin)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		if strings.HasPrefix(r.URL.Path, ApprovalsPath) {
			b, _ := json.Marshal(map[string]any{"success": false, "error_type": "PERMISSION_DENIED", "message": msg, "retryable": false})
			w.Write(b)
			return
		}
		w.Write(errorFrame(nil, codeForbiddenOrigin, msg))
	})
}

// originAllowed reports whether origin (an Origin header) may call the
// server reached as host: [server.OriginAllowed] with
// Options.AllowedOrigins.
func (s *Server) originAllowed(origin, host string) bool {
	return server.OriginAllowed(origin, host, s.opts.AllowedOrigins)
}
