// Package docsnippets holds the tests that keep the guides true.
//
// Every ```go block in README.md and docs/**/*.md must appear verbatim
// (modulo indentation and blank lines) in the body of some runnable
// Example function in the repository's *_test.go files. A snippet a reader
// may copy is therefore compiled, and run, by `go test`, and it cannot
// drift from the API it shows. To add a snippet to a guide, write it as
// the body of an Example in the example_test.go of the package it shows
// (with // Output: where the output is deterministic), then paste that
// body into the guide.
//
// Every documented discovery request in README.md and docs/*.md carries a
// marker, an HTML comment the rendered page hides, next to the command:
//
//	<!-- discover-example {"query":"…","tools":["[NS=]FILE or glob"],"cards":[{"tool":"ns/name","aliases":["…"]}],"first":"ns/name"} -->
//
// TestDocumentedDiscoveries runs each request through the default
// discoverer over those catalog files (with the overlay entries, hashed as
// `toolgate cards hash` would) and fails when the documented tool is not
// first. A guide that shows a discovery result adds the marker.
//
// A terminal transcript of a guide is checked when the line before its
// fenced block is the marker <!-- transcript -->: each line starting "$ "
// is a command (continued on the next line while it ends with "|" or
// "\"), the lines up to the next command are what it prints, stdout and
// stderr together, a "..." line standing for the rest, and "# exit N" at
// the end of its last line its exit status. TestDocumentedTranscripts runs
// each command with bash in a folder that links the repository's files,
// "go run ./cmd/toolgate" being the toolgate of this checkout and "/tmp/"
// a folder of the test's own, and fails when the output or the status
// differs from the guide's. Mark only transcripts that are deterministic
// and need no program beyond bash, coreutils and toolgate.
package docsnippets
