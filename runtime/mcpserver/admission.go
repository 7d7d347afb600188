package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/internal/jsonsyntax"
	"github.com/toolgate/toolgate/tools"
)

// The defaults of the HTTP session limits (see Options).
const (
	DefaultMaxSessions             = 1024
	DefaultMaxSessionsPerPrincipal = 32
	DefaultSessionTimeout          = 10 * time.Minute
)

// codeTooManySessions is the JSON-RPC error code of a refused session: an
// implementation-defined server error (-32000 to -32099).
const codeTooManySessions = -32000

// admission counts the open HTTP sessions, per principal and in total, and
// decides whether a new one may open. Its methods take the time as an
// argument; it is safe for concurrent use.
type admission struct {
	perPrincipal, total int
	timeout             time.Duration // the idle timeout, for Retry-After

	mu     sync.Mutex
	n      int                       // sessions open or opening
	owners map[string]*ownerSessions // by ownerKey; absent when it holds none
}

// ownerSessions are one principal's sessions.
type ownerSessions struct {
	opening int                  // admitted, the SDK's answer not yet seen
	seen    map[string]time.Time // open sessions by ID: the end of their last POST
}

func newAdmission(perPrincipal, total int, timeout time.Duration) *admission {
	return &admission{perPrincipal: perPrincipal, total: total, timeout: timeout, owners: map[string]*ownerSessions{}}
}

// refusal says why a session was not admitted and when to try again.
type refusal struct {
	reason     refusalReason
	limit      int // the cap met
	message    string
	retryAfter int // seconds, at least 1
}

// reserve admits a session for owner, or refuses it when the owner or the
// server holds its cap. An admitted session must be settled with opened
// or abandoned.
func (a *admission) reserve(owner string, now time.Time) *refusal {
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.owners[owner]
	if o != nil && o.opening+len(o.seen) >= a.perPrincipal {
		wait := a.retryAfter(leastRecent(o.seen), now)
		return &refusal{reason: refusedPerPrincipal, limit: a.perPrincipal, retryAfter: wait, message: fmt.Sprintf(
			"too many open sessions for this principal (the limit is %d): close one (HTTP DELETE with its Mcp-Session-Id) or retry after %d s, when the least recently used one expires if it stays idle",
			a.perPrincipal, wait)}
	}
	if a.n >= a.total {
		var oldest time.Time
		for _, o := range a.owners {
			if t := leastRecent(o.seen); oldest.IsZero() || (!t.IsZero() && t.Before(oldest)) {
				oldest = t
			}
		}
		wait := a.retryAfter(oldest, now)
		return &refusal{reason: refusedTotal, limit: a.total, retryAfter: wait, message: fmt.Sprintf(
			"the server has too many open sessions (the limit is %d): retry after %d s, when the least recently used one expires if it stays idle",
			a.total, wait)}
	}
	if o == nil {
		o = &ownerSessions{seen: map[string]time.Time{}}
		a.owners[owner] = o
	}
	o.opening++
	a.n++
	return nil
}

// leastRecent returns the earliest time of seen, or the zero time.
func leastRecent(seen map[string]time.Time) time.Time {
	var oldest time.Time
	for _, t := range seen {
		if oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	return oldest
}

// retryAfter is the number of seconds until a session last used at oldest
// expires if it stays idle, at least 1; 1 for the zero time (no session
// open, only some being opened, which settle within a request).
func (a *admission) retryAfter(oldest, now time.Time) int {
	if oldest.IsZero() {
		return 1
	}
	wait := oldest.Add(a.timeout).Sub(now)
	return max(1, int((wait+time.Second-1)/time.Second))
}

// opened settles a reservation of owner: the session id is open.
func (a *admission) opened(owner, id string, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.owners[owner]
	o.opening--
	o.seen[id] = now
}

// abandoned settles a reservation of owner that opened no session.
func (a *admission) abandoned(owner string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.owners[owner].opening--
	a.n--
	a.drop(owner)
}

// closed frees the slot of owner's session id; it may be called again.
func (a *admission) closed(owner, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.owners[owner]
	if o == nil {
		return
	}
	if _, ok := o.seen[id]; !ok {
		return
	}
	delete(o.seen, id)
	a.n--
	a.drop(owner)
}

// used records the end of a POST in owner's session id, which restarts
// its idle timeout.
func (a *admission) used(owner, id string, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if o := a.owners[owner]; o != nil {
		if _, ok := o.seen[id]; ok {
			o.seen[id] = now
		}
	}
}

func (a *admission) drop(owner string) {
	if o := a.owners[owner]; o.opening == 0 && len(o.seen) == 0 {
		delete(a.owners, owner)
	}
}

// open returns the number of sessions open or opening.
func (a *admission) open() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// newSessionKey carries the session that admit created to the SDK's
// getServer callback, which is given the request only.
type newSessionKey struct{}

// admit wraps the SDK's handler: a POST without a session ID (which opens
// a session) is first admitted under the caps, and its session is
// counted until it closes (DELETE, the idle timeout, or the server's
// end). A request of a revision without sessions (2026-07-28) is served
// by stateless in its principal's context instead. It runs after the
// bearer check, so it knows the principal.
func (s *Server) admit(next, stateless http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := principalOf(auth.TokenInfoFromContext(r.Context()))
		if !ok {
			http.Error(w, "unauthenticated", http.StatusUnauthorized)
			return
		}
		owner := ownerKey(p)
		var head []byte
		if r.Method == http.MethodPost {
			var err error
			if head, err = peekBody(r); err != nil {
				// The client went away, or ran past the read timeout.
				http.Error(w, "the request body could not be read", http.StatusBadRequest)
				return
			}
			if reply, ok := checkPost(head); !ok {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				w.Write(reply)
				return
			}
		}
		switch id := r.Header.Get("Mcp-Session-Id"); {
		case isStateless(r):
			s.serveStateless(w, r, p, owner, head, stateless)
		case id != "" && r.Method == http.MethodDelete:
			// The SDK closes the session before it answers 204: free the
			// slot now rather than when the session's watcher runs. (Another
			// principal's DELETE is refused, and owner holds no such ID.)
			rec := &statusRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			if rec.status == http.StatusNoContent {
				s.sessions.closed(owner, id)
			}
		case id != "" && r.Method == http.MethodPost:
			serveGuarded(next, w, r, head)
			s.sessions.used(owner, id, time.Now()) // the SDK restarts its idle timer
		case id != "":
			next.ServeHTTP(w, r)
		case r.Method != http.MethodPost:
			next.ServeHTTP(w, r) // the SDK refuses it: nothing to open
		default:
			s.openSession(w, r, p, owner, head, next)
		}
	})
}

