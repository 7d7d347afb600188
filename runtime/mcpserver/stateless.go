package mcpserver

import (
	"context"
	"net/http"
	"reflect"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/toolgate/toolgate/tools"
)

// Protocol revision 2026-07-28 has no initialize and no transport
// session: every request stands alone and names its revision in the
// MCP-Protocol-Version header (and _meta). Handler serves such requests
// with the SDK's stateless Streamable HTTP handler and the older ones,
// which open sessions, as before; both on the same endpoint.
//
// What a session held (the first-class tools found, their name
// bindings, the step counter and the gateway session) then lives in a
// principal context: one per principal (tenant and ID) per server,
// opened by its first stateless request and closed after
// [Options.SessionTimeout] without one (a request in flight, such as an
// open subscriptions/listen stream, keeps it open). So for a principal's
// stateless requests a name, once listed, names the same tool for the
// context's life, exactly as in a session; its calls without a step take
// the context's next step; a call with a step names the slot (context,
// step), so a retried request replays instead of running again. Each
// open context counts as one session under [Options.MaxSessions] and
// [Options.MaxSessionsPerPrincipal]: a request that would open one beyond
// them is refused with 429, Retry-After and a JSON-RPC error.

// isStateless reports whether r speaks a revision without sessions: its
// MCP-Protocol-Version names one, a date, from [newest] on. Anything else
// ("garbage" sorts after every date) is the SDK's to refuse as an
// unsupported version.
func isStateless(r *http.Request) bool {
	v := r.Header.Get("Mcp-Protocol-Version")
	_, err := time.Parse(time.DateOnly, v)
	return err == nil && v >= newest
}

// principalContexts are the open principal contexts, by ownerKey.
type principalContexts struct {
	s  *Server
	mu sync.Mutex
	by map[string]*principalContext
}

type principalContext struct {
	ss       *session
	last     time.Time // the end of its last request
	inFlight int       // requests being served
}

func newPrincipalContexts(s *Server) *principalContexts {
	return &principalContexts{s: s, by: map[string]*principalContext{}}
}

// acquire returns p's context, opening it under the session caps, for one
// request; release it when the request ends. Contexts idle past the
// timeout are closed first.
func (pc *principalContexts) acquire(p tools.Principal, owner string, now time.Time) (*session, *refusal) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for k, c := range pc.by {
		if c.inFlight == 0 && now.Sub(c.last) >= pc.s.opts.SessionTimeout {
			pc.closeLocked(k, c)
		}
	}
	if c, ok := pc.by[owner]; ok {
		c.inFlight++
		return c.ss, nil
	}
	if no := pc.s.sessions.reserve(owner, now); no != nil {
		return nil, no
	}
	ss := pc.s.newSession(p, true)
	pc.s.sessions.opened(owner, ss.id, now)
	pc.by[owner] = &principalContext{ss: ss, last: now, inFlight: 1}
	return ss, nil
}

// release ends one request of owner's context.
func (pc *principalContexts) release(owner string, now time.Time) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if c, ok := pc.by[owner]; ok {
		c.inFlight--
		c.last = now
		pc.s.sessions.used(owner, c.ss.id, now)
	}
}

func (pc *principalContexts) closeLocked(owner string, c *principalContext) {
	delete(pc.by, owner)
	c.ss.close()
	pc.s.sessions.closed(owner, c.ss.id)
	if pc.s.sessionClosed != nil {
		pc.s.sessionClosed(c.ss.id)
	}
}

// serveStateless serves a request of a revision without sessions in its
// principal's context; head is the beginning of a POST's body.
func (s *Server) serveStateless(w http.ResponseWriter, r *http.Request, p tools.Principal, owner string, head []byte, next http.Handler) {
	if r.Method != http.MethodPost {
		next.ServeHTTP(w, r) // the SDK answers 405: nothing to hold a context for
		return
	}
	ss, no := s.stateless.acquire(p, owner, time.Now())
	if no != nil {
		s.metrics.refused(no.reason)
		s.opts.Logger.InfoContext(r.Context(), "mcpserver: principal context refused",
			"reason", string(no.reason), "limit", no.limit, "principal", p.ID, "tenant", p.Tenant, "retry_after_s", no.retryAfter)
		writeRefusal(w, head, no)
		return
	}
	defer func() { s.stateless.release(owner, time.Now()) }()
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), newSessionKey{}, ss)))
}

// StaticListTTL is the ttlMs of a tools/list that never changes (with
// [Options.NoFirstClass]: find_tools and call_tool only).
const StaticListTTL = 24 * time.Hour

// cacheable sets the cache fields of the results that carry them
// (2026-07-28). The rule: a result may be cached for as long as nothing
// that decides it can change without the client being told.
//
//   - tools/list with first-class tools (the default) lists what the
//     caller's searches found in its session or principal context: it is
//     "private" (computed from the caller's authorization and finds, so
//     no cache may serve it to another principal), and its ttlMs is 0,
//     since the caller's own next find_tools changes it and a stateless
//     client that does not listen (subscriptions/listen) is never told.
//     A refetch costs one request and returns the same bytes while the
//     authorized catalog and the finds stay the same (tools sorted by
//     name, names bound for the context's life), so a prompt built from
//     it is byte-identical and a model's prompt cache stays valid.
//   - tools/list with Options.NoFirstClass is find_tools and call_tool,
//     for every principal, always: "public", ttlMs StaticListTTL.
//   - server/discover is the same for every principal: "public",
//     ttlMs StaticListTTL.
func (s *Server) cacheable(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
	static := int(StaticListTTL / time.Millisecond)
	switch req.(type) {
	case *sdk.ListToolsRequest:
		if s.opts.NoFirstClass {
			c.TTLMs, c.CacheScope = static, "public"
		} else {
			c.TTLMs, c.CacheScope = 0, "private"
		}
	case *sdk.ServerRequest[*sdk.DiscoverParams]:
		c.TTLMs, c.CacheScope = static, "public"
	default:
		c.TTLMs, c.CacheScope = 0, "private"
	}
}

// traceContext joins each request to the W3C trace context its client
// sent in _meta (traceparent, tracestate: SEP-414), on every revision:
// the gateway's execute_tool span becomes a child of the client's span.
// A malformed traceparent is ignored.
func traceContext(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if params := req.GetParams(); params != nil && !reflect.ValueOf(params).IsNil() {
			if m := params.GetMeta(); m != nil {
				carrier := propagation.MapCarrier{}
				for _, k := range []string{"traceparent", "tracestate"} {
					if v, ok := m[k].(string); ok && len(v) <= 512 {
						carrier[k] = v
					}
				}
				if len(carrier) > 0 {
					ctx = propagation.TraceContext{}.Extract(ctx, carrier)
				}
			}
		}
		return next(ctx, method, req)
	}
}
