package oauth_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/oauthtest"
	"github.com/toolgate/toolgate/runtime/server/oauth"
	"github.com/toolgate/toolgate/tools"
)

const resource = "https://gw.example.com/mcp"

// clock is a settable clock for the Verifier.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

func newVerifier(t *testing.T, issuer string, c *clock, mod func(*oauth.Options)) (*oauth.Verifier, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	o := &oauth.Options{Issuer: issuer, Audience: resource, Now: c.Now,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if mod != nil {
		mod(o)
	}
	v, err := oauth.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return v, &logs
}

// claims returns valid claims at now, changed by kv (a nil value removes a claim).
func claims(is *oauthtest.Issuer, now time.Time, kv ...any) map[string]any {
	return is.Claims(resource, "accounts:read payments:write", now, kv...)
}

func TestVerify(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	rsa, ec, ed := is.Key("rsa-1"), is.Key("ec-1"), is.Key("ed-1")
	stranger := oauthtest.NewKey(t, "rsa-1", "RS256") // same kid, not the issuer's key
	now := t0
	alice := tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"accounts:read", "payments:write"}}
	tamper := func(tok string) string {
		parts := strings.Split(tok, ".")
		forged := strings.Split(rsa.Sign(claims(is, now, "sub", "mallory"), nil), ".")
		return parts[0] + "." + forged[1] + "." + parts[2]
	}
	tests := []struct {
		name  string
		token string
		want  tools.Principal
		err   oauth.Reason
	}{
		{"RS256", rsa.Sign(claims(is, now), nil), alice, ""},
		{"ES256", ec.Sign(claims(is, now), nil), alice, ""},
		{"EdDSA", ed.Sign(claims(is, now), nil), alice, ""},
		{"audience in an array", rsa.Sign(claims(is, now, "aud", []string{"other", resource}), nil), alice, ""},
		{"no kid, one key of the algorithm", rsa.Sign(claims(is, now), map[string]any{"kid": nil}), alice, ""},
		{"at+jwt type", rsa.Sign(claims(is, now), map[string]any{"typ": "at+jwt"}), alice, ""},
		{"expired", rsa.Sign(claims(is, now, "exp", now.Add(-31*time.Second).Unix()), nil), tools.Principal{}, oauth.ReasonExpired},
		{"expired within the leeway", rsa.Sign(claims(is, now, "exp", now.Add(-29*time.Second).Unix()), nil), alice, ""},
		{"no exp", rsa.Sign(claims(is, now, "exp", nil), nil), tools.Principal{}, oauth.ReasonExpired},
		{"exp not a number", rsa.Sign(claims(is, now, "exp", "tomorrow"), nil), tools.Principal{}, oauth.ReasonClaims},
		{"not yet valid", rsa.Sign(claims(is, now, "nbf", now.Add(time.Minute).Unix()), nil), tools.Principal{}, oauth.ReasonNotYetValid},
		{"nbf within the leeway", rsa.Sign(claims(is, now, "nbf", now.Add(20*time.Second).Unix()), nil), alice, ""},
		{"issued in the future", rsa.Sign(claims(is, now, "iat", now.Add(time.Hour).Unix()), nil), tools.Principal{}, oauth.ReasonNotYetValid},
		{"wrong audience", rsa.Sign(claims(is, now, "aud", "https://other.example.com"), nil), tools.Principal{}, oauth.ReasonAudience},
		{"audience is a prefix", rsa.Sign(claims(is, now, "aud", "https://gw.example.com"), nil), tools.Principal{}, oauth.ReasonAudience},
		{"no audience", rsa.Sign(claims(is, now, "aud", nil), nil), tools.Principal{}, oauth.ReasonAudience},
		{"wrong issuer", rsa.Sign(claims(is, now, "iss", "https://evil.example.com"), nil), tools.Principal{}, oauth.ReasonIssuer},
		{"issuer with a trailing slash", rsa.Sign(claims(is, now, "iss", is.URL+"/"), nil), tools.Principal{}, oauth.ReasonIssuer},
		{"alg none", oauthtest.Unsigned(map[string]any{"alg": "none", "kid": "rsa-1"}, claims(is, now)), tools.Principal{}, oauth.ReasonAlgorithm},
		{"alg None", oauthtest.Unsigned(map[string]any{"alg": "None"}, claims(is, now)), tools.Principal{}, oauth.ReasonAlgorithm},
		{"HS256 with the public key as secret", oauthtest.HS256(rsa.PublicKeyPEM(), "rsa-1", claims(is, now)), tools.Principal{}, oauth.ReasonAlgorithm},
		{"RS256 header on an EC kid", ec.Sign(claims(is, now), map[string]any{"alg": "RS256"}), tools.Principal{}, oauth.ReasonUnknownKey},
		{"tampered payload", tamper(rsa.Sign(claims(is, now), nil)), tools.Principal{}, oauth.ReasonSignature},
		{"signed by a stranger", stranger.Sign(claims(is, now), nil), tools.Principal{}, oauth.ReasonSignature},
		{"stranger's key embedded", stranger.Sign(claims(is, now), map[string]any{"kid": "x", "jwk": stranger.JWK()}), tools.Principal{}, oauth.ReasonUnknownKey},
		{"crit header", rsa.Sign(claims(is, now), map[string]any{"crit": []string{"exp"}}), tools.Principal{}, oauth.ReasonMalformed},
		{"id token type", rsa.Sign(claims(is, now), map[string]any{"typ": "dpop+jwt"}), tools.Principal{}, oauth.ReasonMalformed},
		{"two parts", "a.b", tools.Principal{}, oauth.ReasonMalformed},
		{"not a JWT", "s3cr3t-static-token", tools.Principal{}, oauth.ReasonMalformed},
		{"no sub", rsa.Sign(claims(is, now, "sub", nil), nil), tools.Principal{}, oauth.ReasonClaims},
		{"no tenant", rsa.Sign(claims(is, now, "tenant", nil), nil), tools.Principal{}, oauth.ReasonClaims},
		{"sub not a string", rsa.Sign(claims(is, now, "sub", 7), nil), tools.Principal{}, oauth.ReasonClaims},
		{"scp array", rsa.Sign(claims(is, now, "scope", nil, "scp", []string{"accounts:read", "payments:write"}), nil), alice, ""},
		{"no scopes", rsa.Sign(claims(is, now, "scope", nil), nil), tools.Principal{ID: "alice", Tenant: "acme"}, ""},
		{"scope of the wrong type", rsa.Sign(claims(is, now, "scope", 3), nil), tools.Principal{}, oauth.ReasonClaims},
		{"Auth0: aud array with userinfo", rsa.Sign(claims(is, now, "aud", []string{resource, "https://acme.auth0.com/userinfo"}), nil), alice, ""},
		{"Entra ID: aud string, scp string", rsa.Sign(claims(is, now, "scope", nil, "scp", "accounts:read payments:write"), nil), alice, ""},
		{"scope wins over scp", rsa.Sign(claims(is, now, "scp", []string{"other"}), nil), alice, ""},
		{"RFC 9068 typ application/at+jwt", rsa.Sign(claims(is, now), map[string]any{"typ": "application/at+jwt"}), alice, ""},
		{"typ in upper case (RFC 7515 §4.1.9)", rsa.Sign(claims(is, now), map[string]any{"typ": "AT+JWT"}), alice, ""},
		{"no typ", rsa.Sign(claims(is, now), map[string]any{"typ": nil}), alice, ""},
		{"typ not a string", rsa.Sign(claims(is, now), map[string]any{"typ": 1}), tools.Principal{}, oauth.ReasonMalformed},
		{"fractional exp", rsa.Sign(claims(is, now, "exp", float64(now.Unix())+0.5), nil), alice, ""},
		{"iat within the leeway ahead", rsa.Sign(claims(is, now, "iat", now.Add(20*time.Second).Unix()), nil), alice, ""},
	}
	v, logs := newVerifier(t, is.URL, &clock{t: now}, nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := v.Verify(context.Background(), tc.token)
			wantReason(t, err, tc.err)
			if !equalPrincipal(got, tc.want) {
				t.Errorf("Verify = %+v, want %+v", got, tc.want)
			}
			if strings.Contains(logs.String(), tc.token) {
				t.Errorf("the log holds the token:\n%s", logs)
			}
		})
	}
	if n := is.JWKSFetches(); n != 1 {
		t.Errorf("the key set was fetched %d times, want 1 (unknown kids within a minute of the first fetch)", n)
	}
}

