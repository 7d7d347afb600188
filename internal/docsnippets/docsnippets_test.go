package docsnippets

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// snippet is one fenced ```go block of a Markdown file.
type snippet struct {
	file string // path relative to the repository root
	line int    // 1-based line of the opening fence
	text string // the block's lines, without the fences
}

// goFence matches an opening fence whose info string is the Go language:
// ```go, ~~~go, ```go title="x"; not ```gomod or ```golang-something.
var goFence = regexp.MustCompile("^[ \t]*(```+|~~~+)[ \t]*go([ \t].*)?$")

// extract returns the ```go blocks of a Markdown document. A block ends at
// the first line that is a fence of the same character at least as long as
// the opening one (CommonMark); an unclosed block runs to the end.
func extract(file, doc string) []snippet {
	var out []snippet
	var cur *snippet
	var fence string
	var body []string
	for i, line := range strings.Split(doc, "\n") {
		n := i + 1
		if cur == nil {
			if m := goFence.FindStringSubmatch(line); m != nil {
				cur, fence, body = &snippet{file: file, line: n}, m[1], nil
			}
			continue
		}
		if t := strings.TrimSpace(line); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
			cur.text = strings.Join(body, "\n")
			out = append(out, *cur)
			cur = nil
			continue
		}
		body = append(body, line)
	}
	if cur != nil {
		cur.text = strings.Join(body, "\n")
		out = append(out, *cur)
	}
	return out
}

// normalize drops blank lines and each line's leading and trailing spaces
// and tabs, so a snippet matches an Example body whatever its indentation.
func normalize(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Trim(l, " \t\r"); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// contains reports whether want appears in have as a run of consecutive lines.
func contains(have, want []string) bool {
	if len(want) == 0 {
		return true
	}
	// Lines hold no newline: a run of them is a substring between newlines.
	return strings.Contains("\n"+strings.Join(have, "\n")+"\n", "\n"+strings.Join(want, "\n")+"\n")
}

// root is the repository root: the nearest parent holding go.mod and README.md.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no repository root (go.mod beside README.md) above the test's directory")
		}
		dir = parent
	}
}

// exampleBodies returns, for every func Example… in the repository's
// *_test.go files, its body's normalized lines, keyed by "file:Name".
func exampleBodies(t *testing.T, repo string) map[string][]string {
	t.Helper()
	bodies := map[string][]string{}
	err := filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != repo && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, path)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Example") {
				continue
			}
			lo := fset.Position(fn.Body.Lbrace).Offset + 1
			hi := fset.Position(fn.Body.Rbrace).Offset
			bodies[rel+":"+fn.Name.Name] = normalize(string(src[lo:hi]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bodies
}

// guides returns README.md and every docs/**/*.md, relative to repo.
func guides(t *testing.T, repo string) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repo, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(repo, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestSnippetsAreExamples fails for every ```go block of README.md and
// docs/**/*.md that is not the body (or a consecutive part of the body) of a
// func Example… somewhere in the repository.
func TestSnippetsAreExamples(t *testing.T) {
	repo := root(t)
	bodies := exampleBodies(t, repo)
	if len(bodies) == 0 {
		t.Fatal("no func Example… found in any *_test.go of the repository")
	}
	var snippets []snippet
	for _, file := range guides(t, repo) {
		doc, err := os.ReadFile(filepath.Join(repo, file))
		if err != nil {
			t.Fatal(err)
		}
		snippets = append(snippets, extract(filepath.ToSlash(file), string(doc))...)
	}
	readme := 0
	for _, s := range snippets {
		if s.file == "README.md" {
			readme++
		}
		want := normalize(s.text)
		if len(want) == 0 {
			t.Errorf("%s:%d: empty ```go block", s.file, s.line)
			continue
		}
		found := false
		for _, have := range bodies {
			if contains(have, want) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s:%d: the ```go block starting %q is in no func Example… body; "+
				"make it the body of an Example in the package it shows (example_test.go) and paste exactly that body here",
				s.file, s.line, want[0])
		}
	}
	if readme == 0 {
		t.Error("README.md has no ```go block: the front page's one snippet (runtime's Example) is missing or the extractor is broken")
	}
	t.Logf("%d ```go blocks checked against %d Example bodies", len(snippets), len(bodies))
}

func TestExtract(t *testing.T) {
	doc := strings.Join([]string{
		"# Title",        // 1
		"```go",          // 2
		"a := 1",         // 3
		"",               // 4
		"b := 2",         // 5
		"```",            // 6
		"```sh",          // 7
		"go test ./...",  // 8
		"```",            // 9
		"  ````go title", // 10
		"  ```",          // 11: shorter fence: still inside
		"  x()",          // 12
		"  ````",         // 13
		"```gomod",       // 14: not Go
		"module x",       // 15
		"```",            // 16
		"~~~go",          // 17
		"y()",            // 18
	}, "\n")
	got := extract("d.md", doc)
	want := []snippet{
		{"d.md", 2, "a := 1\n\nb := 2"},
		{"d.md", 10, "  ```\n  x()"},
		{"d.md", 17, "y()"},
	}
	if len(got) != len(want) {
		t.Fatalf("extract(doc) = %d blocks %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got[i] != want[i] {
				t.Errorf("extract(doc)[%d] = %+v, want %+v", i, got[i], want[i])
			}
		})
	}
}

func TestContains(t *testing.T) {
	body := normalize("\tx := 1\n\n\ty := 2\n\tfmt.Println(x, y)\n")
	for _, tc := range []struct {
		snippet string
		want    bool
	}{
		{"x := 1\ny := 2", true},
		{"    y := 2\n\n    fmt.Println(x, y)", true},
		{"x := 1\nfmt.Println(x, y)", false}, // not consecutive
		{"x := 2", false},
		{"fmt.Println(x, y)\nz := 3", false}, // runs past the end
	} {
		t.Run(tc.snippet, func(t *testing.T) {
			if got := contains(body, normalize(tc.snippet)); got != tc.want {
				t.Errorf("contains(body, %q) = %v, want %v", tc.snippet, got, tc.want)
			}
		})
	}
}

// FuzzExtract checks that extract never panics and returns only text that
// is in the document, in order, each block after its opening fence.
func FuzzExtract(f *testing.F) {
	f.Add("```go\nx()\n```\n")
	f.Add("~~~~go\n```\n~~~~\n```go")
	f.Add("  ```go  \n\n")
	f.Fuzz(func(t *testing.T, doc string) {
		lines := strings.Split(doc, "\n")
		last := 0
		for _, s := range extract("f.md", doc) {
			if s.line <= last || s.line > len(lines) {
				t.Fatalf("block at line %d after line %d in a %d-line document", s.line, last, len(lines))
			}
			if !goFence.MatchString(lines[s.line-1]) {
				t.Fatalf("line %d %q is not a Go fence", s.line, lines[s.line-1])
			}
			if !strings.Contains(doc, s.text) {
				t.Fatalf("block %q is not in the document", s.text)
			}
			last = s.line
		}
	})
}
