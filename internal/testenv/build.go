package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// builds holds the binaries [Build] made in this run of a test binary, by
// name, in a folder [BuildMain] makes and removes.
var builds struct {
	sync.Mutex
	dir  string
	bins map[string]string
}

// BuildMain runs the package's tests, with a folder for [Build]'s
// binaries, and then removes the folder. It returns m.Run's exit code. A
// package whose tests call Build runs it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.BuildMain(m)) }
func BuildMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "toolgate-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	builds.Lock()
	builds.dir = dir
	builds.Unlock()
	return m.Run()
}

// Build returns the path of the package pkg (a `go build` package path,
// relative to the test's package directory) built as name: built by the
// first call of the run, the same file after (the tests only run it). It
// needs [BuildMain].
func Build(tb testing.TB, name, pkg string) string {
	tb.Helper()
	builds.Lock()
	defer builds.Unlock()
	if bin, ok := builds.bins[name]; ok {
		return bin
	}
	if builds.dir == "" {
		tb.Fatal("testenv.Build: no build folder (TestMain runs testenv.BuildMain)")
	}
	bin := filepath.Join(builds.dir, name)
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	if builds.bins == nil {
		builds.bins = map[string]string{}
	}
	builds.bins[name] = bin
	return bin
}
