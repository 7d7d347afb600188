package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/tools"
)

// secret stands for what must never reach a client: a DSN with a
// password, a path, a panic value.
const secret = "postgres://admin:s3cret@db.internal:5432/prod /var/lib/toolgate/s3cret.key"

// failingStore fails the operations a test switches on, with the secret
// in the error text.
type failingStore struct {
	*memstore.Store
	claim, approval atomic.Bool
}

func (s *failingStore) Claim(ctx context.Context, req store.ClaimRequest) (store.Claim, error) {
	if s.claim.Load() {
		return store.Claim{}, errors.New("claim: " + secret)
	}
	return s.Store.Claim(ctx, req)
}

func (s *failingStore) GetApproval(ctx context.Context, id string) (store.Approval, error) {
	if s.approval.Load() {
		return store.Approval{}, errors.New("approval: " + secret)
	}
	return s.Store.GetApproval(ctx, id)
}

var errorIDPattern = regexp.MustCompile(`err_[0-9a-f]{16}`)

// TestNothingInternalReachesAClient: a handler's error text, a panic
// value, a store's or a hook's failure go to the log under an error ID; the
// client gets the error type, a generic message and that ID. A domain
// error, meant for the model, passes through.
func TestNothingInternalReachesAClient(t *testing.T) {
	var logs testenv.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	store := &failingStore{Store: memstore.New()}
	reg := tools.NewRegistry()
	var mode atomic.Value // what the handler does
	handler := func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		switch mode.Load() {
		case "error":
			return nil, errors.New("dial " + secret)
		case "no effect":
			return nil, tools.NoEffect(errors.New("open " + secret))
		case "panic":
			panic("connecting to " + secret)
		case "domain":
			return nil, &tools.DomainError{Code: "INSUFFICIENT_FUNDS", Message: "balance 12.00 is below 50.00"}
		}
		return json.RawMessage(`{}`), nil
	}
	if err := reg.Add(
		tools.Tool{ID: "svc/act", Card: tools.Card{Name: "act"}, Handler: handler},
		tools.Tool{ID: "svc/refund", Card: tools.Card{Name: "refund", Irreversible: true}, Handler: handler},
	); err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(reg, store, &gateway.Options{Logger: log, Uncertain: gateway.UncertainReconcile})
	if err != nil {
		t.Fatal(err)
	}
	auth := server.AuthenticatorFunc(func(ctx context.Context, bearer string) (tools.Principal, error) {
		switch bearer {
		case "panic":
			panic("token table at " + secret)
		case "bob":
			return tools.Principal{ID: "bob", Tenant: "acme", Scopes: []string{gateway.ApprovalScope}}, nil
		}
		return tools.Principal{ID: "alice", Tenant: "acme"}, nil
	})
	discover := func(ctx context.Context, p tools.Principal, req server.DiscoverRequest) (any, error) {
		query := req.Query
		if query == "panic" {
			panic("index at " + secret)
		}
		return nil, errors.New("index at " + secret)
	}
	srv := httptest.NewServer(server.NewHandler(g, auth, &server.HandlerOptions{Logger: log, Discover: discover}))
	t.Cleanup(srv.Close)
	h := &httpEnv{srv: srv}

	tests := []struct {
		name, mode, token, path, body string
		status                        int
		typ                           gateway.ErrorType
		before                        func()
	}{
		{name: "handler error", mode: "error", path: "/v1/tools/call", body: callBody("s", 1, "svc/act", `{}`), status: 503, typ: gateway.DownstreamFailure},
		{name: "uncertain retried", mode: "error", path: "/v1/tools/call", body: callBody("s", 1, "svc/act", `{}`), status: 409, typ: gateway.UncertainOutcome},
		{name: "no effect", mode: "no effect", path: "/v1/tools/call", body: callBody("s", 2, "svc/act", `{}`), status: 503, typ: gateway.DownstreamFailure},
		{name: "handler panic", mode: "panic", path: "/v1/tools/call", body: callBody("s", 3, "svc/act", `{}`), status: 503, typ: gateway.DownstreamFailure},
		{name: "store failure", path: "/v1/tools/call", body: callBody("s", 4, "svc/act", `{}`), status: 500, typ: gateway.Internal,
			before: func() { store.claim.Store(true) }},
		{name: "approval store failure", token: "bob", path: "/v1/approvals/apr_0123", status: 500, typ: gateway.Internal,
			before: func() { store.claim.Store(false); store.approval.Store(true) }},
		{name: "approval lookup in a call", path: "/v1/tools/call", body: callBody("s", 5, "svc/refund", `{}`), status: 500, typ: gateway.Internal},
		{name: "discovery failure", path: "/v1/discover", body: `{"query":"refund"}`, status: 500, typ: gateway.Internal},
		{name: "discovery panic", path: "/v1/discover", body: `{"query":"panic"}`, status: 500, typ: gateway.Internal},
		{name: "authenticator panic", token: "panic", path: "/v1/tools/call", body: callBody("s", 6, "svc/act", `{}`), status: 500, typ: gateway.Internal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before()
			}
			mode.Store(tc.mode)
			token := tc.token
			if token == "" {
				token = "alice"
			}
			r := h.do(t, "POST", tc.path, token, tc.body)
			if r.status != tc.status || r.body["error_type"] != string(tc.typ) {
				t.Fatalf("%s = %d %s; want %d %s", tc.name, r.status, r.raw, tc.status, tc.typ)
			}
			if strings.Contains(r.raw, "s3cret") || strings.Contains(r.raw, "/var/lib") || strings.Contains(r.raw, "goroutine") {
				t.Errorf("%s: the client sees internals: %s", tc.name, r.raw)
			}
			id, _ := r.body["error_id"].(string)
			if !errorIDPattern.MatchString(id) || !strings.Contains(r.body["message"].(string), id) {
				t.Fatalf("%s: body %s; want an error_id that the message names", tc.name, r.raw)
			}
			var found bool
			for _, line := range strings.Split(logs.String(), "\n") {
				found = found || (strings.Contains(line, id) && strings.Contains(line, "s3cret"))
			}
			if !found {
				t.Errorf("%s: no log line holds both error id %s and the internal text", tc.name, id)
			}
		})
	}

	store.approval.Store(false)
	mode.Store("domain")
	r := h.do(t, "POST", "/v1/tools/call", "alice", callBody("s", 7, "svc/act", `{}`))
	if r.status != 422 || r.body["error_type"] != string(gateway.DomainErrorType) || r.body["code"] != "INSUFFICIENT_FUNDS" ||
		r.body["message"] != "balance 12.00 is below 50.00" {
		t.Errorf("domain error = %d %s; want 422 DOMAIN_ERROR with the tool's own message", r.status, r.raw)
	}
}
