package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/internal/gatewaytest"
	"github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/tools"
)

const tokenFileJSON = `{"tokens":{
  "tok-alice":   {"principal":"alice","tenant":"acme","scopes":["payments:write","accounts:read"]},
  "tok-bob":     {"principal":"bob","tenant":"acme","scopes":["approvals:grant"]},
  "tok-mallory": {"principal":"mallory","tenant":"acme","scopes":["accounts:read"]}
}}`

type httpEnv struct {
	*env
	srv *httptest.Server
}

func newHTTPEnv(t *testing.T, opt func(*gateway.Options), hopts *server.HandlerOptions) *httpEnv {
	t.Helper()
	e := newEnv(t, opt)
	auth, err := server.ParseTokenFile([]byte(tokenFileJSON))
	if err != nil {
		t.Fatal(err)
	}
	if hopts == nil {
		hopts = &server.HandlerOptions{}
	}
	hopts.Gatherer = e.Prom
	hopts.Logger = quietLogger()
	srv := httptest.NewServer(server.NewHandler(e.Gateway, auth, hopts))
	t.Cleanup(srv.Close)
	return &httpEnv{env: e, srv: srv}
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (h *httpEnv) do(t *testing.T, method, path, token, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return h.send(t, req)
}

// send sends req and returns its reply.
func (h *httpEnv) send(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, raw: string(data)}
	_ = json.Unmarshal(data, &r.body)
	return r
}

func callBody(session string, step int, tool, args string) string {
	b, _ := json.Marshal(map[string]any{"session_id": session, "step": step, "tool": tool, "arguments": json.RawMessage(args)})
	return string(b)
}

// wantError checks the contract's shared error body.
func wantError(t *testing.T, what string, r reply, status int, typ gateway.ErrorType, retryable bool) {
	t.Helper()
	if r.status != status || r.body["success"] != false || r.body["error_type"] != string(typ) || r.body["retryable"] != retryable {
		t.Errorf("%s = %d %s; want %d with success false, error_type %s, retryable %v", what, r.status, r.raw, status, typ, retryable)
	}
	if msg, _ := r.body["message"].(string); msg == "" {
		t.Errorf("%s: error body has no message: %s", what, r.raw)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type = %q, want application/json", what, ct)
	}
}

func TestHTTPCallAndReplay(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	body := callBody("s1", 1, "bank/transfer_funds", okArgs)
	r := h.do(t, "POST", "/v1/tools/call", "tok-alice", body)
	if r.status != 200 || r.body["success"] != true || r.body["cached"] != false {
		t.Fatalf("call = %d %s, want 200 success, not cached", r.status, r.raw)
	}
	key, _ := r.body["idempotency_key"].(string)
	if len(key) != 64 {
		t.Errorf("idempotency_key = %q, want 64 hex digits", key)
	}
	result, _ := r.body["result"].(map[string]any)
	if result["transaction_id"] == nil {
		t.Errorf("result = %v, want the handler's object", r.body["result"])
	}
	again := h.do(t, "POST", "/v1/tools/call", "tok-alice", body)
	if again.status != 200 || again.body["cached"] != true || again.body["idempotency_key"] != key {
		t.Errorf("replay = %d %s, want 200, cached, key %s", again.status, again.raw, key)
	}
	if h.Runs.Total() != 1 {
		t.Errorf("handler ran %d times, want 1", h.Runs.Total())
	}
}

