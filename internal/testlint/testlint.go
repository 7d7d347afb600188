// Package testlint checks the repository's tests for table-driven loops
// that do not name their rows: a loop over a table of cases that reports a
// failure with t.Error or t.Fatal but runs no t.Run, so a failure names no
// row and `go test -run` cannot pick one (docs/STYLE: "Table tests name
// their rows").
//
// [Check] parses every *_test.go file under a directory with go/parser and
// reports, by FILE:LINE, each such loop. A loop counts as table-driven when
// it ranges over
//
//   - a slice, array or map literal written in the range clause,
//     (for _, tc := range []struct{...}{...}), or
//   - a variable of the same function or of the package whose value is
//     such a literal with at least one element (tests := []struct{...}{...}; var cases = map[...]...),
//
// and its body calls Error, Errorf, Fatal, Fatalf, Fail or FailNow on a
// *testing.T in scope. The loop is fine when its body calls Run on that
// *testing.T. A loop that is a real exception (for example one that counts
// its failures across rows and reports once, or one whose rows are a
// sequence of steps that depend on each other) carries the comment
//
//	//testlint:rows reason
//
// on the line of the for statement or the line above it, with the reason.
package testlint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Escape is the comment that exempts one loop from the check; the text after
// it says why.
const Escape = "//testlint:rows"

// Finding is one table loop whose rows are not run with t.Run.
type Finding struct {
	// File is the path of the test file, relative to the checked root,
	// with forward slashes.
	File string
	// Line is the line of the for statement.
	Line int
	// Func is the name of the top-level function that holds the loop.
	Func string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: table loop reports failures without t.Run", f.File, f.Line, f.Func)
}

// Report is what [Check] found under a root.
type Report struct {
	// TableTests counts the top-level functions holding at least one
	// table loop that reports failures (with or without t.Run).
	TableTests int
	// Findings lists every table loop without t.Run, by file and line.
	Findings []Finding
	// Escaped counts the loops exempted with [Escape].
	Escaped int
}

// FuncsWithout returns the number of distinct functions that hold at least
// one finding.
func (r Report) FuncsWithout() int {
	seen := map[string]bool{}
	for _, f := range r.Findings {
		seen[f.File+"\x00"+f.Func] = true
	}
	return len(seen)
}

// Check walks root and checks every *_test.go file below it. Directories
// named testdata or vendor, hidden directories, node_modules and nested
// modules (a directory with its own go.mod other than root) are skipped.
// It returns an error when a file cannot be read or parsed.
func Check(root string) (Report, error) {
	var rep Report
	dirs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	names := make([]string, 0, len(dirs))
	for dir := range dirs {
		names = append(names, dir)
	}
	sort.Strings(names)
	for _, dir := range names {
		if err := checkDir(root, dirs[dir], &rep); err != nil {
			return rep, err
		}
	}
	sort.Slice(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return rep, nil
}

// checkDir checks the test files of one directory; the package-level tables
// are collected from all of its Go files, per package name (a directory may
// hold pkg and pkg_test).
func checkDir(root string, paths []string, rep *Report) error {
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	tables := map[string]map[string]bool{} // package name -> table variables
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("testlint: %w", err)
		}
		files[p] = f
		pkg := f.Name.Name
		if tables[pkg] == nil {
			tables[pkg] = map[string]bool{}
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) && isTableLit(vs.Values[i]) {
						tables[pkg][name.Name] = true
					}
				}
			}
		}
	}
	for _, p := range paths {
		if !strings.HasSuffix(p, "_test.go") {
			continue
		}
		f := files[p]
		rel, err := filepath.Rel(root, p)
		if err != nil {
			rel = p
		}
		c := &checker{
			fset:    fset,
			file:    filepath.ToSlash(rel),
			escapes: escapeLines(fset, f),
			pkgTabs: tables[f.Name.Name],
			rep:     rep,
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			c.funcDecl(fd)
		}
	}
	return nil
}

// escapeLines returns the lines that carry the escape comment.
func escapeLines(fset *token.FileSet, f *ast.File) map[int]bool {
	lines := map[int]bool{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, Escape) {
				lines[fset.Position(c.Slash).Line] = true
			}
		}
	}
	return lines
}

// isTableLit reports whether e is a slice, array or map literal with at
// least one element (possibly behind parentheses): an empty literal is a
// collection filled later, not a table of cases.
func isTableLit(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.CompositeLit:
			switch x.Type.(type) {
			case *ast.ArrayType, *ast.MapType:
				return len(x.Elts) > 0
			}
			return false
		}
		return false
	}
}

type checker struct {
	fset    *token.FileSet
	file    string
	escapes map[int]bool
	pkgTabs map[string]bool
	rep     *Report
}

// funcDecl checks one top-level function. It counts as a table test when
// one of its table loops reports failures.
func (c *checker) funcDecl(fd *ast.FuncDecl) {
	locals := map[string]bool{}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range x.Lhs {
				id, ok := lhs.(*ast.Ident)
				if ok && i < len(x.Rhs) && len(x.Lhs) == len(x.Rhs) && isTableLit(x.Rhs[i]) {
					locals[id.Name] = true
				}
			}
		case *ast.ValueSpec:
			for i, id := range x.Names {
				if i < len(x.Values) && isTableLit(x.Values[i]) {
					locals[id.Name] = true
				}
			}
		}
		return true
	})
	table := false
	var walk func(n ast.Node, ts []string)
	walk = func(n ast.Node, ts []string) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncLit:
				walk(x.Body, append(ts[:len(ts):len(ts)], testingTNames(x.Type)...))
				return false
			case *ast.RangeStmt:
				if len(ts) > 0 && c.isTable(x.X, locals) && reportsFailure(x.Body, ts) {
					table = true
					line := c.fset.Position(x.For).Line
					switch {
					case c.escapes[line] || c.escapes[line-1]:
						c.rep.Escaped++
					case !callsRun(x.Body, ts):
						c.rep.Findings = append(c.rep.Findings, Finding{File: c.file, Line: line, Func: fd.Name.Name})
					}
				}
			}
			return true
		})
	}
	walk(fd.Body, testingTNames(fd.Type))
	if table {
		c.rep.TableTests++
	}
}

func (c *checker) isTable(x ast.Expr, locals map[string]bool) bool {
	if isTableLit(x) {
		return true
	}
	id, ok := x.(*ast.Ident)
	return ok && (locals[id.Name] || c.pkgTabs[id.Name])
}

// testingTNames returns the names of a function's *testing.T parameters.
func testingTNames(ft *ast.FuncType) []string {
	var names []string
	if ft.Params == nil {
		return nil
	}
	for _, field := range ft.Params.List {
		star, ok := field.Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		sel, ok := star.X.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "T" {
			continue
		}
		if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "testing" {
			continue
		}
		for _, n := range field.Names {
			names = append(names, n.Name)
		}
	}
	return names
}

var failMethods = map[string]bool{"Error": true, "Errorf": true, "Fatal": true, "Fatalf": true, "Fail": true, "FailNow": true}

// reportsFailure reports whether body calls a failing method on one of ts.
func reportsFailure(body ast.Node, ts []string) bool {
	return callsMethod(body, ts, func(name string) bool { return failMethods[name] })
}

// callsRun reports whether body calls Run on one of ts.
func callsRun(body ast.Node, ts []string) bool {
	return callsMethod(body, ts, func(name string) bool { return name == "Run" })
}

func callsMethod(body ast.Node, ts []string, want func(string) bool) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !want(sel.Sel.Name) {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok {
			for _, t := range ts {
				if id.Name == t {
					found = true
					return false
				}
			}
		}
		return true
	})
	return found
}
