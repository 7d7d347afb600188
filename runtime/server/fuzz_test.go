package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/tools"
)

// FuzzHTTPCall posts arbitrary bodies to /v1/tools/call. Every answer is
// JSON with a boolean "success"; a refusal's status is its error_type's.
func FuzzHTTPCall(f *testing.F) {
	for _, s := range []string{
		callBody("s", 1, "bank/transfer_funds", okArgs), `{}`, `[]`, `{"session_id":"s","step":1,"tool":"bank/get_balance","arguments":{"account":"a"}}`,
		`{"session_id":"s","step":-1,"tool":"x"}`, `{"session_id":"s","step":1e3,"tool":"bank/get_balance","arguments":null}`,
		`{"session_id":"s","step":1,"tool":"bank/get_balance","tool":"admin/delete_all"}`, `{"session_id":1}`,
	} {
		f.Add([]byte(s))
	}
	e := newEnv(f, nil)
	auth := server.AuthenticatorFunc(func(context.Context, string) (tools.Principal, error) { return alice, nil })
	h := server.NewHandler(e.Gateway, auth, &server.HandlerOptions{MaxBodyBytes: 4096, Logger: quietLogger()})
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/v1/tools/call", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer x")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out struct {
			Success   *bool             `json:"success"`
			ErrorType gateway.ErrorType `json:"error_type"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Success == nil {
			t.Fatalf("POST %q = %d %q: not a contract body (%v)", body, rec.Code, rec.Body, err)
		}
		switch {
		case *out.Success && rec.Code != 200:
			t.Fatalf("POST %q = %d with success true", body, rec.Code)
		case !*out.Success && (out.ErrorType == "" || rec.Code != server.StatusCode(out.ErrorType)):
			t.Fatalf("POST %q = %d %s: status does not match error_type", body, rec.Code, rec.Body)
		}
	})
}
