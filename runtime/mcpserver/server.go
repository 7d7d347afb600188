// Package mcpserver serves toolgate's progressive discovery and gateway to
// any MCP client (desktop assistants, IDEs, other agent frameworks): it
// stands between the client and a large catalog (tool files and upstream
// MCP servers) and shows the client two tools instead of hundreds:
//
//   - find_tools(query): the caller's authorized shortlist for a request
//     (package findtools: name, summary, whether it is read-only or
//     irreversible), or "select:<name>" to load a tool by name;
//   - call_tool(name, arguments[, step]): the call, through the gateway
//     (authorization again, validation, idempotency, approvals, audit).
//
// For clients that support notifications/tools/list_changed, each tool a
// session finds is also added to that session's tool list as a first-class
// tool (with its full input schema) that calls through the gateway too.
//
// Names. A first-class tool is listed under its bare name, sanitized to
// ^[a-zA-Z0-9_-]{1,64}$ ([tools.ModelName]), unless another tool of the
// tenant's catalog, whatever its scopes, is shown alike: the same bare name
// on another server (github/create_issue, gitlab/create_issue), or one that
// sanitizes the same (delete.repository, delete_repository). Then every such
// tool is listed under its server-qualified name (github__create_issue), so
// no server's tool can shadow another's. A name, once listed in a session,
// names the same tool for the whole session ([tools.SessionNames]): after
// the catalog changes and after the tool has left the list, another tool
// that now has that name is listed under its qualified name instead. A
// first-class tool that leaves the catalog (removed upstream, or
// quarantined by its pin) leaves the session's list, with
// tools/list_changed; its name stays reserved. call_tool takes a name the
// session listed, for the tool it was listed for (unknown once that tool
// has left); otherwise a tool's ID, or a bare name only one tool of the
// tenant has, whatever the caller's scopes ([gateway.Gateway.Resolve]): a
// shared bare name is refused for everyone, naming only the candidates
// the caller may use.
//
// Sessions. Every session has a random ID (128 bits), which is also its
// gateway session, so a new run never replays or collides with the steps
// of an earlier one on a durable store. The principal is fixed by
// configuration over stdio and taken from the bearer token of every request
// over Streamable HTTP, where a session belongs to the principal that
// opened it for every method (the SDK's session-owner check): another
// principal presenting its ID gets 404, as for an ID that does not exist.
// A principal holds at most [Options.MaxSessionsPerPrincipal] sessions and
// the server [Options.MaxSessions]; one more is refused with 429 and
// Retry-After, and a session idle for [Options.SessionTimeout] closes.
// Discovery works on the caller's authorized view only, so a tool it may
// not use can be neither found nor called (docs/design.md invariants 1 and 2).
//
// Hostile input. Over stdio a malformed frame (not JSON, not one JSON-RPC
// 2.0 object, a member twice, over [Options.MaxFrameBytes]) is answered with
// a JSON-RPC error (-32700 or -32600) and the session goes on. call_tool
// checks its own arguments (a name, an arguments object, a step from 1 to
// [MaxStep], nothing else); the tool's arguments reach the gateway as the
// bytes the client sent, and are validated there.
//
// Revisions. Over HTTP a request of protocol revision 2026-07-28 (named
// in MCP-Protocol-Version) is served statelessly (server/discover, the
// Mcp-Method and Mcp-Name headers, no transport session) in its
// principal's context, which holds what a session holds; older revisions
// open sessions as before (see the comment at the top of stateless.go).
// tools/list carries ttlMs and cacheScope by the rule of
// the comment on cacheable in stateless.go, and a request's _meta traceparent joins
// the gateway's spans to the client's trace.
//
// Approvals. A call the gateway holds for a human (an irreversible tool,
// a tainted session) is asked for in-band where the client can answer an
// elicitation: an input_required result carrying the elicitation
// ([ApprovalInput]) and a signed, expiring request state bound to the
// principal, the tool, the canonical arguments and the gateway slot
// (2026-07-28), or the elicitation itself (older revisions). The answer
// only resumes the call; the approval is a second principal's, holding
// approvals:grant: over HTTP at /v1/approvals/{approval_id} on the same
// server (the gateway's HTTP contract), or `toolgate mcp approve` on the
// same --data store. A client that cannot answer an elicitation gets
// CONFIRMATION_REQUIRED with an approval_id and sends the same call with
// the same step again; where no one could grant it
// ([Options.HasApprover]) the refusal says so ([CodeNoApprover]).
package mcpserver

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// Authenticator maps an HTTP request (its bearer token) to a principal. It
// returns an error for a missing or unknown token.
type Authenticator func(r *http.Request) (tools.Principal, error)

