// Package oauthtest holds the authorization servers of toolgate's OAuth
// tests. An [Issuer] is a stand-in: an httptest server with an OpenID Connect
// discovery document and a JSON Web Key Set, whose real RSA, P-256 and
// Ed25519 keys sign whatever token a test asks for (a wrong one included),
// and whose keys can be rotated; it runs no grant. A [Provider] is a real
// OpenID provider (.ci/oidc-op, built from zitadel/oidc's OP library) run
// as a process, whose tokens come from its token endpoint by the
// client_credentials grant.
package oauthtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Issuer is a test authorization server. Its methods are safe for
// concurrent use.
type Issuer struct {
	// URL is the issuer identifier (the httptest server's URL).
	URL string
	// JWKSURL is where its key set is served.
	JWKSURL string

	srv        *httptest.Server
	mu         sync.Mutex
	keys       []*Key           // published
	jwks       http.HandlerFunc // when set, answers for the key set
	jwksHits   atomic.Int64
	discovered atomic.Int64
}

// Claims are valid access-token claims of is for audience at now: subject
// alice of tenant acme with scope, valid for five minutes. kv changes them
// in pairs (name, value); a nil value removes the claim.
func (is *Issuer) Claims(audience, scope string, now time.Time, kv ...any) map[string]any {
	return With(map[string]any{"iss": is.URL, "aud": audience, "sub": "alice", "tenant": "acme",
		"scope": scope, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}, kv...)
}

// With returns a copy of m (claims, a JWK) changed by kv in pairs (name,
// value); a nil value removes the member.
func With(m map[string]any, kv ...any) map[string]any {
	c := maps.Clone(m)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

// Key is a signing key of an [Issuer].
type Key struct {
	ID  string
	Alg string // RS256, PS256, ES256 or EdDSA
	// JWKExtra changes the published JWK's members (a nil value removes
	// one): a key without "alg", or one whose "use" is "enc".
	JWKExtra map[string]any
	priv     crypto.Signer
}

var b64 = base64.RawURLEncoding

// NewIssuer starts an [Issuer] with one key per algorithm (kids "rsa-1",
// "ec-1", "ed-1"); it stops when the test ends.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	is := &Issuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		is.discovered.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": is.URL, "jwks_uri": is.JWKSURL, "token_endpoint": is.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256", "EdDSA"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.jwksHits.Add(1)
		is.mu.Lock()
		h := is.jwks
		is.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(is.KeySet())
	})
	for _, k := range []struct{ id, alg string }{{"rsa-1", "RS256"}, {"ec-1", "ES256"}, {"ed-1", "EdDSA"}} {
		is.keys = append(is.keys, NewKey(t, k.id, k.alg))
	}
	// Everything the handlers read is set before the server starts.
	is.srv = httptest.NewUnstartedServer(mux)
	is.URL = "http://" + is.srv.Listener.Addr().String()
	is.JWKSURL = is.URL + "/jwks"
	is.srv.Start()
	t.Cleanup(is.srv.Close)
	return is
}

// NewKey generates a key for alg.
func NewKey(t testing.TB, id, alg string) *Key {
	t.Helper()
	var priv crypto.Signer
	var err error
	switch alg {
	case "RS256", "PS256":
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ES256":
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "EdDSA":
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("oauthtest: no algorithm %q", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &Key{ID: id, Alg: alg, priv: priv}
}

// Key returns the published key with id, or nil.
func (is *Issuer) Key(id string) *Key {
	is.mu.Lock()
	defer is.mu.Unlock()
	for _, k := range is.keys {
		if k.ID == id {
			return k
		}
	}
	return nil
}

// Publish replaces the published keys (a rotation).
func (is *Issuer) Publish(keys ...*Key) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = keys
}

// ServeJWKS makes h answer the key set's requests (a failing or slow
// issuer); nil serves the published keys again.
func (is *Issuer) ServeJWKS(h http.HandlerFunc) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.jwks = h
}

// JWKSFetches returns how often the key set was fetched.
func (is *Issuer) JWKSFetches() int { return int(is.jwksHits.Load()) }

