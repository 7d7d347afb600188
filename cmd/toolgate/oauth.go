package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/mcpserver"
	"github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/runtime/server/oauth"
	"github.com/toolgate/toolgate/tools"
)

// oauthFlags are the OAuth 2.1 resource-server flags of "serve" and "mcp
// serve --http". They and --tokens exclude each other: a server has one
// identity source, so one place says who may call it.
type oauthFlags struct {
	issuer, audience, jwksURL        string
	principalClaim, tenantClaim      string
	tenant, scopeClaim, algs, scopes string
	leeway, minRefresh, fetchTimeout time.Duration
}

func (o *oauthFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.issuer, "oauth-issuer", "", "accept bearer JWTs of this OAuth 2.1 issuer `URL` (instead of --tokens)")
	fs.StringVar(&o.audience, "oauth-audience", "", "this server's resource `URI` (RFC 8707): tokens' \"aud\" must contain it")
	fs.StringVar(&o.jwksURL, "oauth-jwks-url", "", "the issuer's JWK Set `URL` (default: its discovery document's jwks_uri)")
	fs.StringVar(&o.principalClaim, "oauth-principal-claim", "sub", "token `claim` naming the principal")
	fs.StringVar(&o.tenantClaim, "oauth-tenant-claim", "tenant", "token `claim` naming the tenant (tid for Entra ID)")
	fs.StringVar(&o.tenant, "oauth-tenant", "", "fixed `tenant` of every token; one whose --oauth-tenant-claim names another tenant is refused")
	fs.StringVar(&o.scopeClaim, "oauth-scope-claim", "", "token `claim` holding the scopes (default: scope, else scp)")
	fs.StringVar(&o.algs, "oauth-algs", "RS256,PS256,ES256,EdDSA,Ed25519", "accepted signature `algorithms`, comma-separated")
	fs.StringVar(&o.scopes, "oauth-scopes", "", "scopes_supported of the resource metadata, comma-separated (default: the catalog's scopes and approvals:grant)")
	fs.DurationVar(&o.leeway, "oauth-leeway", 30*time.Second, "clock skew tolerated on exp, nbf and iat (at most 5m)")
	fs.DurationVar(&o.minRefresh, "oauth-min-refresh", time.Minute, "least time between two fetches of the key set (an unknown kid refetches it)")
	fs.DurationVar(&o.fetchTimeout, "oauth-fetch-timeout", 10*time.Second, "most time a fetch of the issuer's discovery document and key set may take, and a request wait on it (at most 1m)")
}

// enabled reports whether any OAuth flag was given.
func (o *oauthFlags) enabled() bool {
	return o.issuer != "" || o.audience != "" || o.jwksURL != ""
}

// check reports a usage error: both identity sources, or a half-configured OAuth.
func (o *oauthFlags) check(tokenPath string) error {
	switch {
	case o.enabled() && tokenPath != "":
		return errors.New("give --tokens or --oauth-issuer, not both")
	case o.enabled() && (o.issuer == "" || o.audience == ""):
		return errors.New("OAuth needs both --oauth-issuer and --oauth-audience")
	case o.enabled():
		_, err := o.options(nil, nil, nil)
		return err
	}
	return nil
}

// options builds and validates the Verifier's options.
func (o *oauthFlags) options(scopes []string, log *slog.Logger, reg prometheus.Registerer) (*oauth.Verifier, error) {
	var algs []oauth.Algorithm
	for _, a := range splitList(o.algs) {
		algs = append(algs, oauth.Algorithm(a))
	}
	leeway := o.leeway
	if leeway == 0 {
		leeway = -1 // none, not the default
	}
	if o.fetchTimeout <= 0 {
		return nil, errors.New("--oauth-fetch-timeout must be positive (at most 1m): a fetch is always bounded")
	}
	v, err := oauth.New(&oauth.Options{Issuer: o.issuer, Audience: o.audience, JWKSURL: o.jwksURL,
		Algorithms: algs, Leeway: leeway, MinRefreshInterval: o.minRefresh, FetchTimeout: o.fetchTimeout,
		ScopesSupported: scopes, Logger: log, Registerer: reg,
		Claims: oauth.ClaimMapping{Principal: o.principalClaim, Tenant: o.tenantClaim, FixedTenant: o.tenant, Scopes: o.scopeClaim}})
	if err != nil {
		return nil, errors.New(strings.Replace(err.Error(), "oauth: Options.", "OAuth option ", 1))
	}
	return v, nil
}

// verifier builds the Verifier (its counters in reg, when set) and fetches
// the key set once, so that a wrong issuer or JWKS URL stops the program
// at start; --oauth-fetch-timeout bounds that fetch.
func (o *oauthFlags) verifier(ctx context.Context, snap *tools.Snapshot, log *slog.Logger, reg prometheus.Registerer) (*oauth.Verifier, error) {
	scopes := splitList(o.scopes)
	if len(scopes) == 0 {
		scopes = append(snap.Scopes(), gateway.ApprovalScope)
		slices.Sort(scopes)
		scopes = slices.Compact(scopes)
	}
	v, err := o.options(scopes, log, reg)
	if err != nil {
		return nil, err
	}
	if err := v.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("the issuer's key set: %w", err)
	}
	return v, nil
}

// bearerAuth adapts an Authenticator to the MCP server's request form.
func bearerAuth(a server.Authenticator) func(r *http.Request) (tools.Principal, error) {
	return func(r *http.Request) (tools.Principal, error) {
		tok, err := server.BearerToken(r)
		if err != nil {
			return tools.Principal{}, mcpserver.ErrUnauthenticated
		}
		return a.Authenticate(r.Context(), tok)
	}
}