// openSession serves a POST without a session ID, whose body begins with
// head. One that may open a session (an initialize: the SDK closes any
// other once answered) is admitted under the caps first, and its session
// counted until it closes.
func (s *Server) openSession(w http.ResponseWriter, r *http.Request, p tools.Principal, owner string, head []byte, next http.Handler) {
	if !mayInitialize(head) {
		serveGuarded(next, w, r, head) // on the probe server: answered, then closed
		return
	}
	if no := s.sessions.reserve(owner, time.Now()); no != nil {
		s.metrics.refused(no.reason)
		// The principal, never its token: an operator sees who meets a cap.
		s.opts.Logger.InfoContext(r.Context(), "mcpserver: session refused",
			"reason", string(no.reason), "limit", no.limit, "principal", p.ID, "tenant", p.Tenant, "retry_after_s", no.retryAfter)
		writeRefusal(w, head, no)
		return
	}
	ss := s.newSession(p, true)
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), newSessionKey{}, ss)))
	var live *sdk.ServerSession
	for x := range ss.srv.Sessions() {
		live = x
	}
	if live == nil { // the initialize failed: the SDK closed the session
		ss.close()
		s.sessions.abandoned(owner)
		return
	}
	s.sessions.opened(owner, ss.id, time.Now())
	go func() {
		live.Wait() // the client's DELETE, the idle timeout, or the server's end
		ss.close()
		s.sessions.closed(owner, ss.id)
		if s.sessionClosed != nil {
			s.sessionClosed(ss.id)
		}
	}()
}

// maxPeekBytes bounds what admit reads of a body before the SDK does (the
// SDK's own limit, which it still enforces on the whole body).
const maxPeekBytes = sdk.DefaultMaxRequestBodyBytes

// peekBody reads up to maxPeekBytes of r's body and puts them back in
// front of the rest.
func peekBody(r *http.Request) ([]byte, error) {
	head, err := io.ReadAll(io.LimitReader(r.Body, maxPeekBytes))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	return head, err
}

// checkPost checks a POST body whose first bytes are head as the stdio
// transport checks a frame ([checkFrame]), and each message of a batch
// likewise, and otherwise returns the error reply (for a batch, with a
// null id, naming the message). The SDK would decode an id beyond int64
// or with a fraction as another number and answer for that id, take the
// last of two ids, and answer the rest in plain text that names Go types.
// An empty body and one over maxPeekBytes are left to the SDK, and so is
// whether batches are taken (only at revisions that have them).
func checkPost(head []byte) (reply []byte, ok bool) {
	body := bytes.TrimSpace(head)
	if len(head) >= maxPeekBytes || len(body) == 0 {
		return nil, true
	}
	if body[0] != '[' {
		return checkFrame(body)
	}
	var batch []json.RawMessage
	if !jsonsyntax.Valid(body) || json.Unmarshal(body, &batch) != nil {
		return errorFrame(nil, jsonrpc.CodeParseError, "parse error: the body is not JSON"), false
	}
	for i, msg := range batch {
		problem := "not a JSON-RPC object"
		if msg[0] == '{' {
			_, problem = messageProblem(msg)
		}
		if problem != "" {
			return errorFrame(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: message %d of the batch: %s", i+1, problem)), false
		}
	}
	return nil, true
}

// mayInitialize reports whether body may hold an initialize request: it
// is not one JSON-RPC message object, read strictly (a member given twice
// could be read two ways), with another method.
func mayInitialize(body []byte) bool {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return true
	}
	if err := jcs.Check(body); err != nil {
		return true
	}
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &msg) != nil || msg.Method == "initialize"
}

// statusRecorder notes the status the SDK answers.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// writeRefusal answers a refused session: 429, Retry-After, and a JSON-RPC
// error for the id of the request in body (null when it holds none).
func writeRefusal(w http.ResponseWriter, body []byte, no *refusal) {
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	var id json.RawMessage
	if json.Unmarshal(body, &head) == nil {
		id = validID(head.ID)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(no.retryAfter))
	w.WriteHeader(http.StatusTooManyRequests)
	w.Write(errorFrame(id, codeTooManySessions, no.message))
}
