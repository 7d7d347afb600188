package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/tools"
)

// ApprovalsPath is where Handler serves the gateway's approval endpoints:
// GET and POST ApprovalsPath + "{approval_id}" (see [server.NewHandler]).
const ApprovalsPath = "/v1/approvals/"

// principalKey holds the authenticated principal in auth.TokenInfo.Extra.
const principalKey = "toolgate.principal"

// Handler returns the Streamable HTTP handler, and the approval endpoints
// under [ApprovalsPath]. Every request must carry a bearer token
// [Options.Authenticate] accepts (else 401). The principal goes to the SDK as
// the token's user, so the SDK's own session-owner check runs on every
// request of a session (POST of any method, GET streams, DELETE); a
// request presenting another principal's session ID is answered 404, the
// same answer as for an ID that does not exist. A request that would open
// a session beyond [Options.MaxSessionsPerPrincipal] or [Options.MaxSessions]
// is answered 429 with Retry-After (the seconds until the least recently
// used session expires if it stays idle) and a JSON-RPC error (-32000)
// for its id. A request from a browser page of another origin (an Origin
// header that is not the server's own, nor in [Options.AllowedOrigins]) is
// answered 403 before anything else, [Options.Wrap] included.
func (s *Server) Handler() (http.Handler, error) {
	if s.opts.Authenticate == nil {
		return nil, errors.New("mcpserver: Options.Authenticate is required to serve HTTP")
	}
	// The SDK asks for a server on every request (to read its protocol
	// versions) and connects one only for a POST without a session ID:
	// admit creates that request's session once it is under the caps.
	probe := sdk.NewServer(&sdk.Implementation{Name: s.opts.Name, Version: s.opts.Version}, nil)
	mcpHandler := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if ss, ok := r.Context().Value(newSessionKey{}).(*session); ok {
			return ss.srv
		}
		return probe
	}, &sdk.StreamableHTTPOptions{Logger: s.opts.Logger, SessionTimeout: s.opts.SessionTimeout})
	// Requests of revision 2026-07-28 and later carry no session: the
	// SDK's stateless handler serves them, each in its principal's context
	// (see principalContexts). A client that goes away does not cancel its
	// call: the gateway records the outcome, and a retry replays it.
	statelessHandler := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if ss, ok := r.Context().Value(newSessionKey{}).(*session); ok {
			return ss.srv
		}
		return probe
	}, &sdk.StreamableHTTPOptions{Logger: s.opts.Logger, Stateless: true}) // PropagateRequestCancellation off: see below
	verify := func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		p, err := s.opts.Authenticate(r)
		if err != nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: ownerKey(p), Scopes: p.Scopes, Extra: map[string]any{principalKey: p}}, nil
	}
	protected := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(s.admit(mcpHandler, statelessHandler))

	approvals := server.NewHandler(s.gw, server.AuthenticatorFunc(func(ctx context.Context, bearer string) (tools.Principal, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
		if err != nil {
			return tools.Principal{}, err
		}
		r.Header.Set("Authorization", "Bearer "+bearer)
		return s.opts.Authenticate(r)
	}), &server.HandlerOptions{Logger: s.opts.Logger})

	mux := http.NewServeMux()
	mux.Handle(ApprovalsPath, approvals)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// A GET is the session's event stream: it lives as long as the
			// session, past the server's write timeout.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		}
		cw := &cleanWrites{heldWriter{ResponseWriter: w}}
		g := &sessionGuard{heldWriter: heldWriter{ResponseWriter: cw}, hide: r.Header.Get("Mcp-Session-Id") != ""}
		protected.ServeHTTP(g, r)
		g.finish()
	}))
	var h http.Handler = mux
	if s.opts.Wrap != nil {
		h = s.opts.Wrap(h)
	}
	return s.checkOrigin(h), nil
}

// ownerKey is the SDK's user ID of a principal: tenant and ID, unambiguously.
func ownerKey(p tools.Principal) string {
	b, _ := json.Marshal([2]string{p.Tenant, p.ID})
	return string(b)
}

// principalOf returns the principal Handler's verifier stored in ti.
func principalOf(ti *auth.TokenInfo) (tools.Principal, bool) {
	if ti == nil {
		return tools.Principal{}, false
	}
	p, ok := ti.Extra[principalKey].(tools.Principal)
	return p, ok && p.ID != "" && p.Tenant != ""
}

// sessionGuard adjusts two of the SDK's answers: a 401 names the scheme
// (WWW-Authenticate), and the 403 "session user mismatch" becomes the 404
// "session not found" of an unknown ID, so that another principal learns
// nothing about a session, not even that it exists.
type sessionGuard struct {
	heldWriter      // holds a 403
	hide       bool // the request named a session
	hidden     bool // the answer was replaced
}

var mismatch = []byte("session user mismatch")

func (g *sessionGuard) WriteHeader(code int) {
	switch {
	case code == http.StatusUnauthorized:
		g.Header().Set("WWW-Authenticate", `Bearer realm="toolgate"`)
	case code == http.StatusForbidden && g.hide:
		g.held = code
		return
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *sessionGuard) Write(b []byte) (int, error) {
	if g.held != 0 {
		code := g.held
		g.held = 0
		if bytes.HasPrefix(b, mismatch) {
			g.hidden = true
			g.ResponseWriter.WriteHeader(http.StatusNotFound)
			_, err := g.ResponseWriter.Write([]byte("session not found\n"))
			return len(b), err
		}
		g.ResponseWriter.WriteHeader(code)
	}
	if g.hidden {
		return len(b), nil
	}
	return g.ResponseWriter.Write(b)
}

// heldWriter is a ResponseWriter that a guard can hold a status in until
// it sees the body that follows; Flush lets the SDK stream events through
// it, and Unwrap gives [http.ResponseController] the connection underneath.
type heldWriter struct {
	http.ResponseWriter
	held int // a status not yet written
}

// finish writes a held status that no body followed.
func (g *heldWriter) finish() {
	if g.held != 0 {
		g.ResponseWriter.WriteHeader(g.held)
		g.held = 0
	}
}

func (g *heldWriter) Flush() {
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (g *heldWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }
