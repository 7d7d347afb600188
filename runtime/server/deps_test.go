package server_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// mod is the module path the dependency tests list packages under.
const mod = "github.com/toolgate/toolgate/"

// deps lists the import paths pkg (under mod) links, with the go
// command; it skips the test where there is none.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies with")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", mod+pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

// storeDrivers are the module paths of the store drivers; only
// runtime/gateway/storeurl and the stores themselves may link them.
var storeDrivers = []string{"modernc.org/sqlite", "github.com/redis/go-redis", "github.com/jackc/pgx"}

// TestNoStoreDriverLinked: the HTTP API, the MCP server and the gateway
// take a store.Store and link no store driver (docs/design.md's package
// table), so a program that embeds one of them carries only the driver it
// opens. storeurl must link all of them, which shows the check can fail.
func TestNoStoreDriverLinked(t *testing.T) {
	tests := []struct {
		pkg      string
		wantNone bool
	}{
		{"runtime/server", true},
		{"runtime/mcpserver", true},
		{"runtime/gateway", true},
		{"runtime/gateway/storeurl", false},
	}
	for _, tc := range tests {
		t.Run(tc.pkg, func(t *testing.T) {
			linkedPkgs := deps(t, tc.pkg)
			for _, driver := range storeDrivers {
				t.Run(driver, func(t *testing.T) {
					linked := slices.ContainsFunc(linkedPkgs, func(d string) bool {
						return d == driver || strings.HasPrefix(d, driver+"/")
					})
					if linked == tc.wantNone {
						t.Errorf("go list -deps %s: links %s = %v, want %v", tc.pkg, driver, linked, !tc.wantNone)
					}
				})
			}
		})
	}
}

// TestDriversLinkNoGateway: the store drivers implement
// runtime/gateway/store, the way database/sql drivers implement
// database/sql/driver, and link nothing of the gateway itself, so the
// gateway can change without touching them. runtime/server, which links
// the gateway, is the row that shows the check can fail.
func TestDriversLinkNoGateway(t *testing.T) {
	tests := []struct {
		pkg         string
		wantGateway bool
	}{
		{"runtime/gateway/store", false},
		{"runtime/gateway/memstore", false},
		{"runtime/gateway/sqlitestore", false},
		{"runtime/gateway/pgstore", false},
		{"runtime/gateway/redisstore", false},
		{"runtime/gateway/storeurl", false},
		{"runtime/server", true},
	}
	for _, tc := range tests {
		t.Run(tc.pkg, func(t *testing.T) {
			if got := slices.Contains(deps(t, tc.pkg), mod+"runtime/gateway"); got != tc.wantGateway {
				t.Errorf("go list -deps %s: links runtime/gateway = %v, want %v", tc.pkg, got, tc.wantGateway)
			}
		})
	}
}
