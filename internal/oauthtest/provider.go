package oauthtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// Provider is a running real OpenID provider (.ci/oidc-op: zitadel/oidc's
// OP library) that issues JWT access tokens by the client_credentials
// grant. Its clients are "agent" (tokens for the resource it was started
// with) and "other" (tokens for https://other.test); every token has
// "tenant":"acme" and the granted scopes in "scope".
type Provider struct {
	// URL is the issuer.
	URL string
}

// StartProvider runs the provider binary bin for resource; it stops when
// the test ends.
func StartProvider(t testing.TB, bin, resource string) *Provider {
	t.Helper()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-resource", resource, "-tenant", "acme")
	_, issuer := testenv.StartProcess(t, cmd, "issuer ", time.Minute)
	return &Provider{URL: issuer}
}

// Token runs the client_credentials grant for client (its secret is
// client + "-secret") with the scopes, space-separated, and returns the
// access token.
func (p *Provider) Token(t testing.TB, client, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}}
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, client+"-secret")
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	body, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(body, &out); err != nil || resp.StatusCode != 200 || out.AccessToken == "" {
		t.Fatalf("client_credentials for %s: %d %s", client, resp.StatusCode, body)
	}
	return out.AccessToken
}

// Rotate makes the provider sign with a new key of alg (RS256, PS256, ES256 or
// EdDSA), keeping the old keys in its key set, and returns the new kid.
func (p *Provider) Rotate(t testing.TB, alg string) string {
	t.Helper()
	resp, err := http.Post(p.URL+"/rotate?alg="+alg, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("rotate %s: %d %s", alg, resp.StatusCode, body)
	}
	return strings.TrimSpace(string(body))
}
