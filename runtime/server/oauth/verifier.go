package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/tools"
)

// Options configures a Verifier. Issuer and Audience are required; every
// other field's zero value is documented.
type Options struct {
	// Issuer is the authorization server's issuer identifier, compared
	// exactly with each token's "iss" (and with the discovery document's
	// "issuer"). It must be an https URL (http only for a loopback host).
	Issuer string
	// Audience is this resource's URI (RFC 8707, RFC 9728 "resource"):
	// each token's "aud" must contain it exactly. It must be an absolute
	// https URL without a fragment (http only for a loopback host); it is
	// also where the protected-resource metadata is advertised.
	Audience string
	// JWKSURL is where the issuer's JSON Web Key Set is. Empty means the
	// "jwks_uri" of the issuer's discovery document (OpenID Connect
	// discovery, then RFC 8414 authorization-server metadata).
	JWKSURL string
	// Algorithms is the allow-list of signature algorithms, a non-empty
	// subset of [RS256], [PS256], [ES256], [EdDSA] and [Ed25519]. Nil
	// means all five; any other algorithm is an error.
	Algorithms []Algorithm
	// Leeway is the clock skew tolerated on "exp", "nbf" and "iat". Zero
	// means 30 seconds; it may not exceed 5 minutes. Use a negative value
	// for none.
	Leeway time.Duration
	// Claims maps the claims to the principal. The zero value is the
	// default mapping ([ClaimMapping]).
	Claims ClaimMapping
	// ScopesSupported is advertised as the metadata's "scopes_supported"
	// ([Verifier.Metadata]). Nil advertises none.
	ScopesSupported []string
	// MinRefreshInterval is the least time between two fetches of the key
	// set, so tokens naming unknown kids cannot make the verifier hammer
	// the issuer. Zero means 1 minute.
	MinRefreshInterval time.Duration
	// MaxKeyAge is how long a fetched key set is used before it is
	// fetched again (a key the issuer withdrew stops being accepted). The
	// refetch runs in the background: tokens of the keys in hand do not
	// wait for it, and are accepted while it fails. Zero means 1 hour.
	MaxKeyAge time.Duration
	// HTTPClient fetches the discovery document and the key set. Nil
	// means a client of its own (FetchTimeout bounds its fetches).
	// Either way a redirect is followed only to an https URL (http on a
	// loopback host), as the configured URLs must be.
	HTTPClient *http.Client
	// FetchTimeout bounds each fetch of the discovery document and the
	// key set, together, whatever HTTPClient's own timeout: a stalled
	// issuer cannot hold the start ([Verifier.Refresh]) or a request
	// longer. A request waiting on a fetch waits at most until its own
	// context ends or this bound, whichever comes first; the fetch itself
	// goes on to the bound for the requests after it. Zero means 10
	// seconds; it may not be negative or exceed 1 minute.
	FetchTimeout time.Duration
	// Now is the clock. Nil means [time.Now].
	Now func() time.Time
	// Registerer, when set, receives the counters
	// toolgate_oauth_tokens_total{outcome} (accepted, or a [Reason]) and
	// toolgate_oauth_key_set_fetches_total{result} (ok, error). Nil
	// means no metrics.
	Registerer prometheus.Registerer
	// Logger receives refusals (their Reason only) at debug level, key
	// set fetches at info/warn, and each key a fetch skipped (once, with
	// its kid and why) at info, or warn for a defective one. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// maxDocumentBytes bounds a discovery document or key set.
const maxDocumentBytes = 1 << 20

// algorithms are the algorithms a Verifier can accept, its default.
var algorithms = []Algorithm{RS256, PS256, ES256, EdDSA, Ed25519}

// The default and the largest [Options.FetchTimeout].
const (
	defaultFetchTimeout = 10 * time.Second
	maxFetchTimeout     = time.Minute
)

// Verifier validates bearer JWTs of one issuer for one resource and maps
// them to principals ([Verifier.Verify]). It is safe for concurrent use.
// It implements the gateway's Authenticator ([Verifier.Authenticate]), and
// [Verifier.Protect] adds what the MCP authorization specification asks
// of an HTTP handler.
type Verifier struct {
	opts    Options
	algs    []Algorithm
	leeway  time.Duration
	client  *http.Client
	now     func() time.Time
	log     *slog.Logger
	minGap  time.Duration
	maxAge  time.Duration
	metaURL string // the resource_metadata URL of the challenges
	metrics *metrics

	mu         sync.RWMutex
	keys       []key
	fetchedAt  time.Time // the last successful fetch
	generation int       // counts successful fetches

	refreshing   atomic.Bool // a background refetch is running
	fetchTimeout time.Duration
	fetchMu      sync.Mutex
	inflight     *fetchCall // the fetch under way, under fetchMu: one at a time
	triedAt      time.Time  // the last fetch attempt, successful or not, under fetchMu
	// Only the fetch under way reads and writes these.
	jwksURL string          // resolved from discovery
	skipped map[string]bool // the keys the last fetch skipped (kid, why)
}

// fetchCall is a fetch of the key set that requests wait on.
type fetchCall struct {
	done chan struct{} // closed when err is set
	err  error
}

// New validates opts and returns a Verifier. It does no I/O: the key set
// is fetched on the first token (or by Refresh, which a program calls at
// start to fail early).
func New(opts *Options) (*Verifier, error) {
	if opts == nil {
		return nil, errors.New("oauth: Options.Issuer and Options.Audience are required")
	}
	o := *opts
	if err := checkURL(o.Issuer, "Issuer"); err != nil {
		return nil, err
	}
	if err := checkURL(o.Audience, "Audience"); err != nil {
		return nil, err
	}
	if o.JWKSURL != "" {
		if err := checkURL(o.JWKSURL, "JWKSURL"); err != nil {
			return nil, err
		}
	}
	v := &Verifier{opts: o, algs: slices.Clone(algorithms), leeway: 30 * time.Second,
		client: o.HTTPClient, now: o.Now, log: o.Logger, minGap: time.Minute, maxAge: time.Hour, jwksURL: o.JWKSURL,
		fetchTimeout: defaultFetchTimeout}
	if o.Algorithms != nil {
		if len(o.Algorithms) == 0 {
			return nil, errors.New("oauth: Options.Algorithms is empty")
		}
		for _, a := range o.Algorithms {
			if !slices.Contains(algorithms, a) {
				return nil, fmt.Errorf("oauth: Options.Algorithms: %q is not accepted (RS256, PS256, ES256, EdDSA, Ed25519)", textcut.Shorten(string(a), 32))
			}
		}
		v.algs = slices.Clone(o.Algorithms)
	}
	switch {
	case o.Leeway < 0:
		v.leeway = 0
	case o.Leeway > 5*time.Minute:
		return nil, errors.New("oauth: Options.Leeway exceeds 5 minutes")
	case o.Leeway > 0:
		v.leeway = o.Leeway
	}
	if o.MinRefreshInterval < 0 || o.MaxKeyAge < 0 {
		return nil, errors.New("oauth: Options.MinRefreshInterval and Options.MaxKeyAge may not be negative")
	}
	if o.MinRefreshInterval > 0 {
		v.minGap = o.MinRefreshInterval
	}
	if o.MaxKeyAge > 0 {
		v.maxAge = o.MaxKeyAge
	}
	switch {
	case o.FetchTimeout < 0:
		return nil, errors.New("oauth: Options.FetchTimeout may not be negative")
	case o.FetchTimeout > maxFetchTimeout:
		return nil, errors.New("oauth: Options.FetchTimeout exceeds 1 minute")
	case o.FetchTimeout > 0:
		v.fetchTimeout = o.FetchTimeout
	}
	v.client = secureRedirects(v.client)
	if v.now == nil {
		v.now = time.Now
	}
	if v.log == nil {
		v.log = slog.Default()
	}
	for name, c := range map[string]string{"Principal": o.Claims.Principal, "Tenant": o.Claims.Tenant, "FixedTenant": o.Claims.FixedTenant, "Scopes": o.Claims.Scopes} {
		if strings.TrimSpace(c) != c {
			return nil, fmt.Errorf("oauth: Options.Claims.%s has surrounding spaces", name)
		}
	}
	// A fixed tenant is every principal's: it obeys a tenant claim's bound.
	if len(o.Claims.FixedTenant) > MaxClaimBytes {
		return nil, fmt.Errorf("oauth: Options.Claims.FixedTenant is over %d bytes", MaxClaimBytes)
	}
	v.metaURL = MetadataURL(o.Audience)
	var err error
	if v.metrics, err = newMetrics(o.Registerer); err != nil {
		return nil, err
	}
	return v, nil
}

// checkURL requires an absolute https URL (http for a loopback host)
// without a fragment.
func checkURL(s, field string) error {
	if s == "" {
		return fmt.Errorf("oauth: Options.%s is required", field)
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Fragment != "" || u.RawQuery != "" && !strings.HasPrefix(field, "JWKSURL") {
		return fmt.Errorf("oauth: Options.%s %q is not an absolute URL without query or fragment", field, textcut.Shorten(s, 128))
	}
	if !secure(u) {
		return fmt.Errorf("oauth: Options.%s %q must be https (http only on a loopback host)", field, textcut.Shorten(s, 128))
	}
	return nil
}

// secure reports whether u may serve the issuer's documents: https, or
// http on a loopback host.
func secure(u *url.URL) bool {
	return u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname())
}

// secureRedirects returns a copy of c (a new client when nil) that
// follows a redirect only to a secure URL: the key set reaches the
// Verifier over https, and an issuer redirecting to plain http would
// hand it to whoever is on the path. c's own redirect policy (Go's
// default: at most 10) applies after that.
func secureRedirects(c *http.Client) *http.Client {
	var own http.Client
	if c != nil {
		own = *c
	}
	next := own.CheckRedirect
	own.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		switch {
		case !secure(req.URL):
			return fmt.Errorf("oauth: a redirect to %s: not https (http only on a loopback host)", textcut.Shorten(req.URL.Redacted(), 128))
		case next != nil:
			return next(req, via)
		case len(via) >= 10:
			return errors.New("oauth: stopped after 10 redirects")
		}
		return nil
	}
	return &own
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Verify validates token and returns its claims mapped to a principal. A
// refused token is an error wrapping [ErrInvalidToken] (a [*TokenError] says
// why). A key set fetch the token causes serves every request waiting on
// it, so it outlives ctx (up to [Options.FetchTimeout]), but the token
// waits for it only while ctx lasts; ctx's values reach the HTTP client.
func (v *Verifier) Verify(ctx context.Context, token string) (tools.Principal, error) {
	p, err := v.verify(ctx, token)
	if err != nil {
		var te *TokenError
		if errors.As(err, &te) {
			args := []any{"reason", string(te.Reason)}
			if te.Detail != "" {
				args = append(args, "detail", te.Detail)
			}
			v.log.Debug("oauth: token refused", args...)
			v.metrics.token(string(te.Reason))
		}
		return tools.Principal{}, err
	}
	v.metrics.token("accepted")
	return p, nil
}

// Authenticate implements the gateway's Authenticator; it is Verify.
func (v *Verifier) Authenticate(ctx context.Context, bearer string) (tools.Principal, error) {
	return v.Verify(ctx, bearer)
}

func (v *Verifier) verify(ctx context.Context, token string) (tools.Principal, error) {
	t, err := parseJWS(token)
	if err != nil {
		return tools.Principal{}, err
	}
	if !slices.Contains(v.algs, t.alg) {
		return tools.Principal{}, tokenError(ReasonAlgorithm)
	}
	if err := v.checkSignature(ctx, t); err != nil {
		return tools.Principal{}, err
	}
	// Only now, with the signature good, do the claims mean anything.
	if iss, ok := t.claims["iss"].(string); !ok {
		return tools.Principal{}, &TokenError{Reason: ReasonIssuer, Detail: "no iss string"}
	} else if iss != v.opts.Issuer {
		return tools.Principal{}, &TokenError{Reason: ReasonIssuer, Detail: nearMiss("iss", "issuer", []string{iss}, v.opts.Issuer)}
	}
	if auds, ok := audience(t.claims); !ok {
		return tools.Principal{}, &TokenError{Reason: ReasonAudience, Detail: "no aud string or array of strings"}
	} else if !slices.Contains(auds, v.opts.Audience) {
		return tools.Principal{}, &TokenError{Reason: ReasonAudience, Detail: nearMiss("aud", "audience", auds, v.opts.Audience)}
	}
	now := v.now()
	exp, ok, valid := numericDate(t.claims, "exp")
	switch {
	case !valid:
		return tools.Principal{}, &TokenError{Reason: ReasonClaims, Detail: "exp is not a NumericDate"}
	case !ok:
		return tools.Principal{}, &TokenError{Reason: ReasonExpired, Detail: "no exp"}
	case !now.Before(exp.Add(v.leeway)):
		return tools.Principal{}, tokenError(ReasonExpired)
	}
	for _, name := range []string{"nbf", "iat"} {
		at, ok, valid := numericDate(t.claims, name)
		switch {
		case !valid:
			return tools.Principal{}, &TokenError{Reason: ReasonClaims, Detail: name + " is not a NumericDate"}
		case ok && at.After(now.Add(v.leeway)):
			return tools.Principal{}, tokenError(ReasonNotYetValid)
		}
	}
	return v.opts.Claims.principal(t.claims)
}

// checkSignature verifies t with the key set: the key with t's kid
// serving t's algorithm or, for a token without kid, each key serving
// it. The set is fetched when it has none yet, lacks the kid (a
// rotation), or has no key that verifies a token without kid (a
// rotation at a provider that writes no kid), at most once per
// MinRefreshInterval. A set older than MaxKeyAge that has the key is
// refetched in the background; the key serves meanwhile.
func (v *Verifier) checkSignature(ctx context.Context, t *jws) error {
	v.mu.RLock()
	keys, gen := v.candidates(t.kid, t.alg), v.generation
	stale := v.fetchedAt.IsZero() || v.now().Sub(v.fetchedAt) > v.maxAge
	v.mu.RUnlock()
	if len(keys) > 0 {
		if stale {
			// A slow or unreachable issuer must not hold up the
			// tokens of the keys in hand.
			v.refreshInBackground(ctx)
		}
		if verifiesAny(t, keys) {
			return nil
		}
		if t.kid != "" {
			return tokenError(ReasonSignature)
		}
	}
	// Whether this caller fetched, another just did (errTooSoon), or the
	// fetch failed (the keys are unchanged), the key set now in hand decides.
	_ = v.refresh(ctx, false)
	v.mu.RLock()
	again, changed := v.candidates(t.kid, t.alg), v.generation != gen
	v.mu.RUnlock()
	switch {
	case len(again) == 0:
		return tokenError(ReasonUnknownKey)
	case (changed || len(keys) == 0) && verifiesAny(t, again):
		return nil
	}
	return tokenError(ReasonSignature)
}

// verifiesAny reports whether one of keys verifies t.
func verifiesAny(t *jws, keys []key) bool {
	return slices.ContainsFunc(keys, func(k key) bool { return verifySignature(t, k.pub) })
}

// refreshInBackground starts a refetch unless one is running.
func (v *Verifier) refreshInBackground(ctx context.Context) {
	if !v.refreshing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer v.refreshing.Store(false)
		_ = v.refresh(context.WithoutCancel(ctx), false)
	}()
}