// ErrUnauthenticated is returned to a client whose request carries no
// valid credentials.
var ErrUnauthenticated = errors.New("mcpserver: unauthenticated")

// Options configures a Server. A nil *Options means all defaults; each
// field's zero value is documented.
type Options struct {
	// Principal is the caller over stdio. It must be set to serve stdio.
	Principal tools.Principal
	// Authenticate maps each HTTP request to a principal. It must be set to
	// serve HTTP.
	Authenticate Authenticator
	// AllowedOrigins lists the origins ("https://app.example.com"), besides
	// the server's own, whose browser pages may call the HTTP handler: a
	// request with any other Origin header is refused with 403 (DNS
	// rebinding, cross-site requests). A request without Origin (a client
	// that is not a browser) is never refused for it. Nil allows the
	// server's own origin only.
	AllowedOrigins []string
	// Wrap, when set, wraps the HTTP handler's endpoints (the MCP endpoint
	// and the approval endpoints) inside the Origin check, so that a
	// request of a foreign origin is refused with 403 before the wrapper
	// sees it, whatever the wrapper would answer: an OAuth resource
	// server's oauth.Verifier.Protect (which would challenge it with 401),
	// a mux that adds GET /metrics. Nil wraps nothing.
	Wrap func(http.Handler) http.Handler
	// K is the number of tools find_tools returns. Zero means 5.
	K int
	// NoFirstClass turns off adding found tools to the session's tool list.
	NoFirstClass bool
	// OfferUnconnected makes find_tools return, and list first-class, the
	// tools that cannot run (no handler: a catalog file's tools with no
	// server connected, [tools.Tool.Runnable]), for a catalog that is there
	// for discovery only; a call of one is still refused (UNKNOWN_TOOL,
	// code [gateway.CodeServerNotConnected]). False (the zero value) never
	// offers them. Either way they count in the bare-name rule
	// ([tools.View.Resolve]), so a name shared with one stays ambiguous.
	OfferUnconnected bool
	// MaxFirstClass bounds the found tools a session's list holds (oldest
	// are removed first; a removed tool's name stays bound to it for the
	// session). Zero means 16.
	MaxFirstClass int
	// MaxFrameBytes bounds one stdio frame; a longer one is refused with a
	// JSON-RPC error without being buffered. Zero means 8 MiB.
	MaxFrameBytes int
	// SessionTimeout closes an HTTP session that has had no POST for that
	// long (the SDK's StreamableHTTPOptions.SessionTimeout: an open GET
	// event stream does not keep a session alive; a client pings). Zero
	// means [DefaultSessionTimeout] (10 minutes).
	SessionTimeout time.Duration
	// MaxSessionsPerPrincipal bounds the HTTP sessions one principal
	// (tenant and ID, whatever its tokens) holds open at once; a request
	// for one more is answered 429 with Retry-After and a JSON-RPC error.
	// Zero means [DefaultMaxSessionsPerPrincipal] (32).
	MaxSessionsPerPrincipal int
	// MaxSessions bounds the HTTP sessions open at once, all principals
	// together, answered as MaxSessionsPerPrincipal. Zero means
	// [DefaultMaxSessions] (1024). For both caps, and for SessionTimeout,
	// a principal's context for its stateless (2026-07-28) requests
	// counts as one session.
	MaxSessions int
	// Registerer receives the HTTP session metrics: the gauge
	// toolgate_mcp_sessions (open sessions) and the counter
	// toolgate_mcp_session_refusals_total{reason} (reason per_principal
	// or total: the cap a refused session met). Nil registers none.
	Registerer prometheus.Registerer
	// Logger receives errors, and each refused session at Info (the
	// principal's ID and tenant, never its token). Nil means
	// slog.Default().
	Logger *slog.Logger
	// Name and Version identify the server to clients. Zero means
	// "toolgate" and "0.1.0".
	Name, Version string

	// StateKey signs (HMAC-SHA256) the request state of a call held for
	// approval, which the client echoes back to resume the call. It must
	// be at least 32 bytes; servers that share a store and should resume
	// each other's calls share it. Nil means a random key per Server: a
	// held call's state then does not survive a restart (the client sends
	// the call again and gets a new one; the approval itself, in the
	// store, still holds).
	StateKey []byte
	// StateTTL bounds how long a held call's request state can resume
	// it. Zero means [DefaultStateTTL] (1 hour, the gateway's default
	// approval lifetime); past it the client sends the call again.
	StateTTL time.Duration
	// ElicitTimeout bounds how long a held call waits for a session
	// revision's client (2025-06-18, 2025-11-25) to answer the approval
	// elicitation the server sends it during the call: past it the call
	// is answered with a JSON-RPC error saying to send it again with the
	// same step, nothing runs, and the approval stays pending. Zero
	// means [DefaultElicitTimeout] (2 minutes). 2026-07-28 clients are
	// answered at once (input_required) and never wait.
	ElicitTimeout time.Duration
	// HasApprover reports whether a principal other than requester can
	// grant requester's held calls on this server. Where it reports
	// false, a held call is refused with code [CodeNoApprover] and a
	// message that says so, rather than waiting for an approval no one
	// can give. Nil means an approver may exist (the server cannot know
	// who else holds approvals:grant or the store): the held call is
	// answered as usual. It is called once per held call.
	HasApprover func(ctx context.Context, requester tools.Principal) bool
}

