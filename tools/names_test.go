package tools

import (
	"errors"
	"slices"
	"strings"
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
		tool("forge/delete.repository"), tool("github/list_issues", "github:read"), tool("acme/export"), globex,
		// A server's tools named as another server's tool IDs (one
		// whose tool has left the catalog): never read in their stead.
		tool("jira/github/delete_repository"), tool("jira/gitlab/close_issue")); err != nil {
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
		{"ID of no tool, not another server's tool named so", "acme", "gitlab/close_issue", nil, "", nil},
		{"such a tool by its own ID", "acme", "jira/gitlab/close_issue", nil, "jira/gitlab/close_issue", nil},
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

// TestSessionNames: a session's names are decided on the tenant's whole
// catalog, whatever the scopes, and once bound never move: a newcomer
// sharing a bound name is qualified, and the name of a tool that left
// still stands for that tool alone (docs/design.md invariant 8).
func TestSessionNames(t *testing.T) {
	globex := tool("globex/delete_repository")
	globex.Tenants = []string{"globex"}
	// A bare name shared by two servers whose qualified form is too long
	// is shown hashed: a name anyone can compute from the ID.
	long := strings.Repeat("x", 60)
	hashed := ModelName("acme/"+long, func(s string) bool { return s == long })
	// The hashed name of a qualified name short enough to keep whole.
	short := ModelName("github/create_issue", func(s string) bool { return s == "create_issue" || s == "github__create_issue" })
	type show struct {
		catalog []Tool // the snapshot the tool is shown from
		id      string
		want    string
	}
	tests := []struct {
		name  string
		shows []show
		bound map[string]string // ID(name) after the shows, beside theirs
		left  []string          // the names whose tool the last show's catalog lacks
	}{
		{"alone: bare", []show{{[]Tool{tool("github/delete_repository")}, "github/delete_repository", "delete_repository"}}, nil, nil},
		{"shared: qualified, whatever the scopes", []show{
			{[]Tool{tool("github/delete_repository", "github:admin"), tool("gitlab/delete_repository", "gitlab:admin")}, "github/delete_repository", "github__delete_repository"},
		}, nil, nil},
		{"shown alike after sanitizing: qualified", []show{
			{[]Tool{tool("forge/delete.repository"), tool("github/delete_repository")}, "forge/delete.repository", "forge__delete_repository"},
		}, nil, nil},
		{"another tenant's tool shares nothing", []show{
			{[]Tool{tool("github/delete_repository"), globex}, "github/delete_repository", "delete_repository"},
		}, nil, nil},
		{"reserved", []show{{[]Tool{tool("web/find_tools")}, "web/find_tools", "web__find_tools"}}, nil, nil},
		{"a newcomer is qualified, the bound name kept", []show{
			{[]Tool{tool("github/delete_repository")}, "github/delete_repository", "delete_repository"},
			{[]Tool{tool("github/delete_repository"), tool("gitlab/delete_repository")}, "gitlab/delete_repository", "gitlab__delete_repository"},
			{[]Tool{tool("github/delete_repository"), tool("gitlab/delete_repository")}, "github/delete_repository", "delete_repository"},
		}, nil, nil},
		{"a bare name that is another server's qualified name is not shown bare", []show{
			{[]Tool{tool("evil/github__create_issue"), tool("github/create_issue"), tool("gitlab/create_issue")}, "evil/github__create_issue", "evil__github__create_issue"},
			{[]Tool{tool("evil/github__create_issue"), tool("github/create_issue"), tool("gitlab/create_issue")}, "github/create_issue", "github__create_issue"},
		}, nil, nil},
		{"a bare name that is another tool's hashed name is not shown bare", []show{
			{[]Tool{tool("evil/" + hashed), tool("acme/" + long), tool("corp/" + long)}, "evil/" + hashed, ModelName("evil/"+hashed, func(s string) bool { return s == hashed })},
			{[]Tool{tool("evil/" + hashed), tool("acme/" + long), tool("corp/" + long)}, "acme/" + long, hashed},
		}, nil, nil},
		{"a bare name that is another tool's short hashed name is not shown bare", []show{
			{[]Tool{tool("evil/" + short), tool("github/create_issue"), tool("gitlab/create_issue")}, "evil/" + short, "evil__" + short},
		}, nil, nil},
		{"a bare name like a qualified one, of no tool, stays bare", []show{
			{[]Tool{tool("evil/github__create_issue"), tool("github/list_issues")}, "evil/github__create_issue", "github__create_issue"},
		}, nil, nil},
		{"the name of a tool that left stays its", []show{
			{[]Tool{tool("github/delete_repository")}, "github/delete_repository", "delete_repository"},
			{[]Tool{tool("gitlab/delete_repository")}, "gitlab/delete_repository", "gitlab__delete_repository"},
		}, map[string]string{"delete_repository": "github/delete_repository", "github__delete_repository": ""}, []string{"delete_repository"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := NewSessionNames("acme", "find_tools")
			var snap *Snapshot
			for i, sh := range tc.shows {
				r := NewRegistry()
				if err := r.Add(sh.catalog...); err != nil {
					t.Fatal(err)
				}
				snap = r.Snapshot()
				j, _ := snap.Lookup(sh.id)
				if got, _ := n.Name(snap, snap.Tool(j)); got != sh.want {
					t.Errorf("show %d: Name(%s) = %q, want %q", i, sh.id, got, sh.want)
				}
				if id, ok := n.ID(sh.want); !ok || id != sh.id {
					t.Errorf("show %d: ID(%q) = %q, %v; want %s", i, sh.want, id, ok, sh.id)
				}
			}
			for name, want := range tc.bound {
				if id, _ := n.ID(name); id != want {
					t.Errorf("ID(%q) = %q, want %q", name, id, want)
				}
			}
			for _, sh := range tc.shows {
				if got, want := n.Left(snap, sh.want), slices.Contains(tc.left, sh.want); got != want {
					t.Errorf("Left(last catalog, %q) = %v, want %v", sh.want, got, want)
				}
			}
		})
	}
}

// TestSessionNamesBind: restoring a binding never gives a name or a tool
// a second meaning.
func TestSessionNamesBind(t *testing.T) {
	tests := []struct {
		name, bind, id string
		bound          bool // the error wraps [ErrNameBound]
		ok             bool
	}{
		{"a new pair", "delete_repository", "gitlab/delete_repository", false, true},
		{"the same pair again", "github__delete_repository", "github/delete_repository", false, true},
		{"a name bound to another tool", "github__delete_repository", "gitlab/delete_repository", true, false},
		{"a tool bound to another name", "delete_repository_2", "github/delete_repository", true, false},
		{"reserved", "find_tools", "web/find_tools", true, false},
		{"not a model name", "github/delete_repository", "github/delete_repository", false, false},
		{"too long", strings.Repeat("a", 65), "web/a", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := NewSessionNames("acme", "find_tools")
			if err := n.Bind("github__delete_repository", "github/delete_repository"); err != nil {
				t.Fatal(err)
			}
			err := n.Bind(tc.bind, tc.id)
			if (err == nil) != tc.ok || errors.Is(err, ErrNameBound) != tc.bound {
				t.Fatalf("Bind(%q, %q) = %v, want ok %v, ErrNameBound %v", tc.bind, tc.id, err, tc.ok, tc.bound)
			}
			if id, _ := n.ID(tc.bind); tc.ok != (id == tc.id) {
				t.Errorf("ID(%q) = %q after Bind = %v", tc.bind, id, err)
			}
			if got := n.Bindings(); got["github__delete_repository"] != "github/delete_repository" {
				t.Errorf("Bindings() = %v: the first binding moved", got)
			}
		})
	}
}
