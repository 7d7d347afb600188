package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolgate/toolgate/internal/errorid"
	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// Authenticator maps a bearer token to the principal it stands for. It
// returns an error (any) for an unknown token. It must be safe for
// concurrent use. [TokenFile] is the default implementation; an
// oauth.Verifier (runtime/server/oauth) is another.
type Authenticator interface {
	Authenticate(ctx context.Context, bearer string) (tools.Principal, error)
}

// AuthenticatorFunc adapts a function to [Authenticator].
type AuthenticatorFunc func(ctx context.Context, bearer string) (tools.Principal, error)

// Authenticate implements [Authenticator].
func (f AuthenticatorFunc) Authenticate(ctx context.Context, bearer string) (tools.Principal, error) {
	return f(ctx, bearer)
}

// DiscoverFunc returns the shortlist of tools for a principal's query; its
// result is sent as the JSON body of POST /v1/discover.
type DiscoverFunc func(ctx context.Context, p tools.Principal, req DiscoverRequest) (any, error)

// DiscoverRequest is a checked POST /v1/discover body, as a
// [DiscoverFunc] receives it.
type DiscoverRequest struct {
	// Query is the request in the user's words: not blank, at most
	// [MaxQueryBytes].
	Query string
	// K is the shortlist size, 1 to 50 (5 when the body has no "k").
	K int
	// SessionID is the optional "session_id": the session of the
	// /v1/tools/call steps that follow, so that a discovery log can link
	// the tool finally called to this query. Empty when not given.
	SessionID string
}

// HandlerOptions configures [NewHandler]. A nil *HandlerOptions means
// defaults.
type HandlerOptions struct {
	// MaxBodyBytes bounds a request body; a larger body is 413
	// [RequestTooLarge]. Zero means [DefaultMaxBodyBytes] (1 MiB).
	MaxBodyBytes int64
	// Discover serves POST /v1/discover ([Discover] builds the hook
	// over discovery). Nil answers 501 [NotImplemented].
	Discover DiscoverFunc
	// Called, when set, is told of each POST /v1/tools/call the gateway
	// answered (a well-formed body with an unambiguous tool name), after
	// it answered; call.Tool is the tool's ID when the name resolved to
	// one, err the gateway's error (UNKNOWN_TOOL, PERMISSION_DENIED, ...),
	// nil for a success. A discovery log records with it which tool a
	// client finally called ([Called] builds the hook).
	// It runs on the request's goroutine, before the answer is written,
	// and is called concurrently.
	Called func(ctx context.Context, call gateway.Call, err error)
	// Gatherer serves GET /metrics. Nil means no /metrics endpoint (404).
	Gatherer prometheus.Gatherer
	// Logger receives request failures. Nil means slog.Default().
	Logger *slog.Logger
}

// DefaultMaxBodyBytes is the request body limit when
// [HandlerOptions.MaxBodyBytes] is zero.
const DefaultMaxBodyBytes = 1 << 20

// MaxQueryBytes bounds the query of POST /v1/discover: a request in a
// user's words is far shorter, and the search's cost grows with it.
const MaxQueryBytes = 4096

