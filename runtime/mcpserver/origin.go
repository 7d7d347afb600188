package mcpserver

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/runtime/server"
)

// codeForbiddenOrigin is the JSON-RPC error code of a request refused for
// its Origin: an implementation-defined server error (-32000 to -32099).
const codeForbiddenOrigin = -32000

// checkOrigin refuses, with 403 and before anything else, a request whose
// Origin header is present and names neither the request's own host nor
// one of [Options.AllowedOrigins]: the Streamable HTTP transport's defence
// against DNS rebinding and cross-site requests from a browser ("servers
// MUST validate the Origin header ... If the Origin header is present and
// invalid, servers MUST respond with HTTP 403 Forbidden"). A request
// without Origin (every client that is not a browser) passes. The MCP
// endpoint answers with a JSON-RPC error (id null); the approval
// endpoints are the HTTP contract's, so [server.CheckOrigin] answers
// them, in the contract's error body.
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	contract := server.CheckOrigin(next, s.opts.AllowedOrigins)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, ApprovalsPath) {
			contract.ServeHTTP(w, r)
			return
		}
		origin := r.Header.Get("Origin")
		if origin == "" || server.OriginAllowed(origin, r.Host, s.opts.AllowedOrigins) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write(errorFrame(nil, codeForbiddenOrigin, server.ForbiddenOriginMessage(origin)))
	})
}
