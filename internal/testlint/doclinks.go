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
	// Links counts the doc links (a name, pkg.Name or Type.Method in
	// square brackets) that
	// go/doc resolves in the doc comments of the package and of its
	// exported and unexported declarations, their struct fields and
	// interface methods included.
	Links int
	// Unresolved lists the bracketed dotted names (Type.Method or
	// pkg.Name in square brackets) that go/doc did not resolve: meant as
	// links, they render as plain text.
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
		texts := append([]string{dp.Doc}, docs(valueDoc, dp.Consts, dp.Vars)...)
		texts = append(texts, docs(funcDoc, dp.Funcs)...)
		for _, t := range dp.Types {
			texts = append(texts, t.Doc)
			texts = append(texts, fieldDocs(t.Decl)...)
			texts = append(texts, docs(valueDoc, t.Consts, t.Vars)...)
			texts = append(texts, docs(funcDoc, t.Funcs, t.Methods)...)
		}
		for _, t := range texts {
			countLinks(p.Parse(t), &dl)
		}
	}
	return dl, nil
}

// fieldDocs returns the comments of the fields of the struct types and the
// methods of the interface types that decl declares: go doc shows them
// with the type, and links in them resolve like the type's own.
func fieldDocs(decl *ast.GenDecl) []string {
	var texts []string
	for _, s := range decl.Specs {
		ts, ok := s.(*ast.TypeSpec)
		if !ok {
			continue
		}
		var fields *ast.FieldList
		switch t := ts.Type.(type) {
		case *ast.StructType:
			fields = t.Fields
		case *ast.InterfaceType:
			fields = t.Methods
		}
		if fields == nil {
			continue
		}
		for _, f := range fields.List {
			for _, cg := range []*ast.CommentGroup{f.Doc, f.Comment} {
				if cg != nil {
					texts = append(texts, cg.Text())
				}
			}
		}
	}
	return texts
}

// docs returns the doc comment of each declaration in the groups, as
// text reads it off the declaration.
func docs[D any](text func(D) string, groups ...[]D) []string {
	var texts []string
	for _, g := range groups {
		for _, d := range g {
			texts = append(texts, text(d))
		}
	}
	return texts
}

// valueDoc is the doc comment of a const or var group.
func valueDoc(v *doc.Value) string { return v.Doc }

// funcDoc is the doc comment of a function or method.
func funcDoc(f *doc.Func) string { return f.Doc }

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