// NewHTTPServer returns an [http.Server] for handler with the timeouts the
// HTTP contract expects: 5s to read the headers, 30s to read the
// whole request, writeTimeout to answer (it must exceed the longest tool
// timeout plus its lease grace, or a slow call is cut off after it ran; zero
// means 2 minutes), 2 minutes idle, 64 KiB of headers.
func NewHTTPServer(addr string, handler http.Handler, writeTimeout time.Duration) *http.Server {
	if writeTimeout <= 0 {
		writeTimeout = 2 * time.Minute
	}
	return &http.Server{
		Addr:              addr,
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// NewHandler serves the gateway over HTTP as docs/design.md's contract says:
//
//	POST /v1/tools/call             {"session_id","step","tool","arguments"} →
//	                                200 {"success":true,"result","cached","idempotency_key",
//	                                     "attempts","previous_attempt_uncertain"}
//	POST /v1/approvals/{approval_id} grant an approval (the bearer needs approvals:grant; the body is empty or {}),
//	                                or deny it with {"decision":"deny"} ({"decision":"grant"} grants) →
//	                                200 {"success":true,"approval":{...}}
//	GET  /v1/approvals/{approval_id} read it first (the requester, or a holder of approvals:grant)
//	POST /v1/discover               {"query","k","session_id"?} → the Discover hook's result (query ≤ MaxQueryBytes, 1 ≤ k ≤ 50, default 5)
//	GET  /metrics                   Prometheus exposition of HandlerOptions.Gatherer
//	GET  /healthz                   200 {"status":"ok"}
//
// HEAD is served wherever GET is; any other method an endpoint does not
// serve is 405 METHOD_NOT_ALLOWED with an Allow header naming those it does.
//
// Every error has the body {"success":false,"error_type","message",
// "retryable","retry_after"?,"details"?} (plus "approval_id" for 428 and
// for the 403 of a call whose approval an approver denied,
// "idempotency_key" once derived, "code" and "cached" for DOMAIN_ERROR,
// "attempts" for an uncertain outcome),
// with its status from [StatusCode] and a Retry-After header (whole
// seconds, rounded up; retry_after carries the same number) when there is a
// hint. A request body that is not JSON, has duplicate or unknown members,
// or has members of the wrong type is 422 VALIDATION_ERROR, like bad
// arguments; a body over [HandlerOptions.MaxBodyBytes] is 413 REQUEST_TOO_LARGE; a missing
// or unknown bearer token is 401 UNAUTHENTICATED. "step" is required (an
// integer ≥ 0), "arguments" defaults to {} and is validated on the bytes
// sent. "tool" is a tool's ID or its bare name when exactly one tool the
// bearer may use has it ([gateway.Gateway.Resolve]); an ambiguous bare name is 422
// VALIDATION_ERROR with "candidates", the IDs the bearer may use. Internal
// failures (a store, a hook, a panic) answer 500 INTERNAL_ERROR with an
// "error_id" that names the log entry; their text never reaches the
// client. Serve it with [NewHTTPServer]'s timeouts. A nil auth authenticates nobody (every call is 401). The
// handler is safe for concurrent use.
func NewHandler(g *gateway.Gateway, auth Authenticator, opts *HandlerOptions) http.Handler {
	h := &httpHandler{g: g, auth: auth, maxBody: DefaultMaxBodyBytes, log: slog.Default()}
	if opts != nil {
		if opts.MaxBodyBytes > 0 {
			h.maxBody = opts.MaxBodyBytes
		}
		h.discover = opts.Discover
		h.called = opts.Called
		if opts.Logger != nil {
			h.log = opts.Logger
		}
		if opts.Gatherer != nil {
			h.metrics = promhttp.HandlerFor(opts.Gatherer, promhttp.HandlerOpts{})
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/tools/call", route(nil, h.call))
	mux.HandleFunc("/v1/approvals/{approval_id}", route(h.showApproval, h.approve))
	mux.HandleFunc("/v1/discover", route(nil, h.discoverTools))
	mux.HandleFunc("/healthz", route(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}, nil))
	if h.metrics != nil {
		mux.HandleFunc("/metrics", route(h.metrics.ServeHTTP, nil))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &gateway.Error{Type: gateway.NotFound, Message: "no endpoint " + textcut.Prefix(r.URL.Path, 128)})
	})
	return h.recoverPanics(mux)
}

type httpHandler struct {
	g        *gateway.Gateway
	auth     Authenticator
	maxBody  int64
	discover DiscoverFunc
	called   func(ctx context.Context, call gateway.Call, err error)
	metrics  http.Handler
	log      *slog.Logger
}

// route serves an endpoint's methods: GET (and HEAD, which net/http
// answers without the body) with get, POST with post; a nil handler is a
// method the endpoint does not serve. Any other method is 405 with an
// Allow header naming those it serves (RFC 9110 §15.5.6).
func route(get, post http.HandlerFunc) http.HandlerFunc {
	var allowed []string
	if get != nil {
		allowed = append(allowed, http.MethodGet, http.MethodHead)
	}
	if post != nil {
		allowed = append(allowed, http.MethodPost)
	}
	allow := strings.Join(allowed, ", ")
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case get != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			get(w, r)
		case post != nil && r.Method == http.MethodPost:
			post(w, r)
		default:
			w.Header().Set("Allow", allow)
			writeError(w, &gateway.Error{Type: MethodNotAllowed, Message: r.URL.Path + " accepts " + allow + " only"})
		}
	}
}

// ErrNoBearerToken is [BearerToken]'s error for a request without an
// "Authorization: Bearer" header.
var ErrNoBearerToken = errors.New("server: no bearer token")

// ErrAuthorizationRepeated is [BearerToken]'s error for a request with the
// Authorization header more than once.
var ErrAuthorizationRepeated = errors.New("server: more than one Authorization header")

// BearerToken returns the token of r's "Authorization: Bearer TOKEN"
// header (the scheme in any case). It is [ErrNoBearerToken] when there is
// none (no header, or another scheme), and [ErrAuthorizationRepeated] when
// the header comes more than once, whatever the tokens: a proxy in front
// may read the last where the server reads the first, and the two would
// authenticate different principals.
func BearerToken(r *http.Request) (string, error) {
	if len(r.Header.Values("Authorization")) > 1 {
		return "", ErrAuthorizationRepeated
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", ErrNoBearerToken
	}
	return strings.TrimSpace(token), nil
}