// wantReason fails t unless err is a refusal for reason, or nil when
// reason is "".
func wantReason(t *testing.T, err error, reason oauth.Reason) {
	t.Helper()
	var te *oauth.TokenError
	switch {
	case reason == "" && err != nil:
		t.Fatalf("Verify = %v, want it accepted", err)
	case reason != "" && (!errors.As(err, &te) || te.Reason != reason || !errors.Is(err, oauth.ErrInvalidToken)):
		t.Fatalf("Verify = %v, want reason %s", err, reason)
	}
}

func equalPrincipal(a, b tools.Principal) bool {
	return a.ID == b.ID && a.Tenant == b.Tenant && slices.Equal(a.Scopes, b.Scopes)
}

func TestClaimMapping(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	rsa := is.Key("rsa-1")
	tests := []struct {
		name    string
		mapping oauth.ClaimMapping
		claims  map[string]any
		want    tools.Principal
	}{
		{"Entra ID: oid, tid, scp string", oauth.ClaimMapping{Principal: "oid", Tenant: "tid"},
			claims(is, t0, "oid", "0000-1", "tid", "t-9", "scope", nil, "scp", "a b"), tools.Principal{ID: "0000-1", Tenant: "t-9", Scopes: []string{"a", "b"}}},
		{"renamed scopes claim", oauth.ClaimMapping{Scopes: "permissions"},
			claims(is, t0, "permissions", []string{"x:y"}), tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"x:y"}}},
		{"renamed scopes claim absent: no scopes", oauth.ClaimMapping{Scopes: "permissions"},
			claims(is, t0), tools.Principal{ID: "alice", Tenant: "acme"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, _ := newVerifier(t, is.URL, &clock{t: t0}, func(o *oauth.Options) { o.Claims = tc.mapping })
			got, err := v.Verify(context.Background(), rsa.Sign(tc.claims, nil))
			if err != nil || !equalPrincipal(got, tc.want) {
				t.Errorf("Verify = %+v, %v, want %+v", got, err, tc.want)
			}
		})
	}
}