// candidates returns the keys that may verify a token of kid and alg:
// the one with that kid serving alg (the set has no two), or, for a
// token without kid, every key serving alg (at most maxKeys). Callers
// hold mu.
func (v *Verifier) candidates(kid string, alg Algorithm) []key {
	var match []key
	for _, k := range v.keys {
		if k.alg == alg && (kid == "" || k.kid == kid) {
			match = append(match, k)
		}
	}
	return match
}

// errTooSoon is refresh's answer inside MinRefreshInterval.
var errTooSoon = errors.New("oauth: key set fetched too recently")

// Refresh fetches the issuer's key set now, unless another fetch happened
// within MinRefreshInterval (a fetch under way is joined). It returns
// when the fetch is done, failing after [Options.FetchTimeout], or when
// ctx ends, whichever is first; the fetch itself does not end with ctx.
// A program calls it at start to find a wrong issuer or JWKS URL at
// once; after that the Verifier refreshes by itself.
func (v *Verifier) Refresh(ctx context.Context) error {
	return v.refresh(ctx, true)
}

func (v *Verifier) refresh(ctx context.Context, force bool) error {
	v.fetchMu.Lock()
	if c := v.inflight; c != nil {
		v.fetchMu.Unlock()
		return c.wait(ctx)
	}
	v.mu.RLock()
	never := v.fetchedAt.IsZero()
	v.mu.RUnlock()
	now := v.now()
	if !v.triedAt.IsZero() && now.Sub(v.triedAt) < v.minGap && !(force && never) {
		v.fetchMu.Unlock()
		// Another caller may have just fetched what this one needs.
		return errTooSoon
	}
	v.triedAt = now
	c := &fetchCall{done: make(chan struct{})}
	v.inflight = c
	v.fetchMu.Unlock()
	// The fetch serves every request waiting for it: one caller going
	// away must not cancel it (and spend the interval), so it runs on its
	// own, bounded by FetchTimeout.
	go v.run(context.WithoutCancel(ctx), c, now)
	return c.wait(ctx)
}

