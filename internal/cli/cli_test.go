package cli

import (
	"bytes"
	"flag"
	"testing"
	"time"
)

func newFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.String("addr", "127.0.0.1:8080", "listen `address`")
	fs.Int("k", 5, "shortlist size")
	fs.Bool("v", false, "verbose")
	fs.Duration("timeout", 30*time.Second, "how long")
	fs.String("data", "", "data folder")
	return fs
}

var usage = Usage{Synopsis: "prog serve --addr A", Summary: "Serve it.", Examples: []string{"prog serve --addr :0"}}

const wantUsage = `usage: prog serve --addr A

Serve it.

Flags:
  --addr address
        listen address (default "127.0.0.1:8080")
  --data string
        data folder
  --k int
        shortlist size (default 5)
  --timeout duration
        how long (default 30s)
  --v
        verbose

Examples:
  prog serve --addr :0
`

func TestParseFlags(t *testing.T) {
	tests := []struct {
		args           []string
		code           int
		ok             bool
		stdout, stderr string
	}{
		{[]string{"--addr", ":1"}, ExitOK, true, "", ""},
		{[]string{"--help"}, ExitOK, false, wantUsage, ""},
		{[]string{"-h"}, ExitOK, false, wantUsage, ""},
		{[]string{"--k", "2", "-help"}, ExitOK, false, wantUsage, ""},
		{[]string{"--bogus"}, ExitUsage, false, "", "prog serve: flag provided but not defined: -bogus\n"},
		{[]string{"--k", "x"}, ExitUsage, false, "", "prog serve: invalid value \"x\" for flag -k: parse error\n"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code, ok := ParseFlags("prog", newFlags(), usage, tt.args, &out, &errOut)
		if code != tt.code || ok != tt.ok || out.String() != tt.stdout || errOut.String() != tt.stderr {
			t.Errorf("ParseFlags(%q) = %d, %v, stdout %q, stderr %q; want %d, %v, %q, %q", tt.args, code, ok, out.String(), errOut.String(), tt.code, tt.ok, tt.stdout, tt.stderr)
		}
	}
}

func TestPrintUsageWithoutFlags(t *testing.T) {
	var out bytes.Buffer
	PrintUsage(&out, nil, Usage{Synopsis: "prog", Examples: []string{"prog"}})
	if want := "usage: prog\n\nExamples:\n  prog\n"; out.String() != want {
		t.Errorf("PrintUsage(no flags) = %q, want %q", out.String(), want)
	}
}