// TestHTTPStatuses drives every status of the contract through a real
// HTTP round trip.
func TestHTTPStatuses(t *testing.T) {
	h := newHTTPEnv(t, func(o *gateway.Options) {
		o.RateLimits = map[string]store.RateLimit{"bank/get_balance": {Rate: 0.25, Burst: 1}}
	}, &server.HandlerOptions{MaxBodyBytes: 4096})
	balance := callBody("s9", 1, "bank/get_balance", `{"account":"ACC-00001"}`)
	tests := []struct {
		name      string
		method    string
		path      string
		token     string
		body      string
		status    int
		typ       gateway.ErrorType
		retryable bool
	}{
		{"no token", "POST", "/v1/tools/call", "", callBody("s", 1, "bank/transfer_funds", okArgs), 401, gateway.Unauthenticated, false},
		{"unknown token", "POST", "/v1/tools/call", "tok-nobody", callBody("s", 1, "bank/transfer_funds", okArgs), 401, gateway.Unauthenticated, false},
		{"unauthorized tool", "POST", "/v1/tools/call", "tok-mallory", callBody("s", 1, "bank/transfer_funds", okArgs), 403, gateway.PermissionDenied, false},
		{"unknown tool", "POST", "/v1/tools/call", "tok-alice", callBody("s", 1, "bank/nope", `{}`), 404, gateway.UnknownTool, false},
		{"wrong type", "POST", "/v1/tools/call", "tok-alice", callBody("s", 1, "bank/transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":"x"}`), 422, gateway.ValidationError, true},
		{"undeclared property", "POST", "/v1/tools/call", "tok-alice", callBody("s", 1, "bank/transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"x":1}`), 422, gateway.ValidationError, true},
		{"malformed JSON", "POST", "/v1/tools/call", "tok-alice", `{"session_id":"s","step":1,`, 422, gateway.ValidationError, true},
		{"duplicate member", "POST", "/v1/tools/call", "tok-alice", `{"session_id":"s","step":1,"tool":"bank/get_balance","tool":"admin/delete_all","arguments":{}}`, 422, gateway.ValidationError, true},
		{"unknown member", "POST", "/v1/tools/call", "tok-alice", `{"session_id":"s","step":1,"tool":"bank/get_balance","idempotency_key":"mine"}`, 422, gateway.ValidationError, true},
		{"missing step", "POST", "/v1/tools/call", "tok-alice", `{"session_id":"s","tool":"bank/get_balance","arguments":{"account":"a"}}`, 422, gateway.ValidationError, true},
		{"fractional step", "POST", "/v1/tools/call", "tok-alice", `{"session_id":"s","step":1.5,"tool":"bank/get_balance","arguments":{"account":"a"}}`, 422, gateway.ValidationError, true},
		{"body not an object", "POST", "/v1/tools/call", "tok-alice", `[]`, 422, gateway.ValidationError, true},
		{"oversized body", "POST", "/v1/tools/call", "tok-alice", callBody("s", 1, "bank/get_balance", `{"account":"`+strings.Repeat("A", 5000)+`"}`), 413, server.RequestTooLarge, false},
		{"approval required", "POST", "/v1/tools/call", "tok-alice", callBody("s", 2, "bank/transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000}`), 428, gateway.ConfirmationRequired, false},
		{"first balance", "POST", "/v1/tools/call", "tok-alice", balance, 200, "", false},
		{"rate limited", "POST", "/v1/tools/call", "tok-alice", callBody("s9", 2, "bank/get_balance", `{"account":"ACC-00001"}`), 429, gateway.RateLimited, true},
		{"wrong method", "GET", "/v1/tools/call", "tok-alice", "", 405, server.MethodNotAllowed, false},
		{"unknown path", "GET", "/v2/everything", "tok-alice", "", 404, gateway.NotFound, false},
		{"unknown approval", "POST", "/v1/approvals/apr_nope", "tok-bob", "", 404, gateway.NotFound, false},
		{"discovery not configured", "POST", "/v1/discover", "tok-alice", `{"query":"send money","k":3}`, 501, server.NotImplemented, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(t, tc.method, tc.path, tc.token, tc.body)
			if tc.typ == "" {
				if r.status != tc.status {
					t.Errorf("%s = %d %s, want %d", tc.name, r.status, r.raw, tc.status)
				}
				return
			}
			wantError(t, tc.name, r, tc.status, tc.typ, tc.retryable)
			switch tc.typ {
			case gateway.RateLimited:
				if r.header.Get("Retry-After") != "4" || r.body["retry_after"] != float64(4) {
					t.Errorf("rate limited: Retry-After %q, retry_after %v; want 4 and 4", r.header.Get("Retry-After"), r.body["retry_after"])
				}
			case gateway.ConfirmationRequired:
				if id, _ := r.body["approval_id"].(string); !strings.HasPrefix(id, "apr_") {
					t.Errorf("confirmation body = %s, want an approval_id", r.raw)
				}
			case gateway.Unauthenticated:
				if r.header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s: no WWW-Authenticate header", tc.name)
				}
			case gateway.ValidationError:
				if tc.name == "wrong type" {
					ds, _ := r.body["details"].([]any)
					d0, _ := firstOf(ds).(map[string]any)
					if d0["pointer"] != "/amount" || d0["message"] == "" {
						t.Errorf("wrong type details = %v, want a violation at /amount", r.body["details"])
					}
				}
			}
		})
	}
	if n := h.Runs.Total(); n != 1 {
		t.Errorf("handler ran %d times, want 1 (the first balance)", n)
	}
}

