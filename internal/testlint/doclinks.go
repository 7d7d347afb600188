package testlint

import (
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"regexp"
	"strings"
)

// DocLinks is what [CountDocLinks] found in a package's doc comments.
type DocLinks struct {
	// Lines counts the lines of the package's non-test Go files.
	Lines int
	// Links counts the doc links ([Name], [pkg.Name], [Type.Method]) that
	// go/doc resolves in the doc comments of the package and of its
	// exported and unexported declarations.
	Links int
	// Unresolved lists bracketed dotted names ([Type.Method], [pkg.Name])
	// that go/doc did not resolve: meant as links, they render as plain
	// text.
	Unresolved []string
}

// CountDocLinks parses the non-test Go files of the package in dir and
// counts its doc links the way go doc resolves them (go/doc's
// [doc.Package.Parser]). A directory without Go files gives zero counts.
func CountDocLinks(dir string) (DocLinks, error) {
	var dl DocLinks
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		return dl, err
	}
	for _, pkg := range pkgs {
		var files []*ast.File
		for name, f := range pkg.Files {
			files = append(files, f)
			src, err := os.ReadFile(name)
			if err != nil {
				return dl, err
			}
			dl.Lines += strings.Count(string(src), "\n")
		}
		dp, err := doc.NewFromFiles(fset, files, "example.com/"+pkg.Name, doc.AllDecls)
		if err != nil {
			return dl, err
		}
		p := dp.Parser()
		texts := append([]string{dp.Doc}, valueDocs(dp.Consts, dp.Vars)...)
		texts = append(texts, funcDocs(dp.Funcs)...)
		for _, t := range dp.Types {
			texts = append(texts, t.Doc)
			texts = append(texts, valueDocs(t.Consts, t.Vars)...)
			texts = append(texts, funcDocs(t.Funcs, t.Methods)...)
		}
		for _, t := range texts {
			countLinks(p.Parse(t), &dl)
		}
	}
	return dl, nil
}

// valueDocs returns the doc comments of the const and var groups.
func valueDocs(groups ...[]*doc.Value) []string {
	var texts []string
	for _, g := range groups {
		for _, v := range g {
			texts = append(texts, v.Doc)
		}
	}
	return texts
}

// funcDocs returns the doc comments of the functions and methods.
func funcDocs(groups ...[]*doc.Func) []string {
	var texts []string
	for _, g := range groups {
		for _, f := range g {
			texts = append(texts, f.Doc)
		}
	}
	return texts
}

var dottedBracket = regexp.MustCompile(`\[\*?[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+\]`)

func countLinks(d *comment.Doc, dl *DocLinks) {
	var text func([]comment.Text)
	text = func(ts []comment.Text) {
		for _, t := range ts {
			switch x := t.(type) {
			case *comment.DocLink:
				dl.Links++
			case *comment.Link:
				text(x.Text)
			case comment.Plain:
				dl.Unresolved = append(dl.Unresolved, dottedBracket.FindAllString(string(x), -1)...)
			}
		}
	}
	for _, b := range d.Content {
		switch x := b.(type) {
		case *comment.Paragraph:
			text(x.Text)
		case *comment.Heading:
			text(x.Text)
		case *comment.List:
			for _, it := range x.Items {
				for _, c := range it.Content {
					if p, ok := c.(*comment.Paragraph); ok {
						text(p.Text)
					}
				}
			}
		}
	}
}
