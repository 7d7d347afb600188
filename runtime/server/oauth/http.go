package oauth

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// MetadataPrefix is the well-known path of RFC 9728 protected-resource
// metadata.
const MetadataPrefix = "/.well-known/oauth-protected-resource"

// MetadataURL returns where the metadata of the resource URI is, as RFC
// 9728 §3.1 builds it: the well-known prefix inserted between the host and
// the resource's path ("https://gw.example.com/mcp" has
// "https://gw.example.com/.well-known/oauth-protected-resource/mcp").
func MetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + MetadataPrefix + strings.TrimSuffix(u.EscapedPath(), "/")
}

// metadataPath is the path Protect serves the metadata at, unescaped as
// http.Request.URL.Path is.
func metadataPath(u *url.URL) string {
	return MetadataPrefix + strings.TrimSuffix(u.Path, "/")
}

// Metadata returns the protected-resource metadata (RFC 9728 §2) that
// Protect serves: the resource ([Options.Audience]), the issuer as its one
// authorization server, [Options.ScopesSupported], and "header" as the only
// bearer method (tokens in a query or a form body are not read).
func (v *Verifier) Metadata() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               v.opts.Audience,
		AuthorizationServers:   []string{v.opts.Issuer},
		ScopesSupported:        append([]string(nil), v.opts.ScopesSupported...),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "toolgate",
	}
}

// Challenge returns the WWW-Authenticate value of a refusal (RFC 6750 §3,
// RFC 9728 §5.1): errCode is "" for a request without credentials (no
// error code, as RFC 6750 §3.1 asks), "invalid_token" or
// "insufficient_scope"; scope, when set, names the scopes needed.
func (v *Verifier) Challenge(errCode, scope string) string {
	var b strings.Builder
	b.WriteString(`Bearer resource_metadata="`)
	b.WriteString(v.metaURL)
	b.WriteByte('"')
	if errCode != "" {
		b.WriteString(`, error="` + errCode + `"`)
	}
	if scope != "" && !strings.ContainsAny(scope, "\"\\") {
		b.WriteString(`, scope="` + scope + `"`)
	}
	return b.String()
}

// Protect serves the protected-resource metadata at its well-known path
// (and at the bare prefix, for clients that try the root first) and passes
// every other request to next, rewriting the WWW-Authenticate header of
// next's refusals: a 401 gets Challenge("invalid_token") when the request
// carried a bearer token and Challenge("") when it did not (no
// Authorization header, another scheme, an empty token); a 403
// whose challenge says error="insufficient_scope" (runtime/server's, for a
// missing scope) gets Challenge("insufficient_scope", its scope), so a
// client knows which scopes to ask for (step-up); any other 403 (a
// principal approving its own call) is left as next wrote it, since no
// scope would help. next authenticates with v (it is
// a server.Authenticator) or with anything else: Protect only shapes the
// answers the MCP authorization specification asks for.
func (v *Verifier) Protect(next http.Handler) http.Handler {
	u, _ := url.Parse(v.opts.Audience)
	meta, _ := json.Marshal(v.Metadata())
	serveMeta := func(w http.ResponseWriter, r *http.Request) {
		// The metadata is public (RFC 9728 §3): any origin may read it.
		w.Header().Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodOptions:
			w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
			return
		case http.MethodGet, http.MethodHead:
		default:
			w.Header().Set("Allow", "GET, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		w.Write(meta)
	}
	path := metadataPath(u)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path || r.URL.Path == MetadataPrefix {
			serveMeta(w, r)
			return
		}
		next.ServeHTTP(&challenger{ResponseWriter: w, v: v, hadAuth: hasBearer(r)}, r)
	})
}

// hasBearer reports whether r carries a bearer token. Another scheme
// (Basic) or an empty token is no credential as RFC 6750 §3.1 means it:
// the challenge then has no error code.
func hasBearer(r *http.Request) bool {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(tok) != ""
}

// challenger sets the WWW-Authenticate header of 401 and 403 answers.
type challenger struct {
	http.ResponseWriter
	v       *Verifier
	hadAuth bool
	wrote   bool
}

func (c *challenger) WriteHeader(code int) {
	if !c.wrote {
		c.wrote = true
		switch {
		case code == http.StatusUnauthorized && c.hadAuth:
			c.Header().Set("WWW-Authenticate", c.v.Challenge("invalid_token", ""))
		case code == http.StatusUnauthorized:
			c.Header().Set("WWW-Authenticate", c.v.Challenge("", ""))
		case code == http.StatusForbidden:
			if scope, ok := insufficientScope(c.Header().Get("WWW-Authenticate")); ok {
				c.Header().Set("WWW-Authenticate", c.v.Challenge("insufficient_scope", scope))
			}
		}
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *challenger) Write(b []byte) (int, error) {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}

// Flush lets streamed answers (MCP event streams) through.
func (c *challenger) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives [http.ResponseController] the writer underneath.
func (c *challenger) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// insufficientScope reports whether challenge (a WWW-Authenticate value
// next set) is an insufficient_scope one, and returns its scope parameter
// ("" when it has none).
func insufficientScope(challenge string) (scope string, ok bool) {
	if !strings.Contains(challenge, `error="insufficient_scope"`) {
		return "", false
	}
	_, rest, found := strings.Cut(challenge, ` scope="`)
	if !found {
		return "", true
	}
	scope, _, _ = strings.Cut(rest, `"`)
	return scope, true
}