func firstOf(xs []any) any {
	if len(xs) == 0 {
		return nil
	}
	return xs[0]
}

func TestHTTPMismatchAndDomainError(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	if r := h.do(t, "POST", "/v1/tools/call", "tok-alice", callBody("s", 1, "bank/transfer_funds", okArgs)); r.status != 200 {
		t.Fatalf("first call = %d %s", r.status, r.raw)
	}
	r := h.do(t, "POST", "/v1/tools/call", "tok-alice", callBody("s", 1, "bank/transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00009","amount":1}`))
	wantError(t, "mismatch", r, 422, gateway.IdempotencyMismatch, false)

	h.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return nil, &tools.DomainError{Code: "INSUFFICIENT_FUNDS", Message: "balance 1000.00 is less than 2000.00"}
	})
	body := callBody("s", 2, "bank/transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":999}`)
	for i, cached := range []bool{false, true} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			r = h.do(t, "POST", "/v1/tools/call", "tok-alice", body)
			wantError(t, "domain error", r, 422, gateway.DomainErrorType, false)
			if r.body["code"] != "INSUFFICIENT_FUNDS" || (r.body["cached"] == true) != cached {
				t.Errorf("domain error body = %s, want code INSUFFICIENT_FUNDS, cached %v", r.raw, cached)
			}
		})
	}
}

func TestHTTPInProgressAndDownstreamFailure(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	release := make(chan struct{})
	entered := make(chan struct{})
	h.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		close(entered)
		<-release
		return nil, errors.New("downstream 502 after the transfer was sent")
	})
	body := callBody("s", 1, "bank/transfer_funds", okArgs)
	first := make(chan reply, 1)
	go func() { first <- h.do(t, "POST", "/v1/tools/call", "tok-alice", body) }()
	<-entered
	r := h.do(t, "POST", "/v1/tools/call", "tok-alice", body)
	wantError(t, "duplicate in flight", r, 409, gateway.InProgress, true)
	if r.header.Get("Retry-After") != "1" || r.body["retry_after"] != float64(1) {
		t.Errorf("in progress: Retry-After %q, retry_after %v; want 1", r.header.Get("Retry-After"), r.body["retry_after"])
	}
	close(release)
	wantError(t, "uncertain failure", <-first, 503, gateway.DownstreamFailure, true)
}

