package oauth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/runtime/server/oauth"
)

func TestMetadataURL(t *testing.T) {
	for _, tc := range []struct{ resource, want string }{
		{"https://gw.example.com", "https://gw.example.com/.well-known/oauth-protected-resource"},
		{"https://gw.example.com/", "https://gw.example.com/.well-known/oauth-protected-resource"},
		{"https://gw.example.com/mcp", "https://gw.example.com/.well-known/oauth-protected-resource/mcp"},
		{"https://gw.example.com:8443/a/b/", "https://gw.example.com:8443/.well-known/oauth-protected-resource/a/b"},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			if got := oauth.MetadataURL(tc.resource); got != tc.want {
				t.Errorf("MetadataURL(%q) = %q, want %q", tc.resource, got, tc.want)
			}
		})
	}
}

// TestProtect: the metadata at both well-known paths, and the challenges
// Protect puts on the wrapped handler's refusals.
func TestProtect(t *testing.T) {
	v, err := oauth.New(&oauth.Options{Issuer: "https://id.example.com", Audience: resource, ScopesSupported: []string{"calc:use"}})
	if err != nil {
		t.Fatal(err)
	}
	h := v.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/401":
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate"`)
			w.WriteHeader(http.StatusUnauthorized)
		case "/403":
			w.WriteHeader(http.StatusForbidden)
		case "/403-scope":
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate", error="insufficient_scope", scope="calc:use approvals:grant"`)
			w.WriteHeader(http.StatusForbidden)
		default:
			w.Write([]byte("ok"))
		}
	}))
	const meta = `Bearer resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp"`
	for _, tc := range []struct {
		name, method, path, auth string
		code                     int
		challenge                string
	}{
		{"metadata", "GET", "/.well-known/oauth-protected-resource/mcp", "", 200, ""},
		{"metadata at the root", "GET", "/.well-known/oauth-protected-resource", "", 200, ""},
		{"metadata preflight", "OPTIONS", "/.well-known/oauth-protected-resource/mcp", "", 204, ""},
		{"metadata POST", "POST", "/.well-known/oauth-protected-resource/mcp", "", 405, ""},
		{"no credentials", "POST", "/401", "", 401, meta},
		{"bad token", "POST", "/401", "Bearer x", 401, meta + `, error="invalid_token"`},
		{"another scheme (RFC 6750 §3.1: no error code)", "POST", "/401", "Basic YWdlbnQ6c2VjcmV0", 401, meta},
		{"bearer without a token", "POST", "/401", "Bearer ", 401, meta},
		{"scheme in lower case", "POST", "/401", "bearer x", 401, meta + `, error="invalid_token"`},
		{"insufficient scope", "POST", "/403-scope", "Bearer x", 403, meta + `, error="insufficient_scope", scope="calc:use approvals:grant"`},
		{"forbidden, no scope would help", "POST", "/403", "Bearer x", 403, ""},
		{"ok untouched", "POST", "/", "Bearer x", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.code || w.Header().Get("WWW-Authenticate") != tc.challenge {
				t.Fatalf("%s %s = %d %q, want %d %q", tc.method, tc.path, w.Code, w.Header().Get("WWW-Authenticate"), tc.code, tc.challenge)
			}
			if tc.code == 200 && tc.method == "GET" {
				var m map[string]any
				if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || m["resource"] != resource ||
					w.Header().Get("Access-Control-Allow-Origin") != "*" {
					t.Errorf("metadata = %s (%v)", w.Body, err)
				}
			}
		})
	}
}
