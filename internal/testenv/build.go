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
	bins map[string]*build
}

// build is one binary of the run: built once, by the first test that asks
// for it; a failed build is remembered too, so that the tests after it
// fail at once instead of building again.
type build struct {
	once sync.Once
	path string
	err  error
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
// first call of the run, the same file after (the tests only run it).
// Binaries of different names build at the same time. It needs
// [BuildMain].
func Build(tb testing.TB, name, pkg string) string {
	tb.Helper()
	builds.Lock()
	dir := builds.dir
	b := builds.bins[name]
	if b == nil {
		b = &build{}
		if builds.bins == nil {
			builds.bins = map[string]*build{}
		}
		builds.bins[name] = b
	}
	builds.Unlock()
	if dir == "" {
		tb.Fatal("testenv.Build: no build folder (TestMain runs testenv.BuildMain)")
	}
	b.once.Do(func() {
		b.path = filepath.Join(dir, name)
		if out, err := exec.Command("go", "build", "-o", b.path, pkg).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}
