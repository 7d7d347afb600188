// Package testenv locates the data and programs that toolgate's tests and
// benchmarks use but the module does not ship: the shared datasets and
// catalogs (../shared beside the repository) and llama.cpp's gbnf-check;
// [Buffer], for output that goroutines or a child process write while a
// test reads it; [Build], a package built once per run for the tests to
// run; [StartProcess], a program run beside a test; and [Get] and [Post],
// requests to a server under test.
//
// Outside CI a missing resource skips the test with a message saying what
// is missing. In CI (CI=true, as .ci/run sets) a missing resource fails the
// test, so a check can never pass vacuously there.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	rootOnce sync.Once
	rootDir  string
)

// RepoRoot returns the directory holding the module's go.mod, found by
// walking up from the working directory (a test's package directory).
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			return
		}
		for {
			if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && isRootModule(data) {
				rootDir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return
			}
			dir = parent
		}
	})
	if rootDir == "" {
		tb.Fatal("testenv: cannot find the toolgate module root above the working directory")
	}
	return rootDir
}

func isRootModule(gomod []byte) bool {
	const want = "module github.com/toolgate/toolgate\n"
	return len(gomod) >= len(want) && string(gomod[:len(want)]) == want
}

// Shared returns the path of rel inside the shared data folder
// ($TOOLGATE_SHARED, else ../shared beside the repository root). When it is
// missing the test is skipped, or failed in CI.
func Shared(tb testing.TB, rel string) string {
	tb.Helper()
	base := os.Getenv("TOOLGATE_SHARED")
	if base == "" {
		base = filepath.Join(RepoRoot(tb), "..", "shared")
	}
	p := filepath.Join(base, rel)
	if _, err := os.Stat(p); err != nil {
		missing(tb, "shared data "+p+" is not present")
	}
	return p
}

// GBNFCheck returns the path of llama.cpp's gbnf-check built by
// ../shared/tools/gbnfcheck/build.sh ($TOOLGATE_GBNF_CHECK, else
// /tmp/gbnfcheck/bin/gbnf-check, else on $PATH).
func GBNFCheck(tb testing.TB) string {
	tb.Helper()
	return program(tb, "TOOLGATE_GBNF_CHECK", "/tmp/gbnfcheck/bin/gbnf-check", "gbnf-check", "bash ../shared/tools/gbnfcheck/build.sh")
}

// Schema2GBNF returns the path of llama.cpp's JSON-Schema converter built
// beside gbnf-check ($TOOLGATE_SCHEMA2GBNF, else /tmp/gbnfcheck/bin/schema2gbnf).
func Schema2GBNF(tb testing.TB) string {
	tb.Helper()
	return program(tb, "TOOLGATE_SCHEMA2GBNF", "/tmp/gbnfcheck/bin/schema2gbnf", "schema2gbnf", "bash ../shared/tools/gbnfcheck/build.sh")
}

// Chromium returns the path of a headless-capable Chromium for the tests
// that render a report page ($TOOLGATE_CHROMIUM, else chromium on $PATH;
// .ci/run installs Debian's).
func Chromium(tb testing.TB) string {
	tb.Helper()
	return program(tb, "TOOLGATE_CHROMIUM", "/usr/bin/chromium", "chromium", "apt-get install chromium")
}

func program(tb testing.TB, env, def, name, install string) string {
	tb.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	if _, err := os.Stat(def); err == nil {
		return def
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	missing(tb, name+" is not installed ("+install+")")
	return ""
}

// InCI reports whether the tests run under CI, where every resource must be present.
func InCI() bool { return os.Getenv("CI") == "true" }

func missing(tb testing.TB, what string) {
	tb.Helper()
	if InCI() {
		tb.Fatalf("testenv: %s (required in CI)", what)
	}
	tb.Skipf("testenv: %s", what)
}

// NodeModule returns the directory of an npm package installed for the
// tests by .ci/run ($TOOLGATE_NODE_MODULES, else .ci/npm/node_modules in the
// repository; `npm ci --prefix .ci/npm` installs them), e.g.
// NodeModule(t, "@modelcontextprotocol/server-memory"). It also checks that
// node is on $PATH.
func NodeModule(tb testing.TB, pkg string) string {
	tb.Helper()
	base := os.Getenv("TOOLGATE_NODE_MODULES")
	if base == "" {
		base = filepath.Join(RepoRoot(tb), ".ci", "npm", "node_modules")
	}
	dir := filepath.Join(base, filepath.FromSlash(pkg))
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		missing(tb, "npm package "+pkg+" is not installed (npm ci --prefix .ci/npm)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing(tb, "node is not on $PATH")
	}
	return dir
}