// principal authenticates the bearer token.
func (h *httpHandler) principal(w http.ResponseWriter, r *http.Request) (tools.Principal, bool) {
	token, err := BearerToken(r)
	if err != nil {
		msg := "missing bearer token (Authorization: Bearer <token>)"
		if errors.Is(err, ErrAuthorizationRepeated) {
			msg = "more than one Authorization header: send one (Authorization: Bearer <token>)"
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate"`)
		writeError(w, &gateway.Error{Type: gateway.Unauthenticated, Message: msg})
		return tools.Principal{}, false
	}
	var p tools.Principal
	err = ErrUnknownToken // no Authenticator: nobody is authenticated
	if h.auth != nil {
		p, err = h.auth.Authenticate(r.Context(), token)
	}
	if err != nil || p.ID == "" || p.Tenant == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate", error="invalid_token"`)
		writeError(w, &gateway.Error{Type: gateway.Unauthenticated, Message: "unknown bearer token"})
		return tools.Principal{}, false
	}
	return p, true
}

// request authenticates the caller and reads the request's body (see
// body); ok false means it has answered with an error.
func (h *httpHandler) request(w http.ResponseWriter, r *http.Request, emptyOK bool) (p tools.Principal, obj map[string]any, data []byte, ok bool) {
	if p, ok = h.principal(w, r); !ok {
		return p, nil, nil, false
	}
	obj, data = h.body(w, r, emptyOK)
	return p, obj, data, obj != nil
}

// body reads and strictly parses a JSON object body and returns it with
// the bytes read; nil means it has answered with an error. An empty body
// is {} when emptyOK.
func (h *httpHandler) body(w http.ResponseWriter, r *http.Request, emptyOK bool) (map[string]any, []byte) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, &gateway.Error{Type: RequestTooLarge, Message: fmt.Sprintf("request body exceeds %d bytes", h.maxBody)})
			return nil, nil
		}
		writeError(w, &gateway.Error{Type: gateway.ValidationError, Message: "cannot read the request body", Retryable: true})
		return nil, nil
	}
	if emptyOK && len(strings.TrimSpace(string(data))) == 0 {
		return map[string]any{}, data
	}
	v, err := jcs.Parse(data)
	if err != nil {
		writeError(w, invalidBody("", strings.TrimSpace("not valid JSON "+jcs.Describe(err))))
		return nil, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		writeError(w, invalidBody("", "not a JSON object"))
		return nil, nil
	}
	return obj, data
}

// fields checks that obj has only the allowed members (hint, when not
// empty, follows their list). Of several unknown members it names the
// first in byte order, so a client gets the same answer each time.
func fields(obj map[string]any, hint string, allowed ...string) *gateway.Error {
	unknown, found := "", false
	for k := range obj {
		if !slices.Contains(allowed, k) && (!found || k < unknown) {
			unknown, found = k, true
		}
	}
	if !found {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "unknown member %q; ", textcut.Prefix(unknown, 64))
	if len(allowed) == 0 {
		b.WriteString("the body must be empty or {}")
	} else {
		b.WriteString("this request takes only ")
		for i, a := range allowed {
			switch {
			case i == 0:
			case i == len(allowed)-1:
				b.WriteString(" and ")
			default:
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", a)
		}
	}
	if hint != "" {
		b.WriteString(" " + hint)
	}
	return invalidBody("/"+textcut.Prefix(unknown, 64), b.String())
}

func stringField(obj map[string]any, name string, required bool) (string, *gateway.Error) {
	v, ok := obj[name]
	if !ok {
		if required {
			return "", invalidBody("/"+name, "is required")
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", invalidBody("/"+name, "must be a string")
	}
	return s, nil
}

func intField(obj map[string]any, name string, required bool, def int) (int, *gateway.Error) {
	v, ok := obj[name]
	if !ok {
		if required {
			return 0, invalidBody("/"+name, "is required")
		}
		return def, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, invalidBody("/"+name, "must be an integer")
	}
	i, err := strconv.Atoi(string(n))
	if err != nil {
		// Another spelling of an integer (1e10, 4.0) names the same number as
		// its digits do, below 2^53, where a float64 holds every integer;
		// a literal the double only rounds to one (1.00000000000000001) is
		// not an integer.
		f, loss := jcs.ParseNumber(string(n))
		if loss != jcs.LossNone || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
			return 0, invalidBody("/"+name, "must be an integer")
		}
		i = int(f)
	}
	return i, nil
}

func (h *httpHandler) call(w http.ResponseWriter, r *http.Request) {
	p, obj, data, ok := h.request(w, r, false)
	if !ok {
		return
	}
	call, e := callFromBody(p, obj, data)
	if e == nil {
		call.Tool, e = h.g.Resolve(p, call.Tool)
	}
	if e != nil {
		writeError(w, e)
		return
	}
	h.execute(w, r, call)
}

// callFromBody checks the members of a /v1/tools/call body (obj, parsed
// from data). The arguments are passed on as the client wrote them, so
// that they are validated on their own text (numbers above all).
func callFromBody(p tools.Principal, obj map[string]any, data []byte) (gateway.Call, *gateway.Error) {
	call := gateway.Call{Principal: p}
	var e *gateway.Error
	if e = fields(obj, "", "session_id", "step", "tool", "arguments"); e != nil {
		return call, e
	}
	if call.SessionID, e = stringField(obj, "session_id", true); e != nil {
		return call, e
	}
	if call.Tool, e = stringField(obj, "tool", true); e != nil {
		return call, e
	}
	if call.Step, e = intField(obj, "step", true, 0); e != nil {
		return call, e
	}
	if _, has := obj["arguments"]; has {
		// obj holds exactly the four members (no duplicates, no others,
		// [jcs.Parse] and fields checked), so the decoder's case-insensitive
		// matching cannot pick another member.
		var raw struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			return call, invalidBody("/arguments", "cannot read the arguments")
		}
		call.Arguments = raw.Arguments
	}
	return call, nil
}