// wait returns c's error once it is done, or ctx's once ctx ends: a
// request whose client left is answered with the keys in hand.
func (c *fetchCall) wait(ctx context.Context) error {
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run fetches the key set for c, started at now, and installs it.
func (v *Verifier) run(ctx context.Context, c *fetchCall, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, v.fetchTimeout)
	defer cancel()
	keys, err := v.fetch(ctx)
	v.metrics.fetch(err)
	if err != nil {
		v.log.Warn("oauth: key set fetch failed", "issuer", v.opts.Issuer, "error", err)
	} else {
		v.mu.Lock()
		v.keys, v.fetchedAt = keys, now
		v.generation++
		v.mu.Unlock()
		v.log.Info("oauth: key set fetched", "issuer", v.opts.Issuer, "keys", len(keys))
	}
	v.fetchMu.Lock()
	v.inflight = nil
	v.fetchMu.Unlock()
	c.err = err
	close(c.done)
}

// fetch reads the key set, resolving its URL from discovery the first time.
func (v *Verifier) fetch(ctx context.Context) ([]key, error) {
	if v.jwksURL == "" {
		u, err := v.discover(ctx)
		if err != nil {
			return nil, err
		}
		v.jwksURL = u
	}
	data, err := v.get(ctx, v.jwksURL)
	if err != nil {
		return nil, err
	}
	keys, skipped, err := parseKeySet(data, v.algs)
	if err != nil {
		return nil, err
	}
	v.logSkipped(skipped)
	if len(keys) == 0 {
		why := make([]string, 0, maxSkipsNamed)
		for _, s := range skipped[:min(len(skipped), maxSkipsNamed)] {
			why = append(why, s.String())
		}
		return nil, fmt.Errorf("%w: no usable key for %v among %d (%s)", ErrKeySet, v.algs, len(skipped), strings.Join(why, "; "))
	}
	return keys, nil
}

