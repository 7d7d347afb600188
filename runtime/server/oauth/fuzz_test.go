package oauth

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzParseJWS: parseJWS never panics, and what it accepts has three
// parts whose first two are the signing input.
func FuzzParseJWS(f *testing.F) {
	for _, s := range []string{
		"eyJhbGciOiJSUzI1NiIsImtpZCI6InJzYS0xIn0.eyJzdWIiOiJhbGljZSJ9.c2ln",
		"eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.",
		"a.b.c", "..", "", "e30.e30.", "e30=.e30.", "eyJjcml0IjpbXX0.e30.",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		j, err := parseJWS(token)
		if err != nil {
			return
		}
		if !strings.HasPrefix(token, j.signed+".") || strings.Count(token, ".") != 2 {
			t.Fatalf("parseJWS(%q): signing input %q", token, j.signed)
		}
	})
}

// FuzzClaimMapping: the mapping never panics, and a principal it returns
// has a non-empty ID and tenant within [MaxClaimBytes] and scopes without
// spaces; with a fixed tenant, the tenant is always that one.
func FuzzClaimMapping(f *testing.F) {
	for _, s := range []string{
		`{"sub":"alice","tenant":"acme","scope":"a b"}`,
		`{"sub":"alice","tenant":"acme","scp":["a","b"]}`,
		`{"sub":"alice","tenant":"acme","scp":"a  b"}`,
		`{"sub":"","tenant":"acme"}`,
		`{"sub":"alice","tenant":7,"scope":["a b"]}`,
	} {
		f.Add(s, "", "", "")
		f.Add(s, "tid", "scp", "")
		f.Add(s, "", "", "acme")
	}
	f.Fuzz(func(t *testing.T, claims, tenantClaim, scopeClaim, fixed string) {
		var c map[string]any
		dec := json.NewDecoder(strings.NewReader(claims))
		dec.UseNumber()
		if dec.Decode(&c) != nil {
			return
		}
		if len(fixed) > MaxClaimBytes || strings.TrimSpace(fixed) != fixed {
			return // New refuses such a fixed tenant (TestNewOptions)
		}
		p, err := ClaimMapping{Tenant: tenantClaim, Scopes: scopeClaim, FixedTenant: fixed}.principal(c)
		if err != nil {
			return
		}
		if fixed != "" && p.Tenant != fixed {
			t.Fatalf("principal(%s) with fixed tenant %q = tenant %q", claims, fixed, p.Tenant)
		}
		if p.ID == "" || p.Tenant == "" || len(p.ID) > MaxClaimBytes || len(p.Tenant) > MaxClaimBytes {
			t.Fatalf("principal(%s) = %+v", claims, p)
		}
		if slices.ContainsFunc(p.Scopes, func(s string) bool { return s == "" || strings.ContainsAny(s, " \t\r\n") }) {
			t.Fatalf("principal(%s) scopes = %q", claims, p.Scopes)
		}
	})
}

// FuzzParseKeySet: parsing a key set never panics, and every key it
// returns is of an allowed algorithm.
func FuzzParseKeySet(f *testing.F) {
	f.Add(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"a"}]}`)
	f.Add(`{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","kid":"b"}]}`)
	f.Add(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`)
	f.Add(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`)
	f.Add(`{"keys":null}`)
	f.Add(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"a"},{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"a"},"x",{"kid":5}]}`)
	f.Fuzz(func(t *testing.T, set string) {
		allowed := []Algorithm{ES256, EdDSA}
		keys, skipped, err := parseKeySet([]byte(set), allowed)
		if err != nil {
			return
		}
		type slot struct {
			kid string
			alg Algorithm
		}
		seen := map[slot]bool{}
		for _, k := range keys {
			if !slices.Contains(allowed, k.alg) || k.pub == nil {
				t.Fatalf("parseKeySet(%s) gave %+v", set, k)
			}
			if s := (slot{k.kid, k.alg}); k.kid != "" && seen[s] {
				t.Fatalf("parseKeySet(%s) gave two keys with kid %q for %s", set, k.kid, k.alg)
			} else {
				seen[s] = true
			}
		}
		for _, s := range skipped {
			if s.why == "" {
				t.Fatalf("parseKeySet(%s) skipped %+v without saying why", set, s)
			}
		}
	})
}