func (h *httpHandler) execute(w http.ResponseWriter, r *http.Request, call gateway.Call) {
	res, err := h.g.Execute(r.Context(), call)
	if h.called != nil {
		h.called(r.Context(), call, err)
	}
	if err != nil {
		writeError(w, h.asError(r, "the call", err))
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Success        bool            `json:"success"`
		Result         json.RawMessage `json:"result"`
		Cached         bool            `json:"cached"`
		IdempotencyKey string          `json:"idempotency_key"`
		// Beyond docs/design.md's contract, added after its fields.
		Attempts          int  `json:"attempts"`
		PreviousUncertain bool `json:"previous_attempt_uncertain"`
	}{true, res.Value, res.Cached, res.IdempotencyKey, res.Attempts, res.PreviousUncertain})
}

func (h *httpHandler) approve(w http.ResponseWriter, r *http.Request) {
	p, obj, _, ok := h.request(w, r, true)
	if !ok {
		return
	}
	if e := fields(obj, `("grant" or "deny")`, "decision"); e != nil {
		writeError(w, e)
		return
	}
	d, e := stringField(obj, "decision", false)
	if e != nil {
		writeError(w, e)
		return
	}
	decide := h.g.Approve
	switch d {
	case "", "grant":
	case "deny":
		decide = h.g.Deny
	default:
		writeError(w, invalidBody("/decision", `must be "grant" or "deny"`))
		return
	}
	a, err := decide(r.Context(), p, r.PathValue("approval_id"))
	h.writeApproval(w, r, "the approval", a, err)
}

func (h *httpHandler) showApproval(w http.ResponseWriter, r *http.Request) {
	p, ok := h.principal(w, r)
	if !ok {
		return
	}
	a, err := h.g.Approval(r.Context(), p, r.PathValue("approval_id"))
	h.writeApproval(w, r, "reading the approval", a, err)
}

// writeApproval answers the approvals endpoints: {"success":true,
// "approval":{...}}, or err (see asError; what names the step) when it is
// not nil.
func (h *httpHandler) writeApproval(w http.ResponseWriter, r *http.Request, what string, a *store.Approval, err error) {
	if err != nil {
		writeError(w, h.asError(r, what, err))
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Success  bool            `json:"success"`
		Approval *store.Approval `json:"approval"`
	}{true, a})
}