// maxSkipsNamed bounds the skipped keys an error names.
const maxSkipsNamed = 4

// logSkipped logs each key the set's fetch skipped, once: a key skipped
// by the previous fetch too is not logged again. Callers serialize
// fetches.
func (v *Verifier) logSkipped(skipped []skippedKey) {
	seen := make(map[string]bool, len(skipped))
	for _, s := range skipped {
		id := s.kid + "\x00" + s.why
		seen[id] = true
		if v.skipped[id] {
			continue
		}
		level := slog.LevelInfo
		if s.defect {
			level = slog.LevelWarn
		}
		v.log.Log(context.Background(), level, "oauth: key set key skipped", "issuer", v.opts.Issuer,
			"key", s.index, "kid", textcut.Shorten(s.kid, 64), "why", s.why)
	}
	v.skipped = seen
}

// discover reads "jwks_uri" from the issuer's OpenID Connect discovery
// document, else its RFC 8414 metadata, else (an issuer with a path)
// openid-configuration inserted before the path, as RFC 8414 §5 allows;
// the first document found must name the configured issuer (OpenID
// Connect Discovery §4.3, RFC 8414 §3.3): another is a mix-up, refused.
func (v *Verifier) discover(ctx context.Context) (string, error) {
	iss := v.opts.Issuer
	u, _ := url.Parse(iss)
	path := strings.TrimSuffix(u.Path, "/")
	root := u.Scheme + "://" + u.Host
	candidates := []string{
		strings.TrimSuffix(iss, "/") + "/.well-known/openid-configuration",
		root + "/.well-known/oauth-authorization-server" + path,
	}
	if path != "" {
		// RFC 8414 §5: openid-configuration under the insertion rule.
		candidates = append(candidates, root+"/.well-known/openid-configuration"+path)
	}
	var errs []error
	for _, c := range candidates {
		data, err := v.get(ctx, c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var doc struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", c, err))
			continue
		}
		if doc.Issuer != iss {
			return "", fmt.Errorf("oauth: %s names issuer %q, not %q", c, textcut.Shorten(doc.Issuer, 128), iss)
		}
		if err := checkURL(doc.JWKSURI, "JWKSURL (the discovered jwks_uri)"); err != nil {
			return "", err
		}
		return doc.JWKSURI, nil
	}
	return "", fmt.Errorf("oauth: no discovery document for issuer %s: %w", iss, errors.Join(errs...))
}

// get fetches a small JSON document.
func (v *Verifier) get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("oauth: GET %s: %s", u, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDocumentBytes {
		return nil, fmt.Errorf("oauth: GET %s: larger than %d bytes", u, maxDocumentBytes)
	}
	return data, nil
}
