package server

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/runtime/gateway"
)

// OriginAllowed reports whether origin (a request's Origin header) may
// call a server reached as host (the request's Host): it is host's own
// origin (scheme http or https, the same host and port) or listed in
// allowed. It is the one Origin rule of toolgate's HTTP servers (the
// gateway's [CheckOrigin] and the MCP server's Streamable HTTP endpoint),
// their defence against DNS rebinding and cross-site browser requests.
func OriginAllowed(origin, host string, allowed []string) bool {
	if slices.Contains(allowed, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// ForbiddenOriginMessage is the message of a request refused for its
// Origin.
func ForbiddenOriginMessage(origin string) string {
	return "forbidden: the Origin " + strings.ToValidUTF8(textcut.Prefix(origin, 256), "\uFFFD") + " may not call this server (it is not the server's own origin)"
}

// CheckOrigin refuses, with 403 PERMISSION_DENIED in the contract's error
// body and before next (authentication included) sees it, a request whose
// Origin header is present and not allowed by [OriginAllowed] with
// allowed. A request without Origin (every client that is not a browser)
// passes.
func CheckOrigin(next http.Handler, allowed []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || OriginAllowed(origin, r.Host, allowed) {
			next.ServeHTTP(w, r)
			return
		}
		writeError(w, &gateway.Error{Type: gateway.PermissionDenied, Message: ForbiddenOriginMessage(origin)})
	})
}