// TestFixedTenant: with ClaimMapping.FixedTenant every accepted token is
// of that tenant. A token without the tenant claim gets it; a token whose
// tenant claim names another tenant (exactly: letter case counts) was
// issued for someone else and is refused, with a detail naming the claim
// and the fixed tenant but not the token's value.
func TestFixedTenant(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	rsa := is.Key("rsa-1")
	acme := tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"a"}}
	tests := []struct {
		name    string
		mapping oauth.ClaimMapping
		claims  map[string]any
		want    tools.Principal
		detail  string // the refusal's detail; "" means accepted
	}{
		{"no tenant claim", oauth.ClaimMapping{FixedTenant: "acme"}, claims(is, t0, "tenant", nil, "scope", "a"), acme, ""},
		{"the same tenant", oauth.ClaimMapping{FixedTenant: "acme"}, claims(is, t0, "tenant", "acme", "scope", "a"), acme, ""},
		{"another tenant", oauth.ClaimMapping{FixedTenant: "acme"}, claims(is, t0, "tenant", "globex", "scope", "a"), tools.Principal{},
			`the tenant claim tenant names a tenant other than the fixed tenant acme`},
		{"the tenant in another letter case", oauth.ClaimMapping{FixedTenant: "acme"}, claims(is, t0, "tenant", "ACME", "scope", "a"), tools.Principal{},
			`the tenant claim tenant names a tenant other than the fixed tenant acme`},
		{"renamed claim, another tenant", oauth.ClaimMapping{Tenant: "tid", FixedTenant: "acme"}, claims(is, t0, "tenant", nil, "tid", "globex", "scope", "a"), tools.Principal{},
			`the tenant claim tid names a tenant other than the fixed tenant acme`},
		{"renamed claim absent, default claim ignored", oauth.ClaimMapping{Tenant: "tid", FixedTenant: "acme"}, claims(is, t0, "tenant", "globex", "scope", "a"), acme, ""},
		{"tenant claim a number", oauth.ClaimMapping{FixedTenant: "acme"}, claims(is, t0, "tenant", 7, "scope", "a"), tools.Principal{},
			"the tenant claim tenant is a number, not a string"},
		{"tenant claim empty", oauth.ClaimMapping{FixedTenant: "acme"}, claims(is, t0, "tenant", "", "scope", "a"), tools.Principal{},
			"the tenant claim tenant is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, logs := newVerifier(t, is.URL, &clock{t: t0}, func(o *oauth.Options) { o.Claims = tc.mapping })
			got, err := v.Verify(context.Background(), rsa.Sign(tc.claims, nil))
			if tc.detail == "" {
				wantReason(t, err, "")
			} else {
				wantReason(t, err, oauth.ReasonClaims)
				if !strings.Contains(err.Error(), tc.detail) || !strings.Contains(logs.String(), tc.detail) {
					t.Errorf("Verify = %v, log %q; want both to say %q", err, logs, tc.detail)
				}
				if strings.Contains(err.Error()+logs.String(), "globex") {
					t.Errorf("the token's tenant leaked: %v\n%s", err, logs)
				}
			}
			if !equalPrincipal(got, tc.want) {
				t.Errorf("Verify = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestAlgorithmAllowList(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	v, _ := newVerifier(t, is.URL, &clock{t: t0}, func(o *oauth.Options) { o.Algorithms = []oauth.Algorithm{oauth.ES256} })
	var te *oauth.TokenError
	if _, err := v.Verify(context.Background(), is.Key("rsa-1").Sign(claims(is, t0), nil)); !errors.As(err, &te) || te.Reason != oauth.ReasonAlgorithm {
		t.Errorf("RS256 under an ES256 allow-list: %v, want reason algorithm", err)
	}
	if _, err := v.Verify(context.Background(), is.Key("ec-1").Sign(claims(is, t0), nil)); err != nil {
		t.Errorf("ES256 under an ES256 allow-list: %v", err)
	}
	for i, bad := range [][]oauth.Algorithm{{"none"}, {"HS256"}, {}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if _, err := oauth.New(&oauth.Options{Issuer: is.URL, Audience: resource, Algorithms: bad}); err == nil {
				t.Errorf("New(Algorithms: %q) = nil error", bad)
			}
		})
	}
}

// warmVerifier returns a test issuer, a clock at t0 and a verifier that
// has fetched the key set for a token of the issuer's key kid.
func warmVerifier(t *testing.T, kid string) (*oauthtest.Issuer, *clock, *oauth.Verifier, *bytes.Buffer) {
	t.Helper()
	is := oauthtest.NewIssuer(t)
	c := &clock{t: t0}
	v, logs := newVerifier(t, is.URL, c, nil)
	if _, err := v.Verify(context.Background(), is.Key(kid).Sign(claims(is, c.Now()), nil)); err != nil {
		t.Fatal(err)
	}
	return is, c, v, logs
}

// TestRotation: a token signed by a key the verifier has not seen makes it
// refetch the key set, once per MinRefreshInterval however many unknown
// kids arrive; a withdrawn key stops working once the set is refetched.
func TestRotation(t *testing.T) {
	ctx := context.Background()
	is, c, v, _ := warmVerifier(t, "rsa-1")
	old := is.Key("rsa-1")
	// The issuer rotates; the first token with the new kid arrives 2 minutes later.
	next := oauthtest.NewKey(t, "rsa-2", "RS256")
	is.Publish(next, is.Key("ec-1"))
	c.Add(2 * time.Minute)
	if _, err := v.Verify(ctx, next.Sign(claims(is, c.Now()), nil)); err != nil {
		t.Fatalf("a token of the rotated-in key: %v", err)
	}
	if n := is.JWKSFetches(); n != 2 {
		t.Fatalf("key set fetches = %d, want 2", n)
	}
	// The withdrawn key is gone with the refetch.
	var te *oauth.TokenError
	if _, err := v.Verify(ctx, old.Sign(claims(is, c.Now()), nil)); !errors.As(err, &te) || te.Reason != oauth.ReasonUnknownKey {
		t.Errorf("a token of the withdrawn key: %v, want unknown_key", err)
	}
	// A flood of bogus kids within the interval fetches nothing.
	for i := range 100 {
		bogus := oauthtest.NewKey(t, fmt.Sprintf("bogus-%d", i), "EdDSA")
		if _, err := v.Verify(ctx, bogus.Sign(claims(is, c.Now()), nil)); !errors.As(err, &te) || te.Reason != oauth.ReasonUnknownKey {
			t.Fatalf("bogus kid %d: %v, want unknown_key", i, err)
		}
	}
	if n := is.JWKSFetches(); n != 2 {
		t.Errorf("key set fetches after 100 bogus kids = %d, want still 2", n)
	}
	// After the interval, one more unknown kid may refetch, once.
	c.Add(time.Minute + time.Second)
	third := oauthtest.NewKey(t, "ed-2", "EdDSA")
	is.Publish(next, third)
	if _, err := v.Verify(ctx, third.Sign(claims(is, c.Now()), nil)); err != nil {
		t.Errorf("after the interval, a new kid: %v", err)
	}
	if n := is.JWKSFetches(); n != 3 {
		t.Errorf("key set fetches = %d, want 3", n)
	}
	// A key set older than MaxKeyAge is refetched even for a known kid,
	// in the background; a token of an unknown kid, whose refetch waits
	// for the one running, makes sure it is done.
	c.Add(61 * time.Minute)
	if _, err := v.Verify(ctx, next.Sign(claims(is, c.Now()), nil)); err != nil {
		t.Fatal(err)
	}
	v.Verify(ctx, oauthtest.NewKey(t, "bogus", "EdDSA").Sign(claims(is, c.Now()), nil))
	if n := is.JWKSFetches(); n != 4 {
		t.Errorf("key set fetches after MaxKeyAge = %d, want 4", n)
	}
}

func TestJWKSURLAndDiscovery(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	v, _ := newVerifier(t, is.URL, &clock{t: t0}, func(o *oauth.Options) { o.JWKSURL = is.JWKSURL })
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), is.Key("ed-1").Sign(claims(is, t0), nil)); err != nil {
		t.Fatal(err)
	}
	// A discovery document that names another issuer is refused (the
	// same server, named by "localhost" instead of its address).
	other := strings.Replace(is.URL, "127.0.0.1", "localhost", 1)
	w, _ := newVerifier(t, is.URL, &clock{t: t0}, func(o *oauth.Options) { o.Issuer = other })
	if err := w.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "names issuer") {
		t.Errorf("Refresh with a discovery document of another issuer = %v", err)
	}
	// No discovery document at all.
	x, _ := newVerifier(t, is.URL, &clock{t: t0}, func(o *oauth.Options) { o.Issuer = is.URL + "/tenant-a" })
	if err := x.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "no discovery document") {
		t.Errorf("Refresh without a discovery document = %v", err)
	}
}

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name string
		o    oauth.Options
		want string
	}{
		{"no issuer", oauth.Options{Audience: resource}, "Options.Issuer is required"},
		{"no audience", oauth.Options{Issuer: "https://id.example.com"}, "Options.Audience is required"},
		{"http issuer", oauth.Options{Issuer: "http://id.example.com", Audience: resource}, "must be https"},
		{"relative audience", oauth.Options{Issuer: "https://id.example.com", Audience: "gw"}, "not an absolute URL"},
		{"audience with fragment", oauth.Options{Issuer: "https://id.example.com", Audience: resource + "#x"}, "not an absolute URL"},
		{"leeway too large", oauth.Options{Issuer: "https://id.example.com", Audience: resource, Leeway: time.Hour}, "Leeway"},
		{"fixed tenant too long", oauth.Options{Issuer: "https://id.example.com", Audience: resource, Claims: oauth.ClaimMapping{FixedTenant: strings.Repeat("t", oauth.MaxClaimBytes+1)}}, "Options.Claims.FixedTenant is over 256 bytes"},
		{"fixed tenant with spaces", oauth.Options{Issuer: "https://id.example.com", Audience: resource, Claims: oauth.ClaimMapping{FixedTenant: " acme"}}, "Options.Claims.FixedTenant has surrounding spaces"},
		{"fetch timeout negative", oauth.Options{Issuer: "https://id.example.com", Audience: resource, FetchTimeout: -time.Second}, "Options.FetchTimeout may not be negative"},
		{"fetch timeout too long", oauth.Options{Issuer: "https://id.example.com", Audience: resource, FetchTimeout: 2 * time.Minute}, "Options.FetchTimeout exceeds 1 minute"},
		{"ok on loopback", oauth.Options{Issuer: "http://127.0.0.1:9", Audience: "http://localhost:8080"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := oauth.New(&tc.o)
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestConcurrentRotation: many requests with a rotated-in kid at once
// cause one fetch, and all pass.
func TestConcurrentRotation(t *testing.T) {
	ctx := context.Background()
	is := oauthtest.NewIssuer(t)
	c := &clock{t: t0}
	v, _ := newVerifier(t, is.URL, c, nil)
	if err := v.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	next := oauthtest.NewKey(t, "ec-2", "ES256")
	is.Publish(next)
	c.Add(2 * time.Minute)
	token := next.Sign(claims(is, c.Now()), nil)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			if _, err := v.Verify(ctx, token); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Verify during the refetch: %v", err)
	}
	if n := is.JWKSFetches(); n != 2 {
		t.Errorf("key set fetches = %d, want 2 (the start and one refetch)", n)
	}
}

func TestMetrics(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	reg := prometheus.NewRegistry()
	v, _ := newVerifier(t, is.URL, &clock{t: t0}, func(o *oauth.Options) { o.Registerer = reg })
	rsa := is.Key("rsa-1")
	v.Verify(context.Background(), rsa.Sign(claims(is, t0), nil))
	v.Verify(context.Background(), rsa.Sign(claims(is, t0, "exp", t0.Add(-time.Hour).Unix()), nil))
	v.Verify(context.Background(), rsa.Sign(claims(is, t0, "aud", "x"), nil))
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			got[mf.GetName()+"{"+m.GetLabel()[0].GetValue()+"}"] = m.GetCounter().GetValue()
		}
	}
	want := map[string]float64{
		"toolgate_oauth_key_set_fetches_total{ok}": 1,
		"toolgate_oauth_tokens_total{accepted}":    1,
		"toolgate_oauth_tokens_total{audience}":    1,
		"toolgate_oauth_tokens_total{expired}":     1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("metrics = %v, want %v", got, want)
	}
	if _, err := oauth.New(&oauth.Options{Issuer: is.URL, Audience: resource, Registerer: reg}); err == nil {
		t.Error("New with a Registerer that has the counters already = nil error")
	}
}