func TestHTTPApprovalFlow(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	body := callBody("s", 1, "bank/transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000}`)
	r := h.do(t, "POST", "/v1/tools/call", "tok-alice", body)
	wantError(t, "big transfer", r, 428, gateway.ConfirmationRequired, false)
	id := r.body["approval_id"].(string)
	wantError(t, "approval without a token", h.do(t, "POST", "/v1/approvals/"+id, "", ""), 401, gateway.Unauthenticated, false)
	wantError(t, "approval by the requester", h.do(t, "POST", "/v1/approvals/"+id, "tok-alice", ""), 403, gateway.PermissionDenied, false)
	wantError(t, "approval by mallory", h.do(t, "POST", "/v1/approvals/"+id, "tok-mallory", "{}"), 403, gateway.PermissionDenied, false)
	wantError(t, "approval PUT", h.do(t, "PUT", "/v1/approvals/"+id, "tok-bob", ""), 405, server.MethodNotAllowed, false)
	for range 3 { // of two unknown members, the same one is named each time
		r := h.do(t, "POST", "/v1/approvals/"+id, "tok-bob", `{"decision":"deny","reason":"too much","note":"x"}`)
		wantError(t, "approval with a reason", r, 422, gateway.ValidationError, true)
		want := `invalid request body: /note: unknown member "note"; this request takes only "decision" ("grant" or "deny")`
		if r.body["message"] != want {
			t.Fatalf("approval with unknown members: message %q, want %q", r.body["message"], want)
		}
	}
	wantError(t, "approval read by mallory", h.do(t, "GET", "/v1/approvals/"+id, "tok-mallory", ""), 403, gateway.PermissionDenied, false)
	wantError(t, "approval read, unknown ID", h.do(t, "GET", "/v1/approvals/apr_x", "tok-bob", ""), 404, gateway.NotFound, false)
	// RFC 6750 §3 / the MCP authorization spec's step-up: a 403 that more
	// scopes would lift names them.
	for _, tc := range []struct {
		name, method, path, token, body, challenge string
	}{
		{"grant without approvals:grant", "POST", "/v1/approvals/" + id, "tok-mallory", "", `Bearer realm="toolgate", error="insufficient_scope", scope="approvals:grant"`},
		{"read without approvals:grant", "GET", "/v1/approvals/" + id, "tok-mallory", "", `Bearer realm="toolgate", error="insufficient_scope", scope="approvals:grant"`},
		{"a tool's missing scope", "POST", "/v1/tools/call", "tok-mallory", callBody("s", 7, "bank/transfer_funds", okArgs), `Bearer realm="toolgate", error="insufficient_scope", scope="payments:write"`},
	} {
		t.Run("challenge: "+tc.name, func(t *testing.T) {
			r := h.do(t, tc.method, tc.path, tc.token, tc.body)
			if got := r.header.Get("WWW-Authenticate"); r.status != 403 || got != tc.challenge {
				t.Errorf("%s %s = %d WWW-Authenticate %q, want 403 %q", tc.method, tc.path, r.status, got, tc.challenge)
			}
		})
	}
	for _, tok := range []string{"tok-bob", "tok-alice"} {
		t.Run(tok, func(t *testing.T) {
			show := h.do(t, "GET", "/v1/approvals/"+id, tok, "")
			shown, _ := show.body["approval"].(map[string]any)
			args, _ := shown["arguments"].(map[string]any)
			if show.status != 200 || shown["granted"] != false || shown["requester"] != "alice" || args["amount"] != float64(5000) {
				t.Errorf("GET approval as %s = %d %s, want 200, pending, requested by alice, amount 5000", tok, show.status, show.raw)
			}
		})
	}
	a := h.do(t, "POST", "/v1/approvals/"+id, "tok-bob", "")
	appr, _ := a.body["approval"].(map[string]any)
	if a.status != 200 || appr["granted"] != true || appr["approver"] != "bob" || appr["approval_id"] != id {
		t.Fatalf("approval by bob = %d %s, want 200 granted by bob", a.status, a.raw)
	}
	if h.Runs.Total() != 0 {
		t.Fatal("handler ran before the approved call was re-sent")
	}
	if r := h.do(t, "POST", "/v1/tools/call", "tok-alice", body); r.status != 200 || r.body["cached"] != false {
		t.Errorf("approved call = %d %s, want 200 fresh", r.status, r.raw)
	}
}

func TestHTTPDiscoverMetricsHealth(t *testing.T) {
	var gotP tools.Principal
	var got server.DiscoverRequest
	var called []string
	h := newHTTPEnv(t, nil, &server.HandlerOptions{Discover: func(ctx context.Context, p tools.Principal, req server.DiscoverRequest) (any, error) {
		gotP, got = p, req
		return map[string]any{"query": req.Query, "candidates": []map[string]any{{"name": "bank/transfer_funds", "score": 0.9}}}, nil
	}, Called: func(ctx context.Context, call gateway.Call, err error) {
		called = append(called, fmt.Sprintf("%s %s %d %s %v", call.Principal.ID, call.SessionID, call.Step, call.Tool, err == nil))
	}})
	r := h.do(t, "POST", "/v1/discover", "tok-alice", `{"query":"send money to a friend","k":3,"session_id":"s"}`)
	if want := (server.DiscoverRequest{Query: "send money to a friend", K: 3, SessionID: "s"}); r.status != 200 ||
		r.body["query"] != "send money to a friend" || gotP.ID != "alice" || got != want {
		t.Errorf("discover = %d %s (hook saw %v %+v), want 200 from the hook for alice, %+v", r.status, r.raw, gotP, got, want)
	}
	if r := h.do(t, "POST", "/v1/discover", "tok-alice", `{"query":"x"}`); r.status != 200 || got.K != 5 || got.SessionID != "" {
		t.Errorf("discover without k = %d (%+v), want 200 with k 5 and no session", r.status, got)
	}
	wantError(t, "discover session not a string", h.do(t, "POST", "/v1/discover", "tok-alice", `{"query":"x","session_id":1}`), 422, gateway.ValidationError, true)
	wantError(t, "discover k out of range", h.do(t, "POST", "/v1/discover", "tok-alice", `{"query":"x","k":500}`), 422, gateway.ValidationError, true)
	wantError(t, "discover empty query", h.do(t, "POST", "/v1/discover", "tok-alice", `{"query":" "}`), 422, gateway.ValidationError, true)
	wantError(t, "discover anonymous", h.do(t, "POST", "/v1/discover", "", `{"query":"x"}`), 401, gateway.Unauthenticated, false)

	h.do(t, "POST", "/v1/tools/call", "tok-alice", callBody("s", 1, "transfer_funds", okArgs))
	h.do(t, "POST", "/v1/tools/call", "tok-alice", callBody("s", 2, "no_such_tool", okArgs))
	if want := []string{"alice s 1 bank/transfer_funds true", "alice s 2 no_such_tool false"}; !slices.Equal(called, want) {
		t.Errorf("the Called hook saw %q, want %q (the bare name resolved to the ID)", called, want)
	}
	m := h.do(t, "GET", "/metrics", "", "")
	if m.status != 200 || !strings.Contains(m.raw, `toolgate_gateway_calls_total{outcome="ok",tool="bank/transfer_funds"} 1`) {
		t.Errorf("GET /metrics = %d, want 200 with the call counted; body:\n%.2000s", m.status, m.raw)
	}
	if hz := h.do(t, "GET", "/healthz", "", ""); hz.status != 200 || hz.body["status"] != "ok" {
		t.Errorf("GET /healthz = %d %s, want 200 ok", hz.status, hz.raw)
	}
}

func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(path, []byte(tokenFileJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := server.LoadTokenFile(path)
	if err != nil || f.Len() != 3 {
		t.Fatalf("LoadTokenFile = %v, %v; want 3 tokens", f, err)
	}
	p, err := f.Authenticate(ctx, "tok-alice")
	if err != nil || p.ID != "alice" || p.Tenant != "acme" || !p.HasScope("payments:write") {
		t.Errorf("Authenticate(tok-alice) = %+v, %v", p, err)
	}
	p.Scopes[0] = "tampered"
	if again, _ := f.Authenticate(ctx, "tok-alice"); again.Scopes[0] != "payments:write" {
		t.Error("Authenticate returned scopes shared with the file")
	}
	if _, err := f.Authenticate(ctx, "tok-alice "); !errors.Is(err, server.ErrUnknownToken) {
		t.Errorf("Authenticate(unknown) = %v, want ErrUnknownToken", err)
	}
	bad := map[string]string{
		"not JSON":          `{`,
		"no tokens":         `{}`,
		"unknown member":    `{"tokens":{"t":{"principal":"a","tenant":"b","role":"admin"}}}`,
		"missing tenant":    `{"tokens":{"t":{"principal":"a"}}}`,
		"missing principal": `{"tokens":{"t":{"tenant":"b"}}}`,
		"empty token":       `{"tokens":{"":{"principal":"a","tenant":"b"}}}`,
		"empty scope":       `{"tokens":{"t":{"principal":"a","tenant":"b","scopes":[""]}}}`,
		"NUL in principal":  `{"tokens":{"t":{"principal":"a\u0000b","tenant":"b"}}}`,
		"NUL in tenant":     `{"tokens":{"t":{"principal":"a","tenant":"b\u0000"}}}`,
		"newline in tenant": `{"tokens":{"t":{"principal":"a","tenant":"b\nc"}}}`,
	}
	for name, data := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := server.ParseTokenFile([]byte(data))
			if !errors.Is(err, server.ErrTokenFile) {
				t.Errorf("ParseTokenFile(%s) error = %v, want ErrTokenFile", name, err)
			}
			if err != nil && strings.Contains(err.Error(), `"t"`) {
				t.Errorf("ParseTokenFile(%s) error %q reveals the token", name, err)
			}
		})
	}
	if _, err := server.LoadTokenFile(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, server.ErrTokenFile) {
		t.Errorf("LoadTokenFile(missing) = %v, want ErrTokenFile", err)
	}
}