// Server is the MCP facade over a registry, a discoverer and a gateway.
// It is safe for concurrent use by many sessions.
type Server struct {
	reg  *tools.Registry
	disc *discovery.Discoverer
	gw   *gateway.Gateway
	opts Options

	sessions      *admission // the HTTP sessions open, under the caps
	stateless     *principalContexts
	stateKey      []byte           // Options.StateKey, or a random one
	now           func() time.Time // the clock of request states (tests set it)
	metrics       *metrics         // nil without [Options.Registerer]
	sessionClosed func(id string)  // for tests: after an HTTP session's slot is freed
	// elicitDeadline bounds the wait for an answer to an elicitation:
	// [context.WithTimeout] (tests hold the deadline until the client has
	// the request).
	elicitDeadline func(context.Context, time.Duration) (context.Context, context.CancelFunc)
}

// New returns a Server. gw must execute over reg. disc answers find_tools
// and is told of every call ([discovery.Discoverer.RecordOutcome]) under the
// MCP session's ID, so that its Log and metrics link each call to the
// session's searches ([discovery.Misses]).
func New(reg *tools.Registry, disc *discovery.Discoverer, gw *gateway.Gateway, opts *Options) (*Server, error) {
	if reg == nil || disc == nil || gw == nil {
		return nil, errors.New("mcpserver: registry, discoverer and gateway are required")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.K < 0:
		return nil, errors.New("mcpserver: Options.K must not be negative")
	case o.MaxFirstClass < 0:
		return nil, errors.New("mcpserver: Options.MaxFirstClass must not be negative")
	case o.MaxFrameBytes < 0:
		return nil, errors.New("mcpserver: Options.MaxFrameBytes must not be negative")
	case o.SessionTimeout < 0:
		return nil, errors.New("mcpserver: Options.SessionTimeout must not be negative")
	case o.MaxSessionsPerPrincipal < 0:
		return nil, errors.New("mcpserver: Options.MaxSessionsPerPrincipal must not be negative")
	case o.MaxSessions < 0:
		return nil, errors.New("mcpserver: Options.MaxSessions must not be negative")
	case o.StateKey != nil && len(o.StateKey) < 32:
		return nil, fmt.Errorf("mcpserver: Options.StateKey must be at least 32 bytes, not %d", len(o.StateKey))
	case o.StateTTL < 0:
		return nil, errors.New("mcpserver: Options.StateTTL must not be negative")
	case o.ElicitTimeout < 0:
		return nil, errors.New("mcpserver: Options.ElicitTimeout must not be negative")
	}
	if o.K == 0 {
		o.K = 5
	}
	if o.MaxFirstClass == 0 {
		o.MaxFirstClass = 16
	}
	if o.MaxFrameBytes == 0 {
		o.MaxFrameBytes = 8 << 20
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.MaxSessionsPerPrincipal == 0 {
		o.MaxSessionsPerPrincipal = DefaultMaxSessionsPerPrincipal
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.StateTTL == 0 {
		o.StateTTL = DefaultStateTTL
	}
	if o.ElicitTimeout == 0 {
		o.ElicitTimeout = DefaultElicitTimeout
	}
	key := o.StateKey
	if key == nil {
		key = make([]byte, 32)
		rand.Read(key)
	}
	if o.Name == "" {
		o.Name = "toolgate"
	}
	if o.Version == "" {
		o.Version = "0.1.0"
	}
	s := &Server{reg: reg, disc: disc, gw: gw, opts: o, stateKey: key, now: time.Now, elicitDeadline: context.WithTimeout,
		sessions: newAdmission(o.MaxSessionsPerPrincipal, o.MaxSessions, o.SessionTimeout)}
	s.stateless = newPrincipalContexts(s)
	m, err := newMetrics(o.Registerer, s.sessions.open)
	if err != nil {
		return nil, err
	}
	s.metrics = m
	return s, nil
}

// Run serves one session over t as [Options.Principal] until the client
// disconnects or ctx ends. t is used as it is: to serve a process's stdin
// and stdout, use ServeStdio, which also answers malformed frames.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	if err := s.stdioPrincipal(); err != nil {
		return err
	}
	ss := s.newSession(s.opts.Principal, false)
	defer ss.close()
	return ss.srv.Run(ctx, t)
}

// ServeStdio serves one session as [Options.Principal] over newline-delimited
// JSON-RPC on in and out (a process's stdin and stdout) until in ends, the
// client disconnects or ctx ends. A frame that is not one JSON-RPC 2.0
// message gets a JSON-RPC error on out (-32700 not JSON, -32600 anything
// else, among them a frame over [Options.MaxFrameBytes]), and the session
// continues.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	if err := s.stdioPrincipal(); err != nil {
		return err
	}
	ss := s.newSession(s.opts.Principal, false)
	defer ss.close()
	return ss.srv.Run(ctx, guardFrames(in, out, s.opts.MaxFrameBytes))
}

func (s *Server) stdioPrincipal() error {
	if s.opts.Principal.ID == "" || s.opts.Principal.Tenant == "" {
		return errors.New("mcpserver: Options.Principal (ID and tenant) is required to serve stdio")
	}
	return nil
}

// offered narrows view to the tools find_tools offers: those that can run,
// unless [Options.OfferUnconnected].
func (s *Server) offered(view *tools.View) *tools.View {
	if s.opts.OfferUnconnected {
		return view
	}
	return view.Filter((*tools.Tool).Runnable)
}
