package tools

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestAuthorize(t *testing.T) {
	tl := &Tool{ID: "bank/transfer", Card: Card{Name: "transfer", Scopes: []string{"payments:write", "accounts:read"}}, Tenants: []string{"acme", "globex"}}
	open := &Tool{ID: "bank/help", Card: Card{Name: "help"}}
	tests := []struct {
		p    Principal
		tool *Tool
		want error
	}{
		{Principal{ID: "u", Tenant: "acme", Scopes: []string{"accounts:read", "payments:write"}}, tl, nil},
		{Principal{ID: "u", Tenant: "globex", Scopes: []string{"payments:write", "accounts:read", "x"}}, tl, nil},
		{Principal{ID: "u", Tenant: "acme", Scopes: []string{"payments:write"}}, tl, ErrMissingScope},
		{Principal{ID: "u", Tenant: "acme"}, tl, ErrMissingScope},
		{Principal{ID: "u", Tenant: "initech", Scopes: []string{"accounts:read", "payments:write"}}, tl, ErrWrongTenant},
		{Principal{ID: "", Tenant: "acme", Scopes: []string{"accounts:read", "payments:write"}}, tl, ErrUnauthenticated},
		{Principal{ID: "u", Tenant: ""}, open, ErrUnauthenticated},
		{Principal{ID: "u", Tenant: "anyone"}, open, nil},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			err := Authorize(tt.p, tt.tool)
			if (tt.want == nil) != (err == nil) || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Authorize(%+v, %s) = %v, want %v", tt.p, tt.tool.ID, err, tt.want)
			}
		})
	}
}

// randomCatalog returns n tools over a pool of scopes large enough to need
// several bit-set words, some restricted to tenants.
func randomCatalog(rng *rand.Rand, n int, scopePool []string, tenants []string) []Tool {
	ts := make([]Tool, n)
	for i := range ts {
		t := Tool{ID: fmt.Sprintf("ns%d/tool%d", rng.IntN(4), i)}
		t.Card.Name = t.Name()
		for range rng.IntN(4) {
			if s := scopePool[rng.IntN(len(scopePool))]; !slices.Contains(t.Card.Scopes, s) {
				t.Card.Scopes = append(t.Card.Scopes, s)
			}
		}
		if rng.IntN(4) == 0 {
			for range 1 + rng.IntN(2) {
				t.Tenants = append(t.Tenants, tenants[rng.IntN(len(tenants))])
			}
		}
		ts[i] = t
	}
	return ts
}

func randomPrincipal(rng *rand.Rand, scopePool, tenants []string) Principal {
	p := Principal{ID: fmt.Sprintf("user%d", rng.IntN(3)), Tenant: tenants[rng.IntN(len(tenants))]}
	switch rng.IntN(10) {
	case 0:
		p.ID = ""
	case 1:
		p.Tenant = ""
	}
	// Scope draws favour holding many scopes, so that tools with several
	// scopes are sometimes allowed; some held scopes no tool needs.
	for range rng.IntN(len(scopePool) + 1) {
		p.Scopes = append(p.Scopes, scopePool[rng.IntN(len(scopePool))])
	}
	if rng.IntN(2) == 0 {
		p.Scopes = append(p.Scopes, "unused:scope")
	}
	return p
}

// TestAuthorizeViewProperty is the foundation of security invariant 1:
// over random catalogs and principals, the View a Snapshot computes holds
// exactly the tools the package-level Authorize allows.
func TestAuthorizeViewProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	scopePool := make([]string, 150) // > 128: scope sets span three words
	for i := range scopePool {
		scopePool[i] = fmt.Sprintf("svc%d:%s", i/3, []string{"read", "write", "admin"}[i%3])
	}
	tenants := []string{"acme", "globex", "initech", "umbrella"}
	allowedSeen, deniedSeen := 0, 0
	for round := range 300 {
		n := rng.IntN(200)
		if round%50 == 0 {
			n = 0
		}
		pool := scopePool[:1+rng.IntN(len(scopePool))]
		r := NewRegistry()
		if err := r.Add(randomCatalog(rng, n, pool, tenants)...); err != nil {
			t.Fatal(err)
		}
		s := r.Snapshot()
		for range 10 {
			p := randomPrincipal(rng, pool, tenants)
			v := s.Authorize(p)
			var want []*Tool
			for i, tl := range s.Tools() {
				ok := Authorize(p, tl) == nil
				if ok {
					want = append(want, tl)
					allowedSeen++
				} else {
					deniedSeen++
				}
				if v.Allowed(i) != ok {
					t.Fatalf("round %d: View.Allowed(%s) = %v, Authorize = %v; principal %+v, tool scopes %v tenants %v",
						round, tl.ID, v.Allowed(i), Authorize(p, tl), p, tl.Card.Scopes, tl.Tenants)
				}
				if got, found := v.Get(tl.ID); found != ok || found && got != tl {
					t.Fatalf("round %d: View.Get(%s) = %v, want %v", round, tl.ID, found, ok)
				}
			}
			if got := v.Tools(); !slices.Equal(got, want) {
				t.Fatalf("round %d: View.Tools() has %d tools, want %d", round, len(got), len(want))
			}
			if v.Len() != len(want) {
				t.Fatalf("round %d: View.Len() = %d, want %d", round, v.Len(), len(want))
			}
			for i := s.Len(); i < len(v.Bits())*64; i++ {
				if v.Bits()[i/64]&(1<<(i%64)) != 0 {
					t.Fatalf("round %d: View.Bits() sets bit %d beyond the %d tools", round, i, s.Len())
				}
			}
			if v.Allowed(-1) || v.Allowed(s.Len()) {
				t.Fatalf("round %d: View.Allowed accepts an index out of range", round)
			}
		}
	}
	// The generator must exercise both outcomes, or the property is vacuous.
	if allowedSeen < 1000 || deniedSeen < 1000 {
		t.Errorf("property covered %d allowed and %d denied decisions, want at least 1000 each", allowedSeen, deniedSeen)
	}
}

func TestViewGroups(t *testing.T) {
	r := NewRegistry()
	pay := tool("bank/pay", "payments:write")
	pay.Card.Group = "payments"
	r.Add(pay, tool("bank/balance"), tool("gh/issue"), tool("admin/wipe", "admin"))
	v := r.Snapshot().Authorize(Principal{ID: "u", Tenant: "t", Scopes: []string{"payments:write"}})
	if got, want := v.Groups(), []string{"bank", "gh", "payments"}; !slices.Equal(got, want) {
		t.Errorf("Groups() = %v, want %v", got, want)
	}
	if _, ok := v.Get("admin/wipe"); ok {
		t.Error("Get(admin/wipe) found an unauthorized tool")
	}
	if v.Principal().ID != "u" || v.Snapshot() != r.Snapshot() {
		t.Error("View does not report its principal and snapshot")
	}
}