// TestKeySetShapes: tokens against key sets as real providers publish
// them. RSA keys serve RS256 and PS256 (RFC 7518 §3.3, §3.5) unless
// their JWK names one "alg"; a key whose "use" is "enc" verifies nothing;
// a token without "kid" is tried on each key of its algorithm.
func TestKeySetShapes(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	rs := is.Key("rsa-1")                            // "alg":"RS256"
	ps := oauthtest.NewKey(t, "ps-1", "PS256")       // "alg":"PS256"
	bare := oauthtest.NewKey(t, "rsa-bare", "RS256") // no "alg": Entra ID, Google
	bare.JWKExtra = map[string]any{"alg": nil}
	enc := oauthtest.NewKey(t, "enc-1", "ES256")
	enc.JWKExtra = map[string]any{"use": "enc"}
	ec2 := oauthtest.NewKey(t, "ec-2", "ES256")
	// Java's BigInteger.toByteArray() writes a sign byte: Firebase's and
	// OpenAM's key sets have had a 257-byte modulus (RFC 7518 §6.3.1.1).
	zero := oauthtest.NewKey(t, "rsa-zero", "RS256")
	n, _ := base64.RawURLEncoding.DecodeString(zero.JWK()["n"].(string))
	zero.JWKExtra = map[string]any{"n": base64.RawURLEncoding.EncodeToString(append([]byte{0}, n...))}
	// RFC 9864 deprecates the polymorphic EdDSA for Ed25519.
	ed2 := oauthtest.NewKey(t, "ed-2", "EdDSA")
	ed2.JWKExtra = map[string]any{"alg": "Ed25519"}
	is.Publish(rs, ps, bare, enc, is.Key("ec-1"), ec2, is.Key("ed-1"), zero, ed2)
	now := t0
	v, _ := newVerifier(t, is.URL, &clock{t: now}, nil)
	verifyEach(t, v, []tokenCase{
		{"PS256 key", ps.Sign(claims(is, now), nil), ""},
		{"RS256 on a key without alg", bare.Sign(claims(is, now), nil), ""},
		{"PS256 on a key without alg", bare.Sign(claims(is, now), map[string]any{"alg": "PS256"}), ""},
		{"PS256 on a key whose alg is RS256", rs.Sign(claims(is, now), map[string]any{"alg": "PS256"}), oauth.ReasonUnknownKey},
		{"RS256 on a key whose alg is PS256", ps.Sign(claims(is, now), map[string]any{"alg": "RS256"}), oauth.ReasonUnknownKey},
		{"key for encryption", enc.Sign(claims(is, now), nil), oauth.ReasonUnknownKey},
		{"no kid, several keys of the algorithm", ec2.Sign(claims(is, now), map[string]any{"kid": nil}), ""},
		{"no kid, one key of the algorithm", is.Key("ed-1").Sign(claims(is, now), map[string]any{"kid": nil}), ""},
		{"modulus with a leading zero octet", zero.Sign(claims(is, now), nil), ""},
		{"Ed25519 (RFC 9864) on its key", ed2.Sign(claims(is, now), map[string]any{"alg": "Ed25519"}), ""},
		{"EdDSA on a key whose alg is Ed25519", ed2.Sign(claims(is, now), nil), oauth.ReasonUnknownKey},
	})
}

// tokenCase is a token and the reason Verify refuses it ("" for none).
type tokenCase struct {
	name  string
	token string
	err   oauth.Reason
}

// verifyEach verifies each case's token with v, in a subtest named by it.
func verifyEach(t *testing.T, v *oauth.Verifier, tests []tokenCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), tc.token)
			wantReason(t, err, tc.err)
		})
	}
}

