package tools

import (
	"slices"
	"testing"
)

// TestViewResolve: a bare name resolves on the tenant's whole catalog, so
// every caller of the tenant gets the same answer; only which candidates
// an ambiguous answer names depends on the caller (docs/design.md
// invariant 8).
func TestViewResolve(t *testing.T) {
	r := NewRegistry()
	globex := tool("globex/export")
	globex.Tenants = []string{"globex"}
	if err := r.Add(tool("github/delete_repository", "github:admin"), tool("gitlab/delete_repository", "gitlab:admin"),
		tool("forge/delete.repository"), tool("github/list_issues", "github:read"), tool("acme/export"), globex); err != nil {
		t.Fatal(err)
	}
	snap := r.Snapshot()
	tests := []struct {
		name, tenant, call string
		scopes             []string
		want               string   // the ID it resolves to
		candidates         []string // when ambiguous
	}{
		{"ID", "acme", "github/delete_repository", []string{"github:admin"}, "github/delete_repository", nil},
		{"ID the caller may not use", "acme", "github/delete_repository", nil, "", nil},
		{"shared bare name, may use both", "acme", "delete_repository", []string{"github:admin", "gitlab:admin"}, "", []string{"github/delete_repository", "gitlab/delete_repository"}},
		{"shared bare name, may use one", "acme", "delete_repository", []string{"github:admin"}, "", []string{"github/delete_repository"}},
		{"shared bare name, may use none", "acme", "delete_repository", []string{"github:read"}, "", nil},
		{"a name that only sanitizes alike is its own", "acme", "delete.repository", nil, "forge/delete.repository", nil},
		{"bare name one tool has", "acme", "list_issues", []string{"github:read"}, "github/list_issues", nil},
		{"bare name one tool has, not the caller's", "acme", "list_issues", nil, "", nil},
		{"another tenant's tool is not in the catalog", "acme", "export", nil, "acme/export", nil},
		{"the other tenant has both", "globex", "export", nil, "", []string{"acme/export", "globex/export"}},
		{"unknown", "acme", "steal", []string{"github:admin"}, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, cands := snap.Authorize(Principal{ID: "p", Tenant: tc.tenant, Scopes: tc.scopes}).Resolve(tc.call)
			id := ""
			if got != nil {
				id = got.ID
			}
			if id != tc.want || !slices.Equal(cands, tc.candidates) {
				t.Errorf("Resolve(%q) = %q, %v; want %q, %v", tc.call, id, cands, tc.want, tc.candidates)
			}
		})
	}
}
