package oauth

import (
	"cmp"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/toolgate/toolgate/internal/textcut"
	"github.com/toolgate/toolgate/tools"
)

// ClaimMapping says which claims of a verified token make the principal.
// The zero value is the default mapping:
//
//	principal  "sub"
//	tenant     "tenant"
//	scopes     "scope" (a space-separated string, RFC 9068 and RFC 8693),
//	           else "scp" (an array of strings, or a space-separated
//	           string: Entra ID, Okta)
//
// The principal and the tenant must be non-empty strings of at most
// [MaxClaimBytes]; a token without them is refused ([ReasonClaims]). Scopes
// are optional: a token without any holds no scope.
type ClaimMapping struct {
	// Principal is the claim naming the principal. Empty means "sub".
	Principal string
	// Tenant is the claim naming the tenant. Empty means "tenant". With
	// FixedTenant set it is optional, but a token that has it must name
	// FixedTenant.
	Tenant string
	// FixedTenant, when set, is every token's tenant (a single-tenant
	// deployment whose issuer has no tenant claim). A token whose Tenant
	// claim is present and names another tenant (compared exactly), or is
	// not a non-empty string, is refused ([ReasonClaims]): its issuer serves
	// several tenants, and the token was issued for another one. It may
	// not exceed [MaxClaimBytes] nor have surrounding spaces.
	FixedTenant string
	// Scopes is the claim holding the scopes, a space-separated string or
	// an array of strings. Empty means "scope", else "scp".
	Scopes string
}

// MaxClaimBytes bounds the principal, tenant and each scope taken from a
// token.
const MaxClaimBytes = 256

// principal maps verified claims to a principal. A refusal's Detail
// names the claim and what is wrong with it, never its value.
func (m ClaimMapping) principal(claims map[string]any) (tools.Principal, error) {
	var p tools.Principal
	var err error
	if p.ID, err = stringClaim(claims, "principal", cmp.Or(m.Principal, "sub")); err != nil {
		return tools.Principal{}, err
	}
	if p.Tenant, err = m.tenant(claims); err != nil {
		return tools.Principal{}, err
	}
	names := []string{"scope", "scp"}
	if m.Scopes != "" {
		names = []string{m.Scopes}
	}
	for _, name := range names {
		v, present := claims[name]
		if !present {
			continue
		}
		scopes, ok := scopeList(v)
		if !ok {
			return tools.Principal{}, &TokenError{Reason: ReasonClaims,
				Detail: "the scope claim " + name + " is neither a string nor an array of strings (each at most " + strconv.Itoa(MaxClaimBytes) + " bytes)"}
		}
		p.Scopes = scopes
		break
	}
	return p, nil
}

// tenant returns the token's tenant. With FixedTenant it is that tenant,
// and a token whose tenant claim names another one is refused: one
// issuer serving several tenants must not let a token issued for one of
// them into a deployment fixed to another.
func (m ClaimMapping) tenant(claims map[string]any) (string, error) {
	name := cmp.Or(m.Tenant, "tenant")
	if m.FixedTenant == "" {
		return stringClaim(claims, "tenant", name)
	}
	if _, present := claims[name]; !present {
		return m.FixedTenant, nil
	}
	t, err := stringClaim(claims, "tenant", name)
	if err != nil {
		return "", err
	}
	if t != m.FixedTenant {
		return "", &TokenError{Reason: ReasonClaims,
			Detail: "the tenant claim " + name + " names a tenant other than the fixed tenant " + m.FixedTenant}
	}
	return t, nil
}

// stringClaim returns a non-empty string claim of bounded length, the
// one playing role (principal, tenant).
func stringClaim(claims map[string]any, role, name string) (string, error) {
	v, present := claims[name]
	if !present {
		return "", &TokenError{Reason: ReasonClaims, Detail: "no " + role + " claim " + name}
	}
	what := "the " + role + " claim " + name
	s, ok := v.(string)
	switch {
	case !ok:
		return "", &TokenError{Reason: ReasonClaims, Detail: what + " is " + jsonKind(v) + ", not a string"}
	case s == "":
		return "", &TokenError{Reason: ReasonClaims, Detail: what + " is empty"}
	case len(s) > MaxClaimBytes:
		return "", &TokenError{Reason: ReasonClaims, Detail: what + " is over " + strconv.Itoa(MaxClaimBytes) + " bytes"}
	case strings.ContainsFunc(s, unicode.IsControl):
		// JSON's "\u0000" or "\n": no identity has one, PostgreSQL cannot
		// key a record by a NUL, and a store may join names with a control
		// character (the gateway refuses such a principal too).
		return "", &TokenError{Reason: ReasonClaims, Detail: what + " holds a control character"}
	}
	return s, nil
}

// jsonKind names the JSON type of a decoded value, with its article.
func jsonKind(v any) string {
	switch v.(type) {
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case nil:
		return "null"
	}
	return "a string"
}

// scopeList reads a scope claim: a space-separated string or an array of
// strings (each of which may not contain a space).
func scopeList(v any) ([]string, bool) {
	var scopes []string
	switch v := v.(type) {
	case string:
		scopes = strings.Fields(v)
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok || s == "" || strings.ContainsAny(s, " \t\n\r") {
				return nil, false
			}
			scopes = append(scopes, s)
		}
	default:
		return nil, false
	}
	for _, s := range scopes {
		if len(s) > MaxClaimBytes {
			return nil, false
		}
	}
	return scopes, true
}

// numericDate reads a NumericDate claim (RFC 7519 §2): seconds since the
// epoch, possibly fractional. ok is false for a missing claim; valid is
// false for a present claim that is not a finite number.
func numericDate(claims map[string]any, name string) (t time.Time, ok, valid bool) {
	v, present := claims[name]
	if !present {
		return time.Time{}, false, true
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return time.Time{}, true, false
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f < 0 || f > 1<<40 {
		return time.Time{}, true, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true, true
}

// audience reads the "aud" claim: a string or an array of strings (RFC
// 7519 §4.1.3; Entra ID and Google write a string, Auth0 and Okta an
// array when there are several). Members that are not strings are skipped.
func audience(claims map[string]any) ([]string, bool) {
	switch aud := claims["aud"].(type) {
	case string:
		return []string{aud}, true
	case []any:
		var auds []string
		for _, a := range aud {
			if s, ok := a.(string); ok {
				auds = append(auds, s)
			}
		}
		return auds, true
	}
	return nil, false
}

// nearMiss describes how the values of a claim (named as claim) missed
// want, the configured value (named as what): by a trailing slash, by
// letter case, or entirely, and names want. It holds no claim text, so
// it may be logged: the configured value is no secret (the resource
// metadata publishes both).
func nearMiss(claim, what string, got []string, want string) string {
	expected := " (expected " + textcut.Shorten(want, 128) + ")"
	for _, g := range got {
		switch {
		case g == want+"/":
			return claim + " has a trailing slash the " + what + " lacks" + expected
		case g+"/" == want:
			return "the " + what + " has a trailing slash " + claim + " lacks" + expected
		case strings.EqualFold(g, want):
			return claim + " differs from the " + what + " in letter case" + expected
		}
	}
	return claim + " is another " + what + expected
}