// TestNearMiss: "iss" and "aud" must equal the configured issuer and
// resource exactly (RFC 9068 §4, OpenID Connect Core §3.1.3.7), but a
// refusal says how a near miss differed, in the error and the debug log,
// without the claim's value: a trailing slash is the usual mistake. A
// claim of the wrong type or size (a numeric tenant ID) is named with
// what is wrong, likewise without its value.
func TestNearMiss(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	rsa := is.Key("rsa-1")
	tests := []struct {
		name   string
		claims map[string]any
		reason oauth.Reason
		detail string
	}{
		{"iss with a trailing slash", claims(is, t0, "iss", is.URL+"/"), oauth.ReasonIssuer, "iss has a trailing slash the issuer lacks"},
		{"iss in upper case", claims(is, t0, "iss", strings.ToUpper(is.URL)), oauth.ReasonIssuer, "iss differs from the issuer in letter case"},
		{"another iss", claims(is, t0, "iss", "https://evil.example.com"), oauth.ReasonIssuer, "iss is another issuer"},
		{"no iss", claims(is, t0, "iss", nil), oauth.ReasonIssuer, "no iss string"},
		{"aud with a trailing slash", claims(is, t0, "aud", []string{"x", resource + "/"}), oauth.ReasonAudience, "aud has a trailing slash the audience lacks"},
		{"another aud", claims(is, t0, "aud", "api://gw"), oauth.ReasonAudience, "aud is another audience"},
		{"tenant a number", claims(is, t0, "tenant", 42), oauth.ReasonClaims, "the tenant claim tenant is a number, not a string"},
		{"tenant an array", claims(is, t0, "tenant", []string{"acme"}), oauth.ReasonClaims, "the tenant claim tenant is an array, not a string"},
		{"tenant empty", claims(is, t0, "tenant", ""), oauth.ReasonClaims, "the tenant claim tenant is empty"},
		{"tenant too long", claims(is, t0, "tenant", strings.Repeat("t", oauth.MaxClaimBytes+1)), oauth.ReasonClaims, "the tenant claim tenant is over 256 bytes"},
		{"no sub", claims(is, t0, "sub", nil), oauth.ReasonClaims, "no principal claim sub"},
		{"sub with NUL", claims(is, t0, "sub", "alice\x00admin"), oauth.ReasonClaims, "the principal claim sub holds a control character"},
		{"tenant with U+001F", claims(is, t0, "tenant", "acme\x1fglobex"), oauth.ReasonClaims, "the tenant claim tenant holds a control character"},
		{"scope an object", claims(is, t0, "scope", map[string]any{"a": 1}), oauth.ReasonClaims, "the scope claim scope is neither a string nor an array of strings"},
		{"exp a string", claims(is, t0, "exp", "soon"), oauth.ReasonClaims, "exp is not a NumericDate"},
		{"no exp", claims(is, t0, "exp", nil), oauth.ReasonExpired, "no exp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, logs := newVerifier(t, is.URL, &clock{t: t0}, nil)
			_, err := v.Verify(context.Background(), rsa.Sign(tc.claims, nil))
			wantReason(t, err, tc.reason)
			if !strings.Contains(err.Error(), tc.detail) || !strings.Contains(logs.String(), tc.detail) {
				t.Errorf("Verify = %v, log %q; want both to say %q", err, logs, tc.detail)
			}
			if strings.Contains(logs.String(), "evil") || strings.Contains(err.Error(), "evil") || strings.Contains(err.Error(), "api://") {
				t.Errorf("the claim's value leaked: %v\n%s", err, logs)
			}
		})
	}
}

// TestDiscoveryPaths: an issuer with a path (Entra ID's
// https://login.microsoftonline.com/TENANT/v2.0, Okta's
// https://ORG/oauth2/default) publishes its metadata at one of the
// well-known forms: OpenID Connect's (the suffix appended), RFC 8414's
// (the prefix inserted before the path) or openid-configuration inserted
// (RFC 8414 §5). Each is found; a document naming another issuer is
// refused (mix-up) whichever form served it.
func TestDiscoveryPaths(t *testing.T) {
	const path = "/tenant/v2.0"
	key := oauthtest.NewKey(t, "k1", "ES256")
	tests := []struct {
		name, at string
		issuer   string // the document's "issuer"; "" means the right one
		want     string // the Refresh error; "" means none
	}{
		{"OpenID Connect, appended", path + "/.well-known/openid-configuration", "", ""},
		{"RFC 8414, inserted", "/.well-known/oauth-authorization-server" + path, "", ""},
		{"openid-configuration, inserted", "/.well-known/openid-configuration" + path, "", ""},
		{"mix-up, appended", path + "/.well-known/openid-configuration", "https://evil.example.com" + path, "names issuer"},
		{"mix-up, inserted", "/.well-known/oauth-authorization-server" + path, "https://evil.example.com" + path, "names issuer"},
		{"no document", "/elsewhere", "", "no discovery document"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var issuer string
			mux := http.NewServeMux()
			mux.HandleFunc(tc.at, func(w http.ResponseWriter, r *http.Request) {
				json.NewEncoder(w).Encode(map[string]any{"issuer": cmp.Or(tc.issuer, issuer), "jwks_uri": issuer + "/keys"})
			})
			mux.HandleFunc(path+"/keys", func(w http.ResponseWriter, r *http.Request) {
				json.NewEncoder(w).Encode(map[string]any{"keys": []any{key.JWK()}})
			})
			srv := httptest.NewServer(mux)
			defer srv.Close()
			issuer = srv.URL + path
			v, _ := newVerifier(t, issuer, &clock{t: t0}, nil)
			err := v.Refresh(context.Background())
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Refresh = %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Refresh = %v", err)
			}
			c := map[string]any{"iss": issuer, "aud": resource, "sub": "alice", "tenant": "acme", "exp": t0.Add(time.Minute).Unix()}
			if _, err := v.Verify(context.Background(), key.Sign(c, nil)); err != nil {
				t.Errorf("Verify = %v", err)
			}
		})
	}
}

// TestHugeToken: a token over MaxTokenBytes is refused before anything
// is fetched or verified.
func TestHugeToken(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	v, _ := newVerifier(t, is.URL, &clock{t: t0}, nil)
	_, err := v.Verify(context.Background(), is.Key("rsa-1").Sign(claims(is, t0, "pad", strings.Repeat("x", oauth.MaxTokenBytes)), nil))
	wantReason(t, err, oauth.ReasonMalformed)
	if n := is.JWKSFetches(); n != 0 {
		t.Errorf("key set fetches = %d, want 0", n)
	}
}

// TestKeySetUnavailable: an issuer whose key set fails or hangs. A token
// naming an unknown kid is refused once the refetch fails, with a WARN
// line saying why; a key set past MaxKeyAge is refetched in the
// background, so tokens of the keys in hand do not wait for a slow
// issuer.
func TestKeySetUnavailable(t *testing.T) {
	ctx := context.Background()
	is, c, v, logs := warmVerifier(t, "ec-1")
	known := is.Key("ec-1")

	is.ServeJWKS(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusBadGateway) })
	c.Add(2 * time.Minute)
	_, err := v.Verify(ctx, oauthtest.NewKey(t, "new", "ES256").Sign(claims(is, c.Now()), nil))
	wantReason(t, err, oauth.ReasonUnknownKey)
	if !strings.Contains(logs.String(), `level=WARN msg="oauth: key set fetch failed"`) || !strings.Contains(logs.String(), "502 Bad Gateway") {
		t.Errorf("no WARN line with the cause:\n%s", logs)
	}
	// While it is down, more unknown kids within the interval do not
	// retry: a failed fetch spends the interval as a good one does.
	fetches := is.JWKSFetches()
	for i := range 20 {
		_, err := v.Verify(ctx, oauthtest.NewKey(t, fmt.Sprint("flood-", i), "ES256").Sign(claims(is, c.Now()), nil))
		wantReason(t, err, oauth.ReasonUnknownKey)
	}
	if n := is.JWKSFetches(); n != fetches {
		t.Errorf("key set fetches while the issuer is down = %d, want %d", n, fetches)
	}

	// The key set is now stale, and the issuer hangs until the token
	// has been answered (or the fetch gives up: the failure).
	_, answered, done := hangJWKS(is)
	c.Add(time.Hour)
	_, err = v.Verify(ctx, known.Sign(claims(is, c.Now()), nil))
	close(answered)
	if err != nil {
		t.Errorf("a token of a known key while the key set is stale: %v", err)
	}
	if !<-done {
		t.Error("the token waited for the stale key set's refetch")
	}
}

