// Package oauth makes toolgate an OAuth 2.1 resource server: it accepts
// bearer JWT access tokens that an authorization server (an OpenID
// provider) issued for this resource, and maps their claims to a
// [tools.Principal].
//
// A [Verifier] checks, for every token: the JWS compact form; an algorithm
// on the allow-list (RS256, PS256, ES256, [EdDSA], Ed25519; "none" and
// every HS* are always refused, so a public key can never be used as an
// HMAC secret); the signature against the issuer's JSON Web Key Set;
// "iss" equal to [Options.Issuer]; "aud" containing [Options.Audience], the resource URI
// (RFC 8707); "exp" (required) and "nbf"/"iat" with [Options.Leeway] of clock
// skew. The key set comes from [Options.JWKSURL] or from the issuer's
// discovery document (OpenID Connect discovery, then RFC 8414). It is
// cached, refetched when a token names an unknown "kid" (key rotation) at
// most once per [Options.MinRefreshInterval] (a flood of bogus kids cannot
// hammer the issuer), and refetched when older than [Options.MaxKeyAge].
// Every fetch is bounded by [Options.FetchTimeout], and follows a
// redirect only to https (http on a loopback host). A key the verifier
// cannot use (another use, type or curve; malformed; too weak; an
// ambiguous kid) is skipped and logged; the set's other keys serve.
//
// The claims map to the principal as [ClaimMapping] documents: "sub" is
// the principal, a configurable claim ("tenant" by default, "tid" for
// Entra ID) or a fixed tenant is the tenant, and "scope" (space-separated)
// or "scp" (an array or a string) are the scopes.
//
// [Verifier.Protect] wraps an HTTP handler (the gateway's, or the MCP
// Streamable HTTP handler) with what the MCP authorization specification
// asks of a resource server: the protected-resource metadata of RFC 9728 at
// /.well-known/oauth-protected-resource, and WWW-Authenticate challenges
// that point to it (error="invalid_token", or "insufficient_scope" with
// the scopes needed, as RFC 6750 says).
//
//	v, err := oauth.New(&oauth.Options{Issuer: "https://id.example.com",
//		Audience: "https://gw.example.com"})
//	...
//	handler := v.Protect(server.NewHandler(g, v, nil))
//
// No token is ever logged or echoed: errors name the reason ([Reason]),
// never the token or a claim value.
//
// Why no JOSE module: verification needs three signature schemes the
// standard library implements (crypto/rsa PKCS #1 v1.5, crypto/ecdsa,
// crypto/ed25519) and a key-set parser of a few dozen lines; the whole
// validator is small enough to read, and it accepts only what it names, so
// the classic JOSE pitfalls (alg confusion, "none", embedded "jwk"/"jku"
// headers, "crit" extensions) cannot arise from a library default.
package oauth