func TestNewHTTPServerTimeouts(t *testing.T) {
	s := server.NewHTTPServer("127.0.0.1:0", http.NotFoundHandler(), 0)
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout != 2*time.Minute || s.IdleTimeout <= 0 {
		t.Errorf("NewHTTPServer timeouts = %v %v %v %v, want all set, write 2m", s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout)
	}
}

// TestHTTPNumbersValidatedOnClientText sends the same cases over HTTP: the
// handler passes the arguments' bytes on, never a re-encoding.
func TestHTTPNumbersValidatedOnClientText(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	h.AddEcho("bank/pay", gatewaytest.PaySchema)
	for i, tc := range gatewaytest.NumberCases {
		r := h.do(t, "POST", "/v1/tools/call", "tok-alice", `{"session_id":"n","step":`+strconv.Itoa(i)+`,"tool":"bank/pay","arguments":`+tc.Args+`}`)
		if tc.Ptr == "" {
			got, _ := json.Marshal(r.body["result"])
			if r.status != 200 || string(got) != tc.Want {
				t.Errorf("POST %s = %d %s; want 200 with result %s", tc.Args, r.status, r.raw, tc.Want)
			}
			continue
		}
		wantError(t, "POST "+tc.Args, r, 422, gateway.ValidationError, r.body["retryable"] == true)
		if !strings.Contains(r.raw, `"pointer":"`+tc.Ptr+`"`) {
			t.Errorf("POST %s = %s; want a violation at %s", tc.Args, r.raw, tc.Ptr)
		}
	}
}

// TestAuthorizationOnce: a request with the Authorization header more than
// once is refused 401, whichever token comes first: a proxy in front may
// read the last where the server reads the first, so the two would
// authenticate different principals.
func TestAuthorizationOnce(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	cases := []struct {
		name   string
		fields []string
	}{
		{"valid first", []string{"Bearer tok-alice", "Bearer tok-mallory"}},
		{"valid last", []string{"Basic eDp5", "Bearer tok-alice"}},
		{"same twice", []string{"Bearer tok-alice", "Bearer tok-alice"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/tools/call", strings.NewReader(callBody("s1", 1, "bank/transfer_funds", okArgs)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header["Authorization"] = tc.fields
			r := h.send(t, req)
			wantError(t, "a call with Authorization "+strings.Join(tc.fields, ", "), r, http.StatusUnauthorized, gateway.Unauthenticated, false)
			if msg, _ := r.body["message"].(string); !strings.Contains(msg, "more than one Authorization header") {
				t.Errorf("message %q, want it to say the header came more than once", msg)
			}
		})
	}
	if n := h.Runs.Total(); n != 0 {
		t.Errorf("handlers ran %d times, want 0", n)
	}
}