// hangJWKS makes is's key set hang: a request closes entered, then waits
// until release is closed (it answers with the keys, done gets true) or
// until its client gives up (done gets false).
func hangJWKS(is *oauthtest.Issuer) (entered <-chan struct{}, release chan struct{}, done <-chan bool) {
	in, rel, out := make(chan struct{}), make(chan struct{}), make(chan bool, 1)
	var once sync.Once
	is.ServeJWKS(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(in) })
		select {
		case <-rel:
			w.Write(is.KeySet())
			out <- true
		case <-r.Context().Done():
			out <- false
		}
	})
	return in, rel, out
}

// TestFetchWaiterLeaves: while one token's refetch hangs on a slow
// issuer, a request that needs a fetch too and whose client has gone
// away is answered at once (refused) instead of queueing behind it.
func TestFetchWaiterLeaves(t *testing.T) {
	is, c, v, _ := warmVerifier(t, "ec-1")
	entered, release, done := hangJWKS(is)
	c.Add(2 * time.Minute)
	first := make(chan error, 1)
	go func() {
		_, err := v.Verify(context.Background(), oauthtest.NewKey(t, "a", "ES256").Sign(claims(is, c.Now()), nil))
		first <- err
	}()
	<-entered
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := v.Verify(gone, oauthtest.NewKey(t, "b", "ES256").Sign(claims(is, c.Now()), nil))
	close(release)
	wantReason(t, err, oauth.ReasonUnknownKey)
	if !<-done {
		t.Error("the request whose client left waited for the hanging fetch")
	}
	wantReason(t, <-first, oauth.ReasonUnknownKey)
}

// serveKeySet makes is serve a key set of the given JWKs (maps, or any
// JSON value, to publish a member that is not a key).
func serveKeySet(is *oauthtest.Issuer, keys ...any) {
	set, _ := json.Marshal(map[string]any{"keys": keys})
	is.ServeJWKS(func(w http.ResponseWriter, r *http.Request) { w.Write(set) })
}

// TestKeySetUnusableKeys: real providers publish mixed key sets (keys for
// encryption, other curves, algorithms rotated out, a key some tool wrote
// wrong). A key the verifier cannot use is skipped and logged once with
// its kid and why; the set's other keys keep working. A set without any
// usable key is an error that says why each key was skipped.
func TestKeySetUnusableKeys(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	good := oauthtest.NewKey(t, "good", "ES256")
	ec := oauthtest.NewKey(t, "bad", "ES256").JWK()
	ed := oauthtest.NewKey(t, "bad", "EdDSA").JWK()
	rsa := oauthtest.NewKey(t, "bad", "RS256").JWK()
	small := append([]byte{0xc0}, bytes.Repeat([]byte{0x5a}, 127)...) // a 1024-bit modulus
	tests := []struct {
		name string
		jwk  any
		why  string
	}{
		{"unknown kty", map[string]any{"kty": "XYZ", "kid": "bad"}, `key type \"XYZ\" is not RSA, EC or OKP`},
		{"no kty", map[string]any{"kid": "bad", "x": ec["x"]}, `key type \"\" is not RSA, EC or OKP`},
		{"symmetric key", map[string]any{"kty": "oct", "kid": "bad", "k": "c2VjcmV0"}, `key type \"oct\" is not RSA, EC or OKP`},
		{"EC on P-384", oauthtest.With(ec, "crv", "P-384"), `curve \"P-384\" is not P-256`},
		{"OKP on X25519", oauthtest.With(ed, "crv", "X25519"), `curve \"X25519\" is not Ed25519`},
		{"RSA of 1024 bits", oauthtest.With(rsa, "n", base64.RawURLEncoding.EncodeToString(small)), "modulus of 1024 bits (at least 2048)"},
		{"RSA without e", oauthtest.With(rsa, "e", nil), "bad exponent"},
		{"RSA without n", oauthtest.With(rsa, "n", nil), "bad modulus"},
		{"EC without y", oauthtest.With(ec, "y", nil), "bad P-256 point"},
		{"OKP without x", oauthtest.With(ed, "x", nil), "bad Ed25519 key"},
		{"for encryption", oauthtest.With(ec, "use", "enc"), `use \"enc\", not sig`},
		{"key_ops without verify", oauthtest.With(ec, "key_ops", []string{"encrypt"}), "key_ops without verify"},
		{"private part published", oauthtest.With(ec, "d", "c2VjcmV0"), "holds private key material"},
		{"alg rotated out", oauthtest.With(rsa, "alg", "RS384"), `alg \"RS384\" is not accepted`},
		{"kid not a string", oauthtest.With(ec, "kid", 5), "not a JWK"},
		{"not an object", "bad", "not a JWK"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: t0}
			v, logs := newVerifier(t, is.URL, c, nil)
			serveKeySet(is, tc.jwk, good.JWK())
			if _, err := v.Verify(context.Background(), good.Sign(claims(is, c.Now()), nil)); err != nil {
				t.Fatalf("a token of the good key beside the unusable one: %v\n%s", err, logs)
			}
			line := func() string {
				for l := range strings.Lines(logs.String()) {
					if strings.Contains(l, `msg="oauth: key set key skipped"`) {
						return l
					}
				}
				return ""
			}()
			// A member that is not a JWK has no kid to name.
			wantKid := tc.name != "not an object" && tc.name != "kid not a string"
			if !strings.Contains(line, tc.why) || wantKid != strings.Contains(line, "kid=bad") {
				t.Errorf("the skip line = %q, want it to name kid bad and say %q\n%s", line, tc.why, logs)
			}
			// A refetch finds the same key: it is not logged again.
			c.Add(2 * time.Minute)
			v.Verify(context.Background(), oauthtest.NewKey(t, "new", "ES256").Sign(claims(is, c.Now()), nil))
			if n, f := strings.Count(logs.String(), "key set key skipped"), is.JWKSFetches(); n != 1 || f < 2 {
				t.Errorf("after %d fetches the key was logged %d times, want once:\n%s", f, n, logs)
			}

			w, _ := newVerifier(t, is.URL, c, nil)
			serveKeySet(is, tc.jwk)
			err := w.Refresh(context.Background())
			if !errors.Is(err, oauth.ErrKeySet) || !strings.Contains(err.Error(), "no usable key") || !strings.Contains(err.Error(), strings.ReplaceAll(tc.why, `\"`, `"`)) {
				t.Errorf("Refresh of a set of only that key = %v, want %v saying %q", err, oauth.ErrKeySet, tc.why)
			}
		})
	}
}

