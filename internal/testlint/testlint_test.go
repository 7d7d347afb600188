package testlint

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFixture runs the check on a fixture whose expected findings are
// marked "// want" on their lines.
func TestCheckFixture(t *testing.T) {
	root := filepath.Join("testdata", "src")
	rep, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]bool{}
	fix := filepath.Join(root, "p", "p_test.go")
	f, err := os.Open(fix)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.HasSuffix(sc.Text(), "// want") {
			want[line] = true
		}
	}
	got := map[int]bool{}
	for _, fd := range rep.Findings {
		if fd.File != "p/p_test.go" {
			t.Errorf("finding in %s, want only p/p_test.go", fd.File)
		}
		got[fd.Line] = true
		if !want[fd.Line] {
			t.Errorf("unexpected finding %s", fd)
		}
	}
	for line := range want {
		if !got[line] {
			t.Errorf("p/p_test.go:%d: table loop without t.Run not reported", line)
		}
	}
	// The table functions: the five with findings, TestWithRun and TestEscaped.
	if rep.TableTests != 7 {
		t.Errorf("TableTests = %d, want 7", rep.TableTests)
	}
	if rep.Escaped != 1 {
		t.Errorf("Escaped = %d, want 1", rep.Escaped)
	}
}

// pending lists directories whose findings are logged, not failed, while
// another branch converts them; none now.
var pending []string

func isPending(file string) bool {
	for _, p := range pending {
		if strings.HasPrefix(file, p) {
			return true
		}
	}
	return false
}

// TestTableTestsNameTheirRows fails for every table loop in the module's
// tests that reports failures without t.Run (see the package doc for what
// counts and for the escape comment).
func TestTableTestsNameTheirRows(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	rep, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, f := range rep.Findings {
		if isPending(f.File) {
			held++
			continue
		}
		t.Errorf("%s (run the rows with t.Run(name, ...), or mark a real exception with %s REASON)", f, Escape)
	}
	t.Logf("%d table tests, %d functions with a table loop without t.Run (%d loops; %d in pending directories), %d loops escaped",
		rep.TableTests, rep.FuncsWithout(), len(rep.Findings), held, rep.Escaped)
	for _, f := range rep.Findings {
		if isPending(f.File) {
			t.Logf("pending: %s", f)
		}
	}
}

// TestDocLinksResolve fails for a [Type.Member] or [pkg.Name] in a doc
// comment of any package of the module that go doc does not resolve, and
// logs the links per 1,000 lines.
func TestDocLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	dirs, err := packageDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	var lines, links int
	for _, d := range dirs {
		t.Run(d, func(t *testing.T) {
			dl, err := CountDocLinks(filepath.Join(root, d))
			if err != nil {
				t.Fatal(err)
			}
			lines += dl.Lines
			links += dl.Links
			for _, u := range dl.Unresolved {
				t.Errorf("%s: doc comment names %s, which go doc does not resolve", d, u)
			}
		})
	}
	if lines == 0 {
		t.Fatal("no lines counted: the package list or the root is wrong")
	}
	t.Logf("%d doc links in %d lines: %.1f per 1,000 lines", links, lines, float64(links)*1000/float64(lines))
}

// packageDirs returns the folders below root, relative to it, that hold
// a non-test Go file of root's module: not testdata, hidden folders or
// nested modules (bench, .ci/oidc-op).
func packageDirs(root string) ([]string, error) {
	var dirs []string
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !seen[rel] {
				seen[rel] = true
				dirs = append(dirs, rel)
			}
		}
		return nil
	})
	return dirs, err
}
