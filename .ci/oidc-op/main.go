// Command oidc-op is the real OpenID provider of toolgate's OAuth tests:
// zitadel/oidc's certified OP library (pkg/op) over its example in-memory
// storage, configured for the client_credentials grant with JWT access
// tokens. Nothing here signs or encodes a token: the provider's token
// endpoint does, with go-jose.
//
// What this program adds to the example storage is configuration:
//
//   - two service clients: "agent" (secret "agent-secret") whose tokens are
//     for the resource -resource, and "other" (secret "other-secret")
//     whose tokens are for https://other.test (the wrong-audience case);
//   - the claims "tenant" (-tenant) and "scope" (the granted scopes,
//     space-separated) in every access token;
//   - key rotation: POST /rotate?alg=RS256|PS256|ES256|EdDSA makes a new signing
//     key with a new kid, keeps the old key in the JWK Set, and signs with
//     the new one from then on.
//
// It listens on -addr (default 127.0.0.1:0), its issuer is http://ADDR,
// and it prints "issuer http://ADDR" on stdout once it serves.
package main

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	resource := flag.String("resource", "https://gw.test", "the audience of the agent client's tokens")
	tenant := flag.String("tenant", "acme", "the tenant claim of every token")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	st := &opStorage{
		Storage: storage.NewStorage(storage.NewUserStore(issuer + "/")),
		tenant:  *tenant,
		clients: map[string]*serviceClient{
			"agent": {secret: "agent-secret", audience: *resource},
			"other": {secret: "other-secret", audience: "https://other.test"},
		},
	}
	if err := st.rotate("RS256"); err != nil {
		log.Fatal(err)
	}
	cfg := &op.Config{CryptoKey: sha256.Sum256([]byte("toolgate-ci")), AuthMethodPost: true}
	provider, err := op.NewProvider(cfg, st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /rotate", func(w http.ResponseWriter, r *http.Request) {
		if err := st.rotate(r.URL.Query().Get("alg")); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintln(w, st.current().id)
	})
	mux.Handle("/", provider)
	fmt.Println("issuer", issuer)
	log.Fatal(http.Serve(ln, mux))
}

// opStorage is the example storage with service clients, claims and keys
// of this program's own.
type opStorage struct {
	*storage.Storage
	tenant  string
	clients map[string]*serviceClient

	mu   sync.Mutex
	keys []*signingKey // the last is the current one
}

type serviceClient struct {
	op.Client
	secret, audience string
}

// ClientCredentials authenticates a service client.
func (s *opStorage) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	c, ok := s.clients[id]
	if !ok || c.secret != secret {
		return nil, errors.New("wrong client or secret")
	}
	return &jwtClient{Client: storage.WebClient(id, secret), id: id}, nil
}

// ClientCredentialsTokenRequest is the token the grant issues.
func (s *opStorage) ClientCredentialsTokenRequest(ctx context.Context, id string, scopes []string) (op.TokenRequest, error) {
	c, ok := s.clients[id]
	if !ok {
		return nil, errors.New("wrong client")
	}
	return &oidc.JWTTokenRequest{Subject: "svc-" + id, Audience: []string{c.audience}, Scopes: scopes}, nil
}

// GetPrivateClaimsFromScopes adds the tenant and the granted scopes.
func (s *opStorage) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	return map[string]any{"tenant": s.tenant, "scope": strings.Join(scopes, " ")}, nil
}

// jwtClient is a confidential client of the client_credentials grant
// whose access tokens are JWTs.
type jwtClient struct {
	op.Client
	id string
}

func (c *jwtClient) GetID() string                       { return c.id }
func (c *jwtClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }
func (c *jwtClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}
func (c *jwtClient) IsScopeAllowed(string) bool { return true }
func (c *jwtClient) ClockSkew() time.Duration   { return 0 }
func (c *jwtClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// signingKey is one key of the provider; it serves as op.SigningKey and op.Key.
type signingKey struct {
	id  string
	alg jose.SignatureAlgorithm
	key crypto.Signer
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return k.alg }
func (k *signingKey) Algorithm() jose.SignatureAlgorithm          { return k.alg }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }
func (k *signingKey) Use() string                                 { return "sig" }

type publicKey struct{ *signingKey }

func (k publicKey) Key() any { return k.key.Public() }

// rotate makes a new current key of alg.
func (s *opStorage) rotate(alg string) error {
	var key crypto.Signer
	var err error
	switch alg {
	case "RS256", "":
		alg = "RS256"
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case "PS256":
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ES256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "EdDSA":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		return fmt.Errorf("no algorithm %q", alg)
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, &signingKey{id: uuid.NewString(), alg: jose.SignatureAlgorithm(alg), key: key})
	return nil
}

func (s *opStorage) current() *signingKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[len(s.keys)-1]
}

// SigningKey signs with the current key.
func (s *opStorage) SigningKey(context.Context) (op.SigningKey, error) { return s.current(), nil }

// SignatureAlgorithms are the current key's.
func (s *opStorage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{s.current().alg}, nil
}

// KeySet publishes every key, old and current.
func (s *opStorage) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []op.Key
	for _, k := range s.keys {
		keys = append(keys, publicKey{k})
	}
	return keys, nil
}
