package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/oauthtest"
	"github.com/toolgate/toolgate/internal/testenv"
)

// oauthSetting is the world of the OAuth end-to-end tests: the built
// binaries, a test issuer, and an --mcp-config whose calc server's tools
// need the scope calc:use.
type oauthSetting struct {
	toolgate, config, dir string
	is                    *oauthtest.Issuer
}

func newOAuthSetting(t *testing.T) *oauthSetting {
	t.Helper()
	toolgate, calc := buildForServe(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "servers.json")
	body, _ := json.Marshal(map[string]any{"servers": map[string]any{"calc": map[string]any{"command": []string{calc}, "scopes": []string{"calc:use"}}}})
	if err := os.WriteFile(config, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return &oauthSetting{toolgate: toolgate, config: config, dir: dir, is: oauthtest.NewIssuer(t)}
}

// claims are valid claims for audience, changed by kv (nil removes).
func (s *oauthSetting) claims(audience string, kv ...any) map[string]any {
	return s.is.Claims(audience, "calc:use", time.Now(), kv...)
}

// refusals are the tokens every OAuth server must refuse with 401 invalid_token.
func (s *oauthSetting) refusals(t *testing.T, audience string) map[string]string {
	rsa := s.is.Key("rsa-1")
	now := time.Now()
	valid := rsa.Sign(s.claims(audience), nil)
	parts := strings.Split(valid, ".")
	forged := strings.Split(rsa.Sign(s.claims(audience, "sub", "mallory"), nil), ".")
	return map[string]string{
		"expired":          rsa.Sign(s.claims(audience, "exp", now.Add(-time.Hour).Unix()), nil),
		"not yet valid":    rsa.Sign(s.claims(audience, "nbf", now.Add(time.Hour).Unix()), nil),
		"wrong audience":   rsa.Sign(s.claims("https://elsewhere.test"), nil),
		"wrong issuer":     rsa.Sign(s.claims(audience, "iss", "https://evil.test"), nil),
		"alg none":         oauthtest.Unsigned(map[string]any{"alg": "none", "kid": "rsa-1"}, s.claims(audience)),
		"HS256 public key": oauthtest.HS256(rsa.PublicKeyPEM(), "rsa-1", s.claims(audience)),
		"tampered":         parts[0] + "." + forged[1] + "." + parts[2],
		"unknown kid":      oauthtest.NewKey(t, "nobody", "ES256").Sign(s.claims(audience), nil),
		"opaque":           "not-a-jwt-at-all",
	}
}

// TestServeOAuth runs `toolgate serve` as an OAuth resource server over
// the calc upstream: the metadata, the challenges, the refusals, a call,
// step-up (403), key rotation, and no token in any answer or log line.
func TestServeOAuth(t *testing.T) {
	s := newOAuthSetting(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const audience = "https://gw.test"
	cs := &calcServe{toolgate: s.toolgate, dir: s.dir}
	p := cs.start(t, ctx, nil, "-v", "--mcp-config", s.config, "--data", filepath.Join(s.dir, "data"),
		"--oauth-issuer", s.is.URL, "--oauth-audience", audience, "--oauth-min-refresh", "1ms")
	metaURL := audience + "/.well-known/oauth-protected-resource"

	// RFC 9728 metadata, public.
	resp, err := http.Get(p.url + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if resp.StatusCode != 200 || meta["resource"] != audience || !sameJSON(meta["authorization_servers"], []string{s.is.URL}) ||
		!sameJSON(meta["scopes_supported"], []string{"approvals:grant", "calc:use"}) || !sameJSON(meta["bearer_methods_supported"], []string{"header"}) {
		t.Errorf("GET metadata = %d %v", resp.StatusCode, meta)
	}

	var seen []string // every token sent
	call := func(token, body string) (int, string, map[string]any) {
		t.Helper()
		seen = append(seen, token)
		return oauthCall(t, ctx, p.url, token, body)
	}

	code, chal, out := call("", calcAdd(1))
	if want := `Bearer resource_metadata="` + metaURL + `"`; code != 401 || chal != want {
		t.Errorf("no token = %d %q %v, want 401 %q", code, chal, out, want)
	}
	// A valid token in the query (RFC 6750 §2.3) is not read: the header
	// is the only bearer method the metadata names.
	inQuery := s.is.Key("ec-1").Sign(s.claims(audience), nil)
	seen = append(seen, inQuery)
	resp, _ = testenv.Post(t, ctx, p.url+"/v1/tools/call?access_token="+inQuery, "", calcAdd(1))
	if want := `Bearer resource_metadata="` + metaURL + `"`; resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("a token in the query = %d %q, want 401 %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}
	for name, tok := range s.refusals(t, audience) {
		code, chal, out := call(tok, calcAdd(1))
		if want := `Bearer resource_metadata="` + metaURL + `", error="invalid_token"`; code != 401 || chal != want || out["error_type"] != "UNAUTHENTICATED" {
			t.Errorf("%s = %d %q %v, want 401 %q", name, code, chal, out, want)
		}
	}
	code, _, out = call(s.is.Key("ec-1").Sign(s.claims(audience), nil), calcAdd(1))
	if res, _ := json.Marshal(out["result"]); code != 200 || !strings.Contains(string(res), "42") {
		t.Errorf("a valid ES256 token = %d %v, want 200 with 42", code, out)
	}
	code, chal, out = call(s.is.Key("ed-1").Sign(s.claims(audience, "scope", "other:thing"), nil), calcAdd(2))
	if want := `Bearer resource_metadata="` + metaURL + `", error="insufficient_scope", scope="calc:use"`; code != 403 || chal != want || out["error_type"] != "PERMISSION_DENIED" {
		t.Errorf("a token without calc:use = %d %q %v, want 403 %q", code, chal, out, want)
	}

	// Rotation: the issuer publishes a new key; its first token is accepted.
	next := oauthtest.NewKey(t, "rsa-2", "RS256")
	s.is.Publish(next)
	code, _, out = call(next.Sign(s.claims(audience), nil), calcAdd(3))
	if code != 200 {
		t.Errorf("a token of the rotated-in key = %d %v, want 200", code, out)
	}
	resp, metrics := testenv.Get(t, p.url+"/metrics")
	for _, want := range []string{`toolgate_oauth_tokens_total{outcome="accepted"} 3`, `toolgate_oauth_tokens_total{outcome="expired"} 1`, `toolgate_oauth_key_set_fetches_total{result="ok"} 3`} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(string(metrics), want) {
				t.Errorf("/metrics lacks %s:\n%s", want, grepLines(string(metrics), "toolgate_oauth"))
			}
		})
	}
	stopClean(t, p)
	logs := p.Stderr.String()
	for _, tok := range seen {
		if tok != "" && strings.Contains(logs, tok) {
			t.Errorf("the log holds a token")
		}
	}
	if !strings.Contains(logs, "reason=expired") {
		t.Errorf("the debug log does not name the refusals' reasons:\n%s", logs)
	}
}

// oauthCall posts body to base's /v1/tools/call with the bearer token
// (none when empty) and returns the status, the WWW-Authenticate header
// and the JSON body; an answer that echoes the token fails the test.
func oauthCall(t *testing.T, ctx context.Context, base, token, body string) (int, string, map[string]any) {
	t.Helper()
	resp, data := testenv.Post(t, ctx, base+"/v1/tools/call", token, body)
	if token != "" && strings.Contains(string(data)+strings.Join(headerValues(resp.Header), " "), token) {
		t.Errorf("the answer echoes the token: %s", data)
	}
	var out map[string]any
	json.Unmarshal(data, &out)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), out
}