// TestKeySetDuplicateKid: two different keys of one algorithm under one
// kid are ambiguous (RFC 7517 §4.5 wants distinct kids), so that kid
// verifies nothing (a token naming it is refused, unknown_key) and is
// logged, while the other keys keep working. The same key published twice
// is one key, and one kid on keys of different types (§4.5's exception)
// serves each type's algorithms.
func TestKeySetDuplicateKid(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	good := oauthtest.NewKey(t, "good", "EdDSA")
	dupA, dupB := oauthtest.NewKey(t, "dup", "ES256"), oauthtest.NewKey(t, "dup", "ES256")
	twin := oauthtest.NewKey(t, "twin", "RS256")
	multiRSA, multiEC := oauthtest.NewKey(t, "multi", "RS256"), oauthtest.NewKey(t, "multi", "ES256")
	serveKeySet(is, good.JWK(), dupA.JWK(), dupB.JWK(), twin.JWK(), twin.JWK(), multiRSA.JWK(), multiEC.JWK())
	v, logs := newVerifier(t, is.URL, &clock{t: t0}, nil)
	verifyEach(t, v, []tokenCase{
		{"the first key of the duplicate kid", dupA.Sign(claims(is, t0), nil), oauth.ReasonUnknownKey},
		{"the second key of the duplicate kid", dupB.Sign(claims(is, t0), nil), oauth.ReasonUnknownKey},
		{"another key of the set", good.Sign(claims(is, t0), nil), ""},
		{"the same key twice", twin.Sign(claims(is, t0), nil), ""},
		{"one kid, RSA", multiRSA.Sign(claims(is, t0), nil), ""},
		{"one kid, EC", multiEC.Sign(claims(is, t0), nil), ""},
	})
	if want := `kid=dup why="another key of the set has kid \"dup\" for ES256"`; strings.Count(logs.String(), want) != 1 {
		t.Errorf("the log does not say once %s:\n%s", want, logs)
	}
}

// TestNoKid: a token without "kid" (providers with one key often leave it
// out, and keep leaving it out after adding a second) is verified with
// each key that serves its algorithm, and accepted when one verifies;
// "none", HS256 and an algorithm no key serves stay refused. One that no
// key verifies may mean a rotation: it refetches the set, at most once per
// MinRefreshInterval, like an unknown kid.
func TestNoKid(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	rs := is.Key("rsa-1") // "alg":"RS256"
	bare := oauthtest.NewKey(t, "rsa-bare", "RS256")
	bare.JWKExtra = map[string]any{"alg": nil}
	ec1, ec2, ec3 := is.Key("ec-1"), oauthtest.NewKey(t, "ec-2", "ES256"), oauthtest.NewKey(t, "ec-3", "ES256")
	is.Publish(rs, bare, ec1, ec2, ec3, is.Key("ed-1"))
	stranger := oauthtest.NewKey(t, "ec-9", "ES256")
	c := &clock{t: t0}
	v, _ := newVerifier(t, is.URL, c, nil)
	noKid := map[string]any{"kid": nil}
	verifyEach(t, v, []tokenCase{
		{"ES256, the last of three EC keys", ec3.Sign(claims(is, t0), noKid), ""},
		{"ES256, the first of three EC keys", ec1.Sign(claims(is, t0), noKid), ""},
		{"RS256, a key without alg beside one with", bare.Sign(claims(is, t0), noKid), ""},
		{"PS256 on the key whose alg is RS256", rs.Sign(claims(is, t0), map[string]any{"kid": nil, "alg": "PS256"}), oauth.ReasonSignature},
		{"PS256 on the key without alg", bare.Sign(claims(is, t0), map[string]any{"kid": nil, "alg": "PS256"}), ""},
		{"EdDSA, one key", is.Key("ed-1").Sign(claims(is, t0), noKid), ""},
		{"RS256 header on an EC signature", ec1.Sign(claims(is, t0), map[string]any{"kid": nil, "alg": "RS256"}), oauth.ReasonSignature},
		{"a stranger's ES256 key", stranger.Sign(claims(is, t0), noKid), oauth.ReasonSignature},
		{"alg none", oauthtest.Unsigned(map[string]any{"alg": "none"}, claims(is, t0)), oauth.ReasonAlgorithm},
		{"HS256 with a public key as secret", oauthtest.HS256(rs.PublicKeyPEM(), "", claims(is, t0)), oauth.ReasonAlgorithm},
		{"Ed25519 on the key whose alg is EdDSA", is.Key("ed-1").Sign(claims(is, t0), map[string]any{"kid": nil, "alg": "Ed25519"}), oauth.ReasonUnknownKey},
	})
	if n := is.JWKSFetches(); n != 1 {
		t.Errorf("key set fetches = %d, want 1 (tokens no key verifies within the interval refetch nothing)", n)
	}
	// The provider rotates to a new key and still writes no kid: the
	// first token of it after the interval refetches, once.
	next := oauthtest.NewKey(t, "ec-next", "ES256")
	is.Publish(next)
	c.Add(2 * time.Minute)
	for i := range 3 {
		if _, err := v.Verify(context.Background(), next.Sign(claims(is, c.Now()), noKid)); err != nil {
			t.Fatalf("token %d of the rotated-in key without kid: %v", i, err)
		}
	}
	if n := is.JWKSFetches(); n != 2 {
		t.Errorf("key set fetches = %d, want 2", n)
	}
	for range 5 {
		_, err := v.Verify(context.Background(), stranger.Sign(claims(is, c.Now()), noKid))
		wantReason(t, err, oauth.ReasonSignature)
	}
	if n := is.JWKSFetches(); n != 2 {
		t.Errorf("key set fetches after 5 forged tokens without kid = %d, want still 2", n)
	}
}

// TestUnknownKidRefetch: a token naming a kid the set lacks refetches the
// set once (not discovery again, not twice for one token), and the same
// kid within MinRefreshInterval refetches nothing more.
func TestUnknownKidRefetch(t *testing.T) {
	is, c, v, _ := warmVerifier(t, "ec-1")
	c.Add(2 * time.Minute)
	token := oauthtest.NewKey(t, "ghost", "ES256").Sign(claims(is, c.Now()), nil)
	for i := range 3 {
		_, err := v.Verify(context.Background(), token)
		wantReason(t, err, oauth.ReasonUnknownKey)
		if n := is.JWKSFetches(); n != 2 {
			t.Fatalf("after the unknown kid's token %d: key set fetches = %d, want 2", i, n)
		}
	}
	if n := is.Discoveries(); n != 1 {
		t.Errorf("discovery fetches = %d, want 1", n)
	}
}

// TestKeySetCap: a verifier reads at most the first 100 keys of a set
// (providers publish a handful), so a token without kid costs at most
// that many signature checks; the rest are skipped, and said so once.
func TestKeySetCap(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	many := oauthtest.NewKey(t, "k", "ES256")
	last := oauthtest.NewKey(t, "last", "ES256")
	var keys []any
	for i := range 100 {
		keys = append(keys, oauthtest.With(many.JWK(), "kid", fmt.Sprint("k", i)))
	}
	serveKeySet(is, append(keys, last.JWK())...)
	v, logs := newVerifier(t, is.URL, &clock{t: t0}, nil)
	verifyEach(t, v, []tokenCase{
		{"the first key", many.Sign(claims(is, t0), map[string]any{"kid": "k0"}), ""},
		{"the 100th key", many.Sign(claims(is, t0), map[string]any{"kid": "k99"}), ""},
		{"the 101st key", last.Sign(claims(is, t0), nil), oauth.ReasonUnknownKey},
		{"no kid, a key among the first 100", many.Sign(claims(is, t0), map[string]any{"kid": nil}), ""},
		{"no kid, the 101st key", last.Sign(claims(is, t0), map[string]any{"kid": nil}), oauth.ReasonSignature},
	})
	if want := "the set has 101 keys; those after the first 100 are not read"; strings.Count(logs.String(), want) != 1 {
		t.Errorf("the log does not say once %q:\n%s", want, logs)
	}
}

