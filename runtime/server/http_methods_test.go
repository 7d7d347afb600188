package server_test

import (
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/runtime/gateway"
	"testing"

	"github.com/toolgate/toolgate/runtime/server"
)

// TestHTTPMethods pins each endpoint's methods: a method it does not serve
// is 405 with an Allow header naming every method it does serve (RFC 9110
// §15.5.6), and HEAD is served wherever GET is (RFC 9110 §9.3.2: same
// status and headers, no body).
func TestHTTPMethods(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	tests := []struct {
		name, method, path string
		status             int
		allow              string
	}{
		{"call GET", "GET", "/v1/tools/call", 405, "POST"},
		{"call HEAD", "HEAD", "/v1/tools/call", 405, "POST"},
		{"discover OPTIONS", "OPTIONS", "/v1/discover", 405, "POST"},
		{"approval PUT", "PUT", "/v1/approvals/apr_x", 405, "GET, HEAD, POST"},
		{"approval DELETE", "DELETE", "/v1/approvals/apr_x", 405, "GET, HEAD, POST"},
		{"approval HEAD", "HEAD", "/v1/approvals/apr_x", 404, ""},
		{"healthz POST", "POST", "/healthz", 405, "GET, HEAD"},
		{"healthz HEAD", "HEAD", "/healthz", 200, ""},
		{"metrics DELETE", "DELETE", "/metrics", 405, "GET, HEAD"},
		{"metrics HEAD", "HEAD", "/metrics", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(t, tc.method, tc.path, "tok-bob", "")
			if r.status != tc.status {
				t.Errorf("%s %s = %d %s, want %d", tc.method, tc.path, r.status, r.raw, tc.status)
			}
			if got := r.header.Get("Allow"); got != tc.allow {
				t.Errorf("%s %s: Allow = %q, want %q", tc.method, tc.path, got, tc.allow)
			}
			if tc.method == "HEAD" && r.raw != "" {
				t.Errorf("%s %s: body %q, want none", tc.method, tc.path, r.raw)
			}
			if tc.status == 405 && tc.method != "HEAD" {
				wantError(t, tc.name, r, 405, server.MethodNotAllowed, false)
			}
		})
	}
}

// internalPrefix matches the prefix of an internal package's error text.
var internalPrefix = regexp.MustCompile(`\b(jcs|tools|gateway|server|strconv|json): `)

// TestHTTPErrorsNameNoPackage pins that a refusal's message is written for
// the client: no Go package prefix ("jcs: ", "tools: ") of an internal error.
func TestHTTPErrorsNameNoPackage(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	tests := []struct {
		name, path, token, body string
		status                  int
		typ                     gateway.ErrorType
		retryable               bool
	}{
		{"not JSON", "/v1/tools/call", "tok-alice", "not json", 422, gateway.ValidationError, true},
		{"empty body", "/v1/tools/call", "tok-alice", "", 422, gateway.ValidationError, true},
		{"duplicate member", "/v1/tools/call", "tok-alice", `{"step":1,"step":2}`, 422, gateway.ValidationError, true},
		{"approval body not JSON", "/v1/approvals/apr_x", "tok-bob", "{", 422, gateway.ValidationError, true},
		{"missing scope", "/v1/tools/call", "tok-mallory", callBody("s", 1, "bank/transfer_funds", `{}`), 403, gateway.PermissionDenied, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(t, "POST", tc.path, tc.token, tc.body)
			wantError(t, tc.name, r, tc.status, tc.typ, tc.retryable)
			if m := internalPrefix.FindString(r.raw); m != "" {
				t.Errorf("POST %s %q = %s; names the internal %q", tc.path, tc.body, r.raw, m)
			}
		})
	}
}

// TestHTTPStepSpellings pins that "step" is a number, not a spelling: each
// way JSON writes the same integer names the same slot (the same
// idempotency key), and the integers that JSON numbers hold exactly are
// accepted however they are written.
func TestHTTPStepSpellings(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	tests := []struct{ name, plain, other string }{
		{"exponent", "10000000000", "1e10"},
		{"fraction zero", "4294967296", "4294967296.0"},
		{"2^53-1", "9007199254740991", "9.007199254740991e15"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := func(step string) string {
				return `{"session_id":"spell-` + tc.name + `","step":` + step + `,"tool":"bank/get_balance","arguments":{"account":"ACC-00001"}}`
			}
			a := h.do(t, "POST", "/v1/tools/call", "tok-alice", body(tc.plain))
			b := h.do(t, "POST", "/v1/tools/call", "tok-alice", body(tc.other))
			if a.status != 200 || b.status != 200 || a.body["idempotency_key"] != b.body["idempotency_key"] || b.body["cached"] != true {
				t.Errorf("step %s = %d %s; step %s = %d %s; want 200 twice, the same key, the second cached", tc.plain, a.status, a.raw, tc.other, b.status, b.raw)
			}
		})
	}
}

// TestHTTPStepNotAnInteger: a step whose literal is not an integer is
// refused even where a double rounds it to one. Before,
// 1.00000000000000001 read as step 1 and replayed step 1's result.
func TestHTTPStepNotAnInteger(t *testing.T) {
	h := newHTTPEnv(t, nil, nil)
	for _, step := range []string{"1.00000000000000001", "0.99999999999999999", "1.5", "1e-400"} {
		t.Run(step, func(t *testing.T) {
			r := h.do(t, "POST", "/v1/tools/call", "tok-alice", `{"session_id":"frac","step":`+step+`,"tool":"bank/get_balance","arguments":{"account":"ACC-00001"}}`)
			if r.status != 422 || r.body["error_type"] != "VALIDATION_ERROR" || !strings.Contains(r.raw, "/step: must be an integer") {
				t.Errorf("step %s = %d %s; want 422 naming /step", step, r.status, r.raw)
			}
		})
	}
}