func (h *httpHandler) discoverTools(w http.ResponseWriter, r *http.Request) {
	p, obj, _, ok := h.request(w, r, false)
	if !ok {
		return
	}
	if h.discover == nil {
		writeError(w, &gateway.Error{Type: NotImplemented, Message: "discovery is not configured on this server"})
		return
	}
	if e := fields(obj, "", "query", "k", "session_id"); e != nil {
		writeError(w, e)
		return
	}
	query, e := stringField(obj, "query", true)
	switch {
	case e != nil:
	case strings.TrimSpace(query) == "":
		e = invalidBody("/query", "must not be empty")
	case len(query) > MaxQueryBytes:
		e = invalidBody("/query", fmt.Sprintf("is longer than %d bytes", MaxQueryBytes))
	}
	k, session := 0, ""
	if e == nil {
		k, e = intField(obj, "k", false, 5)
		if e == nil && (k < 1 || k > 50) {
			e = invalidBody("/k", "must be between 1 and 50")
		}
	}
	if e == nil {
		session, e = stringField(obj, "session_id", false)
	}
	if e != nil {
		writeError(w, e)
		return
	}
	out, err := h.discover(r.Context(), p, DiscoverRequest{Query: query, K: k, SessionID: session})
	if err != nil {
		writeError(w, h.asError(r, "discovery", err))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// asError returns err as the [*gateway.Error] a client may see: a
// [*gateway.Error] as it is,
// anything else logged under a fresh error ID and answered with the ID only.
func (h *httpHandler) asError(r *http.Request, what string, err error) *gateway.Error {
	var ge *gateway.Error
	if errors.As(err, &ge) {
		return ge
	}
	return h.internal(r, what, err)
}

// internal logs what went wrong (an error or a panic value) under a fresh
// error ID and returns the INTERNAL_ERROR a client sees: the ID, a generic
// message, nothing of the internals.
func (h *httpHandler) internal(r *http.Request, what string, cause any) *gateway.Error {
	id := errorid.New()
	h.log.LogAttrs(r.Context(), slog.LevelError, "gateway: "+what+" failed", slog.String("error_id", id),
		slog.String("path", textcut.Prefix(r.URL.Path, 128)), slog.Any("error", cause))
	return &gateway.Error{Type: gateway.Internal, Retryable: true, ErrorID: id, Message: what + " failed (error " + id + ")"}
}

// recoverPanics answers a panic below it (an Authenticator, a Discover
// hook) with INTERNAL_ERROR and an error ID, logging the panic value and
// the stack; the client learns nothing else. [http.ErrAbortHandler] is
// passed on, as net/http expects.
func (h *httpHandler) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &trackingWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			e := h.internal(r, "the request", fmt.Sprintf("panic: %v\n%s", v, debug.Stack()))
			if !rw.wrote {
				writeError(w, e)
			}
		}()
		next.ServeHTTP(rw, r)
	})
}

// trackingWriter records whether the response has started.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Unwrap lets [http.ResponseController] reach the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// errorBody is the HTTP error body: the [gateway.Error]'s members, with
// "success" and "retry_after", the Error's RetryAfter in whole seconds.
type errorBody struct {
	Success bool `json:"success"`
	*gateway.Error
	RetryAfter int64 `json:"retry_after,omitempty"`
}

func writeError(w http.ResponseWriter, e *gateway.Error) {
	if e.Type == gateway.PermissionDenied && len(e.Scopes) > 0 {
		w.Header().Set("WWW-Authenticate", insufficientScope(e.Scopes))
	}
	body := errorBody{Error: e}
	if e.RetryAfter > 0 {
		body.RetryAfter = int64(math.Ceil(e.RetryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.FormatInt(body.RetryAfter, 10))
	}
	writeJSON(w, StatusCode(e.Type), body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"success":false,"error_type":"INTERNAL_ERROR","message":"cannot encode the response","retryable":false}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// insufficientScope is the WWW-Authenticate challenge of a 403 that a
// token with more scopes would pass (RFC 6750 §3): error
// "insufficient_scope" and, space-separated, the scopes the action needs
// that are scope-tokens (RFC 6749 §3.3; others cannot be quoted here).
// oauth.Verifier.Protect keeps its scope in the challenge it sends.
func insufficientScope(scopes []string) string {
	var ok []string
	for _, sc := range scopes {
		if sc != "" && !strings.ContainsFunc(sc, func(r rune) bool { return r < 0x21 || r > 0x7e || r == '"' || r == '\\' }) {
			ok = append(ok, sc)
		}
	}
	h := `Bearer realm="toolgate", error="insufficient_scope"`
	if len(ok) > 0 {
		h += `, scope="` + strings.Join(ok, " ") + `"`
	}
	return h
}

// invalidBody is the VALIDATION_ERROR of a request body the contract does
// not accept: the pointer is into the body, so the message says so, where
// [gateway.Invalid]'s speaks of a tool's arguments (a model told its
// arguments are invalid corrects the wrong thing).
func invalidBody(pointer, message string) *gateway.Error {
	e := gateway.Invalid(gateway.Violation{Pointer: pointer, Message: message})
	e.Message = "invalid request body: " + message
	if pointer != "" {
		e.Message = "invalid request body: " + pointer + ": " + message
	}
	return e
}