// Discoveries returns how often the discovery document was fetched.
func (is *Issuer) Discoveries() int { return int(is.discovered.Load()) }

// KeySet returns the published keys as a JWK Set.
func (is *Issuer) KeySet() []byte {
	is.mu.Lock()
	defer is.mu.Unlock()
	var keys []map[string]any
	for _, k := range is.keys {
		keys = append(keys, k.JWK())
	}
	b, _ := json.Marshal(map[string]any{"keys": keys})
	return b
}

// JWK returns k's public JWK.
func (k *Key) JWK() map[string]any {
	j := map[string]any{"kid": k.ID, "alg": k.Alg, "use": "sig"}
	switch pub := k.priv.Public().(type) {
	case *rsa.PublicKey:
		j["kty"], j["n"], j["e"] = "RSA", b64.EncodeToString(pub.N.Bytes()), b64.EncodeToString(big.NewInt(int64(pub.E)).Bytes())
	case *ecdsa.PublicKey:
		raw, _ := pub.Bytes()
		j["kty"], j["crv"], j["x"], j["y"] = "EC", "P-256", b64.EncodeToString(raw[1:33]), b64.EncodeToString(raw[33:])
	case ed25519.PublicKey:
		j["kty"], j["crv"], j["x"] = "OKP", "Ed25519", b64.EncodeToString(pub)
	}
	for n, v := range k.JWKExtra {
		if v == nil {
			delete(j, n)
		} else {
			j[n] = v
		}
	}
	return j
}

// PublicKeyPEM returns k's public key in PEM (PKIX): what an attacker
// forging an [HS256] token would use as the HMAC secret.
func (k *Key) PublicKeyPEM() []byte {
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// HS256 returns claims signed with HMAC-SHA256 under secret, with kid.
func HS256(secret []byte, kid string, claims map[string]any) string {
	signed := encode(map[string]any{"alg": "HS256", "kid": kid, "typ": "JWT"}) + "." + encode(claims)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(signed))
	return signed + "." + b64.EncodeToString(m.Sum(nil))
}

// Sign returns a compact JWS of claims signed by k, with header
// {"alg":k.Alg,"kid":k.ID,"typ":"JWT"} merged with extra (a nil value
// removes a member).
func (k *Key) Sign(claims map[string]any, extra map[string]any) string {
	hdr := map[string]any{"alg": k.Alg, "kid": k.ID, "typ": "JWT"}
	for n, v := range extra {
		if v == nil {
			delete(hdr, n)
		} else {
			hdr[n] = v
		}
	}
	signed := encode(hdr) + "." + encode(claims)
	var sig []byte
	var err error
	switch p := k.priv.(type) {
	case *rsa.PrivateKey:
		sum := sha256.Sum256([]byte(signed))
		if hdr["alg"] == "PS256" {
			// RFC 7518 §3.5: the salt is as long as the hash.
			sig, err = rsa.SignPSS(rand.Reader, p, crypto.SHA256, sum[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		} else {
			sig, err = rsa.SignPKCS1v15(rand.Reader, p, crypto.SHA256, sum[:])
		}
	case *ecdsa.PrivateKey:
		sum := sha256.Sum256([]byte(signed))
		var r, s *big.Int
		if r, s, err = ecdsa.Sign(rand.Reader, p, sum[:]); err == nil {
			sig = make([]byte, 64)
			r.FillBytes(sig[:32])
			s.FillBytes(sig[32:])
		}
	case ed25519.PrivateKey:
		sig = ed25519.Sign(p, []byte(signed))
	}
	if err != nil {
		panic(fmt.Sprintf("oauthtest: sign: %v", err))
	}
	return signed + "." + b64.EncodeToString(sig)
}

// Unsigned returns header.payload. with the given header: the "alg":"none" form.
func Unsigned(hdr, claims map[string]any) string {
	return encode(hdr) + "." + encode(claims) + "."
}

// encode returns the base64url JSON of v, a JWS part.
func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b64.EncodeToString(b)
}