// TestFetchFollowsWaiter: a request that caused a refetch waits for it
// only as long as its own context lasts: when its client leaves while
// the issuer hangs, it is answered at once (refused), and the fetch goes
// on for the requests after it.
func TestFetchFollowsWaiter(t *testing.T) {
	is, c, v, _ := warmVerifier(t, "ec-1")
	entered, release, done := hangJWKS(is)
	c.Add(2 * time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	answered := make(chan error, 1)
	go func() {
		_, err := v.Verify(ctx, oauthtest.NewKey(t, "a", "ES256").Sign(claims(is, c.Now()), nil))
		answered <- err
	}()
	<-entered
	cancel()
	err := <-answered
	close(release)
	wantReason(t, err, oauth.ReasonUnknownKey)
	if !<-done {
		t.Error("the request whose client left waited for the fetch it caused")
	}
}

// TestFetchTimeout: Options.FetchTimeout bounds every fetch, so a stalled
// issuer cannot hold a request, or the start, longer than that: a token
// that needs a refetch is refused (unknown_key) with a WARN naming the
// deadline, and Refresh returns the deadline's error, even with an
// HTTPClient that has no timeout of its own.
func TestFetchTimeout(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	stall := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	c := &clock{t: t0}
	v, logs := newVerifier(t, is.URL, c, func(o *oauth.Options) {
		o.FetchTimeout = 50 * time.Millisecond
		o.HTTPClient = &http.Client{}
	})
	is.ServeJWKS(stall)
	if err := v.Refresh(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Refresh from a stalled issuer = %v, want %v", err, context.DeadlineExceeded)
	}
	is.ServeJWKS(nil)
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatalf("Refresh = %v", err)
	}
	is.ServeJWKS(stall)
	c.Add(2 * time.Minute)
	_, err := v.Verify(context.Background(), oauthtest.NewKey(t, "new", "ES256").Sign(claims(is, c.Now()), nil))
	wantReason(t, err, oauth.ReasonUnknownKey)
	if !strings.Contains(logs.String(), `level=WARN msg="oauth: key set fetch failed"`) || !strings.Contains(logs.String(), "context deadline exceeded") {
		t.Errorf("no WARN line naming the deadline:\n%s", logs)
	}
	if _, err := v.Verify(context.Background(), is.Key("ec-1").Sign(claims(is, c.Now()), nil)); err != nil {
		t.Errorf("a token of a key in hand while the issuer stalls: %v", err)
	}
}

// TestIssuerExact: "iss" must be the configured issuer character for
// character (RFC 9068 §4, OpenID Connect Core §3.1.3.7 "exactly match"):
// no URL normalization of a trailing slash, letter case or a default
// port, since an issuer that wrote another form is another issuer as far
// as the specifications go, and normalizing would let a look-alike in.
// The refusal names the expected issuer and how iss missed it, never the
// token or iss's value.
func TestIssuerExact(t *testing.T) {
	is := oauthtest.NewIssuer(t)
	rsa := is.Key("rsa-1")
	tests := []struct {
		name, issuer, iss string
		detail            string // "" means accepted
	}{
		{"equal", "https://idp.example", "https://idp.example", ""},
		{"equal, both with a slash (Auth0)", "https://idp.example/", "https://idp.example/", ""},
		{"iss with a trailing slash", "https://idp.example", "https://idp.example/", "iss has a trailing slash the issuer lacks (expected https://idp.example)"},
		{"issuer with a trailing slash", "https://idp.example/", "https://idp.example", "the issuer has a trailing slash iss lacks (expected https://idp.example/)"},
		{"iss in upper case", "https://idp.example", "HTTPS://IDP.EXAMPLE", "iss differs from the issuer in letter case (expected https://idp.example)"},
		{"iss with the default port", "https://idp.example", "https://idp.example:443", "iss is another issuer (expected https://idp.example)"},
		{"iss with a path", "https://login.example/tenant-a/v2.0", "https://login.example/tenant-b/v2.0", "iss is another issuer (expected https://login.example/tenant-a/v2.0)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, logs := newVerifier(t, tc.issuer, &clock{t: t0}, func(o *oauth.Options) { o.JWKSURL = is.JWKSURL })
			token := rsa.Sign(claims(is, t0, "iss", tc.iss), nil)
			_, err := v.Verify(context.Background(), token)
			if tc.detail == "" {
				wantReason(t, err, "")
				return
			}
			wantReason(t, err, oauth.ReasonIssuer)
			if !strings.Contains(err.Error(), tc.detail) || !strings.Contains(logs.String(), tc.detail) {
				t.Errorf("Verify = %v, log %q; want both to say %q", err, logs, tc.detail)
			}
			out := err.Error() + logs.String()
			if slices.ContainsFunc([]string{token, ":443", "tenant-b", "IDP"}, func(s string) bool { return strings.Contains(out, s) }) {
				t.Errorf("the error or log holds the token or iss: %v\n%s", err, logs)
			}
		})
	}
}

// roundTrip is an http.RoundTripper of a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestRedirectToHTTP: the key set must come over https (http only on a
// loopback host), and a redirect is no way around that: an issuer whose
// https JWKS URL redirects to plain http would hand the keys to whoever
// is on the path, who could then sign any token. The redirect is
// refused; one to another https URL is followed.
func TestRedirectToHTTP(t *testing.T) {
	mallory := oauthtest.NewKey(t, "k1", "ES256")
	legit := oauthtest.NewKey(t, "k1", "ES256")
	set := func(k *oauthtest.Key) *http.Response {
		b, _ := json.Marshal(map[string]any{"keys": []any{k.JWK()}})
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(b))}
	}
	redirect := func(to string) *http.Response {
		return &http.Response{StatusCode: http.StatusFound, Header: http.Header{"Location": {to}}, Body: io.NopCloser(strings.NewReader(""))}
	}
	const issuer = "https://id.example.com"
	tests := []struct {
		name, to string
		signer   *oauthtest.Key
		want     oauth.Reason
	}{
		{"to http", "http://keys.example.com/jwks", mallory, oauth.ReasonUnknownKey},
		{"to https", "https://keys.example.com/jwks", legit, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
				switch r.URL.String() {
				case issuer + "/jwks":
					return redirect(tc.to), nil
				case "http://keys.example.com/jwks":
					return set(mallory), nil
				case "https://keys.example.com/jwks":
					return set(legit), nil
				}
				return &http.Response{StatusCode: 404, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(""))}, nil
			})}
			v, _ := newVerifier(t, issuer, &clock{t: t0}, func(o *oauth.Options) { o.JWKSURL, o.HTTPClient = issuer+"/jwks", client })
			tok := tc.signer.Sign(oauthtest.With(map[string]any{"iss": issuer, "aud": resource, "sub": "alice", "tenant": "acme",
				"exp": t0.Add(time.Minute).Unix()}), nil)
			_, err := v.Verify(context.Background(), tok)
			wantReason(t, err, tc.want)
		})
	}
}
