package oauth_test

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/oauthtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/runtime/server/oauth"
	"github.com/toolgate/toolgate/tools"
)

// TestRealProvider verifies tokens a real OpenID provider issued by the
// client_credentials grant (.ci/oidc-op: zitadel/oidc's OP library): the
// valid token, expiry and nbf around the leeway (the verifier's clock
// moved, the token untouched), the wrong audience and issuer, "alg":"none"
// and HS256 forged from the provider's public key, a tampered payload,
// and key rotation to ES256, EdDSA and PS256 with the refetch limit.
func TestRealProvider(t *testing.T) {
	ctx := context.Background()
	op := oauthtest.StartProvider(t, testenv.OIDCProvider(t), resource)
	c := &clock{t: time.Now()}
	v, logs := newVerifier(t, op.URL, c, nil)

	token := op.Token(t, "agent", "calc:use accounts:read")
	claims := payload(t, token)
	want := tools.Principal{ID: "svc-agent", Tenant: "acme", Scopes: []string{"calc:use", "accounts:read"}}
	exp := time.Unix(int64(claims["exp"].(float64)), 0)
	nbf := time.Unix(int64(claims["nbf"].(float64)), 0)
	parts := strings.Split(token, ".")
	forgedClaims := payload(t, token)
	forgedClaims["sub"] = "admin"
	forged, _ := json.Marshal(forgedClaims)

	refused := func(name string, v *oauth.Verifier, tok string, reason oauth.Reason) {
		t.Helper()
		var te *oauth.TokenError
		if p, err := v.Verify(ctx, tok); !errors.As(err, &te) || te.Reason != reason {
			t.Errorf("%s: Verify = %+v, %v; want reason %s", name, p, err, reason)
		}
	}
	accepted := func(name string, tok string) {
		t.Helper()
		if p, err := v.Verify(ctx, tok); err != nil || !equalPrincipal(p, want) {
			t.Errorf("%s: Verify = %+v, %v; want %+v", name, p, err, want)
		}
	}
	at := func(tm time.Time) { c.mu.Lock(); c.t = tm; c.mu.Unlock() }

	accepted("valid", token)
	at(exp.Add(29 * time.Second))
	accepted("expired within the leeway", token)
	at(exp.Add(31 * time.Second))
	refused("expired", v, token, oauth.ReasonExpired)
	at(nbf.Add(-29 * time.Second))
	accepted("not yet valid within the leeway", token)
	at(nbf.Add(-31 * time.Second))
	refused("not yet valid", v, token, oauth.ReasonNotYetValid)
	at(nbf)

	refused("wrong audience", v, op.Token(t, "other", "calc:use"), oauth.ReasonAudience)
	localhost := strings.Replace(op.URL, "127.0.0.1", "localhost", 1)
	w, _ := newVerifier(t, localhost, c, func(o *oauth.Options) { o.JWKSURL = op.URL + "/keys" })
	refused("wrong issuer", w, token, oauth.ReasonIssuer)
	hdr := decodePart(t, parts[0])
	refused("alg none", v, oauthtest.Unsigned(map[string]any{"alg": "none", "kid": hdr["kid"], "typ": "JWT"}, claims), oauth.ReasonAlgorithm)
	refused("HS256 with the provider's public key", v, oauthtest.HS256(providerKeyPEM(t, op.URL+"/keys"), hdr["kid"].(string), claims), oauth.ReasonAlgorithm)
	refused("tampered", v, parts[0]+"."+base64.RawURLEncoding.EncodeToString(forged)+"."+parts[2], oauth.ReasonSignature)
	refused("signature of another token", v, parts[0]+"."+parts[1]+"."+strings.Split(op.Token(t, "agent", "calc:use"), ".")[2], oauth.ReasonSignature)

	// Rotation: the provider signs with a new ES256 key. Within a minute of
	// the last fetch the unknown kid is refused (no refetch); after it,
	// the refetch finds the key. The old key stays published, so its
	// tokens still pass.
	kid := op.Rotate(t, "ES256")
	rotated := op.Token(t, "agent", "calc:use accounts:read")
	if h := decodePart(t, strings.Split(rotated, ".")[0]); h["kid"] != kid || h["alg"] != "ES256" {
		t.Fatalf("after the rotation the token's header is %v, want kid %s ES256", h, kid)
	}
	refused("rotated key within the refetch interval", v, rotated, oauth.ReasonUnknownKey)
	c.Add(61 * time.Second)
	accepted("rotated key after the refetch interval", rotated)
	accepted("the old key, still published", token)
	op.Rotate(t, "EdDSA")
	c.Add(61 * time.Second)
	accepted("EdDSA", op.Token(t, "agent", "calc:use accounts:read"))
	// PS256 as another JOSE implementation (go-jose) signs it.
	op.Rotate(t, "PS256")
	c.Add(61 * time.Second)
	accepted("PS256", op.Token(t, "agent", "calc:use accounts:read"))

	if strings.Contains(logs.String(), parts[2]) {
		t.Error("the log holds a token")
	}
}

func payload(t *testing.T, token string) map[string]any {
	t.Helper()
	return decodePart(t, strings.Split(token, ".")[1])
}

func decodePart(t *testing.T, part string) map[string]any {
	t.Helper()
	data, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// providerKeyPEM returns the first RSA key of the key set at jwks as PEM.
func providerKeyPEM(t *testing.T, jwks string) []byte {
	t.Helper()
	resp, err := http.Get(jwks)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct {
		Keys []struct{ Kty, N, E string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	for _, k := range set.Keys {
		if k.Kty == "RSA" {
			n, _ := base64.RawURLEncoding.DecodeString(k.N)
			e, _ := base64.RawURLEncoding.DecodeString(k.E)
			der, err := x509.MarshalPKIXPublicKey(&rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())})
			if err != nil {
				t.Fatal(err)
			}
			return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
		}
	}
	t.Fatal("no RSA key in the provider's key set")
	return nil
}
