// Package docsnippets holds one test: every ```go block in README.md and
// docs/**/*.md must appear verbatim (modulo indentation and blank lines) in
// the body of some runnable Example function in the repository's *_test.go
// files. A snippet a reader may copy is therefore compiled, and run, by
// `go test`, and it cannot drift from the API it shows.
//
// To add a snippet to a guide, write it as the body of an Example in the
// example_test.go of the package it shows (with // Output: where the output
// is deterministic), then paste that body into the guide.
package docsnippets
