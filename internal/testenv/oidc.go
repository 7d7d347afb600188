package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var oidcOnce struct {
	sync.Once
	path, err string
}

// OIDCProvider returns the path of the OpenID provider the OAuth tests run
// ($TOOLGATE_OIDC_OP, else built once by .ci/oidc-op/build, which caches
// it). Where it cannot be built the test is skipped, and fails in CI.
func OIDCProvider(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("TOOLGATE_OIDC_OP"); p != "" {
		return p
	}
	oidcOnce.Do(func() {
		out, err := exec.Command("bash", filepath.Join(RepoRoot(tb), ".ci", "oidc-op", "build")).Output()
		if err != nil {
			msg := err.Error()
			if ee, ok := err.(*exec.ExitError); ok {
				msg += ": " + lastLine(string(ee.Stderr))
			}
			oidcOnce.err = msg
			return
		}
		oidcOnce.path = strings.TrimSpace(string(out))
	})
	if oidcOnce.err != "" {
		missing(tb, "the OpenID provider could not be built (.ci/oidc-op/build): "+oidcOnce.err)
	}
	return oidcOnce.path
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