func headerValues(h http.Header) []string {
	var all []string
	for _, v := range h {
		all = append(all, v...)
	}
	return all
}

func sameJSON(got any, want []string) bool {
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	return string(a) == string(b)
}

// TestMCPServeOAuth runs `toolgate mcp serve --http` as an OAuth resource
// server and connects the go-sdk's client with a bearer token.
func TestMCPServeOAuth(t *testing.T) {
	s := newOAuthSetting(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const audience = mcpAudience
	base, logs := s.mcpServe(t, ctx, "--oauth-tenant", "acme")
	metaURL := "https://mcp.test/.well-known/oauth-protected-resource"

	resp, err := http.Get(base + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if resp.StatusCode != 200 || meta["resource"] != audience {
		t.Errorf("GET metadata = %d %v", resp.StatusCode, meta)
	}

	// Without a token, and with each bad one, the MCP endpoint answers 401
	// with the challenge.
	post := func(token string) (int, string, string) {
		resp, body := testenv.Post(t, ctx, base+"/", token,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
			"Content-Type", "application/json", "Accept", "application/json, text/event-stream")
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(body)
	}
	if code, chal, _ := post(""); code != 401 || chal != `Bearer resource_metadata="`+metaURL+`"` {
		t.Errorf("no token = %d %q", code, chal)
	}
	var seen []string
	// A valid token in the query (RFC 6750 §2.3) is not read.
	inQuery := s.is.Key("ec-1").Sign(s.claims(audience), nil)
	seen = append(seen, inQuery)
	qresp, _ := testenv.Post(t, ctx, base+"/?access_token="+inQuery, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	if qresp.StatusCode != 401 || qresp.Header.Get("WWW-Authenticate") != `Bearer resource_metadata="`+metaURL+`"` {
		t.Errorf("a token in the query = %d %q, want 401 without a token", qresp.StatusCode, qresp.Header.Get("WWW-Authenticate"))
	}
	for name, tok := range s.refusals(t, audience) {
		seen = append(seen, tok)
		code, chal, body := post(tok)
		if code != 401 || chal != `Bearer resource_metadata="`+metaURL+`", error="invalid_token"` {
			t.Errorf("%s = %d %q", name, code, chal)
		}
		if strings.Contains(body, tok) {
			t.Errorf("%s: the answer echoes the token", name)
		}
	}

	// The Origin check comes before the verifier and /metrics: a browser
	// page of another origin gets 403 and no challenge, token or not.
	for _, tc := range []struct{ name, method, path, token string }{
		{"no token", "POST", "/", ""},
		{"a bad token", "POST", "/", "not-a-jwt-at-all"},
		{"a valid token", "POST", "/", s.is.Key("ed-1").Sign(s.claims(audience, "tenant", nil), nil)},
		{"approvals, no token", "POST", "/v1/approvals/apr_x", ""},
		{"metrics", "GET", "/metrics", ""},
		{"resource metadata", "GET", "/.well-known/oauth-protected-resource", ""},
	} {
		t.Run("foreign origin, "+tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctx, tc.method, base+tc.path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("Origin", "https://evil.example")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if chal := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden || chal != "" || !strings.Contains(string(body), "Origin") {
				t.Errorf("%s %s with a foreign Origin = %d %q %s, want 403 without a challenge", tc.method, tc.path, resp.StatusCode, chal, body)
			}
		})
	}

	// Step-up: granting needs approvals:grant, and the 403 says so.
	resp, body := testenv.Post(t, ctx, base+"/v1/approvals/apr_x", s.is.Key("ed-1").Sign(s.claims(audience, "tenant", nil), nil), "")
	if want := `Bearer resource_metadata="` + metaURL + `", error="insufficient_scope", scope="approvals:grant"`; resp.StatusCode != 403 || resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("POST /v1/approvals/apr_x without approvals:grant = %d %q %s, want 403 %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body, want)
	}

	// The go-sdk client with a valid token (no tenant claim: --oauth-tenant),
	// and with one whose tenant claim is acme too.
	token := s.is.Key("ed-1").Sign(s.claims(audience, "tenant", nil), nil)
	seen = append(seen, token)
	mcpAdd(t, ctx, base, token, logs)
	mcpAdd(t, ctx, base, s.is.Key("ed-1").Sign(s.claims(audience, "tenant", "acme"), nil), logs)
	// A token the issuer signed for another tenant is not mapped to acme.
	other := s.is.Key("ed-1").Sign(s.claims(audience, "tenant", "globex"), nil)
	seen = append(seen, other)
	if code, chal, _ := post(other); code != 401 || chal != `Bearer resource_metadata="`+metaURL+`", error="invalid_token"` {
		t.Errorf("a token of tenant globex under --oauth-tenant acme = %d %q, want 401 invalid_token", code, chal)
	}
	if strings.Contains(logs.String(), "globex") {
		t.Errorf("the log names the refused token's tenant:\n%s", logs.String())
	}
	for _, tok := range seen {
		if strings.Contains(logs.String(), tok) {
			t.Errorf("the log holds a token")
		}
	}

	// The verifier counts on /metrics, which needs no token.
	resp, body = testenv.Get(t, base+"/metrics")
	if n, ok := seriesValue(string(body), `toolgate_oauth_tokens_total{outcome="accepted"}`); resp.StatusCode != 200 || !ok || n < 1 {
		t.Errorf("GET /metrics = %d, toolgate_oauth_tokens_total{outcome=\"accepted\"} %v (found %v), want at least 1", resp.StatusCode, n, ok)
	}
}

// mcpAudience is the resource (audience) of the mcp serve OAuth tests.
const mcpAudience = "https://mcp.test/"

// mcpServe starts `toolgate mcp serve --http` over the calc upstream as
// the OAuth resource server mcpAudience for the test issuer, with the
// extra flags; it returns its base URL and its log.
func (s *oauthSetting) mcpServe(t *testing.T, ctx context.Context, extra ...string) (string, *testenv.Buffer) {
	t.Helper()
	return startMCPHTTP(t, ctx, s.toolgate, append([]string{"--mcp-config", s.config,
		"--oauth-issuer", s.is.URL, "--oauth-audience", mcpAudience}, extra...)...)
}

// startMCPHTTP starts `toolgate mcp serve -v --http 127.0.0.1:0 args...`
// and returns its base URL and its log; it stops when the test ends.
func startMCPHTTP(t *testing.T, ctx context.Context, bin string, args ...string) (string, *testenv.Buffer) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, append([]string{"mcp", "serve", "-v", "--http", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := &testenv.Buffer{}
	addr := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		re := regexp.MustCompile(`Streamable HTTP on (http://[0-9.:]+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			io.WriteString(logs, sc.Text()+"\n")
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); <-copied; cmd.Wait() })
	select {
	case base := <-addr:
		return base, logs
	case <-ctx.Done():
		t.Fatalf("mcp serve did not start: %s", logs.String())
	}
	return "", nil
}

// mcpAdd connects the go-sdk client to base with the bearer token and
// calls calc/add through call_tool.
func mcpAdd(t *testing.T, ctx context.Context, base, token string, logs *testenv.Buffer) {
	t.Helper()
	hc := bearerClient(token)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "oauth-test", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect with a valid token: %v\n%s", err, logs.String())
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "calc/add", "arguments": map[string]any{"a": 2, "b": 40}}})
	if err != nil || res.IsError {
		t.Fatalf("call_tool calc/add = %v, %v", res, err)
	}
	if out, _ := json.Marshal(res); !strings.Contains(string(out), "42") {
		t.Errorf("call_tool calc/add = %s, want 42", out)
	}
}

// bearerClient is an HTTP client that sends every request with the
// bearer token.
func bearerClient(token string) *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestOAuthUsage: the OAuth flags' usage errors exit 2 with one line that
// names the problem, before any catalog is opened.
func TestOAuthUsage(t *testing.T) {
	const iss, aud = "https://id.example.com", "https://gw.example.com"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"serve: both identity sources", []string{"serve", "--tools", "x.json", "--data", "d", "--tokens", "t.json", "--oauth-issuer", iss, "--oauth-audience", aud}, "not both"},
		{"serve: no audience", []string{"serve", "--tools", "x.json", "--data", "d", "--oauth-issuer", iss}, "--oauth-audience"},
		{"serve: http issuer", []string{"serve", "--tools", "x.json", "--data", "d", "--oauth-issuer", "http://id.example.com", "--oauth-audience", aud}, "must be https"},
		{"serve: bad algorithm", []string{"serve", "--tools", "x.json", "--data", "d", "--oauth-issuer", iss, "--oauth-audience", aud, "--oauth-algs", "HS256"}, "HS256"},
		{"serve: leeway too large", []string{"serve", "--tools", "x.json", "--data", "d", "--oauth-issuer", iss, "--oauth-audience", aud, "--oauth-leeway", "1h"}, "Leeway"},
		{"serve: fixed tenant too long", []string{"serve", "--tools", "x.json", "--data", "d", "--oauth-issuer", iss, "--oauth-audience", aud, "--oauth-tenant", strings.Repeat("t", 257)}, "FixedTenant is over 256 bytes"},
		{"serve: fetch timeout too long", []string{"serve", "--tools", "x.json", "--data", "d", "--oauth-issuer", iss, "--oauth-audience", aud, "--oauth-fetch-timeout", "1h"}, "FetchTimeout exceeds 1 minute"},
		{"mcp serve: fetch timeout zero", []string{"mcp", "serve", "--tools", "x.json", "--http", ":0", "--oauth-issuer", iss, "--oauth-audience", aud, "--oauth-fetch-timeout", "0s"}, "--oauth-fetch-timeout"},
		{"mcp serve: OAuth on stdio", []string{"mcp", "serve", "--tools", "x.json", "--principal", "p", "--tenant", "t", "--oauth-issuer", iss, "--oauth-audience", aud}, "need --http"},
		{"mcp serve: both identity sources", []string{"mcp", "serve", "--tools", "x.json", "--http", ":0", "--tokens", "t.json", "--oauth-issuer", iss, "--oauth-audience", aud}, "not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			code := run(t.Context(), tc.args, strings.NewReader(""), io.Discard, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), tc.want) || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
				t.Errorf("toolgate %v = exit %d, stderr %q; want exit 2 with %q on one line", tc.args, code, stderr.String(), tc.want)
			}
		})
	}
}

// calcAdd is the body of a call of calc/add(2, 40) at step.
func calcAdd(step int) string {
	return fmt.Sprintf(`{"session_id":"s1","step":%d,"tool":"calc/add","arguments":{"a":2,"b":40}}`, step)
}

// TestOAuthRealProvider runs `toolgate serve` and `toolgate mcp serve
// --http` against a real OpenID provider (.ci/oidc-op, zitadel/oidc's OP
// library) whose tokens come from its token endpoint by the
// client_credentials grant: a call, step-up (403), the wrong audience,
// "alg":"none" made from a real token, rotation, and the go-sdk client.
// Expiry, nbf and the wrong issuer on the provider's tokens are in
// runtime/server/oauth's TestRealProvider, where the verifier's clock can move.
func TestOAuthRealProvider(t *testing.T) {
	s := newOAuthSetting(t)
	const audience = "https://gw.test"
	op := oauthtest.StartProvider(t, testenv.OIDCProvider(t), audience)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cs := &calcServe{toolgate: s.toolgate, dir: s.dir}
	p := cs.start(t, ctx, nil, "-v", "--mcp-config", s.config, "--data", filepath.Join(s.dir, "data"),
		"--oauth-issuer", op.URL, "--oauth-audience", audience, "--oauth-min-refresh", "1ms")
	challenge := `Bearer resource_metadata="` + audience + `/.well-known/oauth-protected-resource"`

	token := op.Token(t, "agent", "calc:use")
	var sent []string
	call := func(name, token string, step, wantCode int, wantChallenge string) {
		t.Helper()
		sent = append(sent, token)
		code, chal, out := oauthCall(t, ctx, p.url, token, calcAdd(step))
		if code != wantCode || chal != wantChallenge {
			t.Errorf("%s = %d %q %v, want %d %q", name, code, chal, out, wantCode, wantChallenge)
		}
	}
	call("the provider's token", token, 1, 200, "")
	call("a token without calc:use", op.Token(t, "agent", "openid"), 2, 403, challenge+`, error="insufficient_scope", scope="calc:use"`)
	call("a token for another audience", op.Token(t, "other", "calc:use"), 3, 401, challenge+`, error="invalid_token"`)
	parts := strings.Split(token, ".")
	call("alg none", base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))+"."+parts[1]+".", 4, 401, challenge+`, error="invalid_token"`)
	op.Rotate(t, "EdDSA")
	call("a token of the rotated-in EdDSA key", op.Token(t, "agent", "calc:use"), 5, 200, "")
	stopClean(t, p)
	for _, tok := range sent {
		if strings.Contains(p.Stderr.String(), tok) {
			t.Error("the serve log holds a token")
		}
	}

	base, logs := startMCPHTTP(t, ctx, s.toolgate, "--mcp-config", s.config, "--oauth-issuer", op.URL, "--oauth-audience", audience)
	mcpToken := op.Token(t, "agent", "calc:use")
	mcpAdd(t, ctx, base, mcpToken, logs)
	if strings.Contains(logs.String(), mcpToken) {
		t.Error("the mcp serve log holds the token")
	}
}

// TestMCPServeOAuthTenantClaim runs `toolgate mcp serve --http` with
// --oauth-tenant-claim tid (Entra ID's): a token whose scopes are an scp
// array calls; a session opened with one tenant's token is not found with
// a token of the same subject in another tenant; a token whose "scope"
// string lacks calc:use is refused even when its "scp" array has it (the
// "scope" claim wins).
func TestMCPServeOAuthTenantClaim(t *testing.T) {
	s := newOAuthSetting(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	base, logs := s.mcpServe(t, ctx, "--oauth-tenant-claim", "tid")
	key := s.is.Key("rsa-1")
	token := func(tid string, kv ...any) string {
		return key.Sign(s.claims(mcpAudience, append([]any{"tenant", nil, "tid", tid, "scope", nil, "scp", []string{"calc:use"}}, kv...)...), nil)
	}
	mcpAdd(t, ctx, base, token("t-1"), logs)

	post := func(tok, session, body string) (*http.Response, []byte) {
		hdr := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2025-06-18"}
		if session != "" {
			hdr = append(hdr, "Mcp-Session-Id", session)
		}
		return testenv.Post(t, ctx, base+"/", tok, body, hdr...)
	}
	resp, body := post(token("t-1"), "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || session == "" {
		t.Fatalf("initialize = %d %s", resp.StatusCode, body)
	}
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if resp, body := post(token("t-2"), session, list); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the session with the same subject's token of another tenant = %d %s, want 404", resp.StatusCode, body)
	}
	if resp, body := post(token("t-1"), session, list); resp.StatusCode != 200 {
		t.Errorf("the session with its own token = %d %s, want 200", resp.StatusCode, body)
	}
	if resp, body := post(key.Sign(s.claims(mcpAudience, "tenant", nil, "scp", []string{"calc:use"}), nil), "", list); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a token without tid = %d %s, want 401", resp.StatusCode, body)
	}

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "oauth-test", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/", HTTPClient: bearerClient(token("t-1", "scope", "other:thing"))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "calc/add", "arguments": map[string]any{"a": 2, "b": 40}}})
	if out, _ := json.Marshal(res); err != nil || !res.IsError || !strings.Contains(string(out), "PERMISSION_DENIED") {
		t.Errorf("calc/add with scope \"other:thing\" and scp [calc:use] = %s, %v; want PERMISSION_DENIED", out, err)
	}
}
