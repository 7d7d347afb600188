package cli

import (
	"bytes"
	"flag"
	"slices"
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
		t.Run(tt.stdout, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code, ok := ParseFlags("prog", newFlags(), usage, tt.args, &out, &errOut)
			if code != tt.code || ok != tt.ok || out.String() != tt.stdout || errOut.String() != tt.stderr {
				t.Errorf("ParseFlags(%q) = %d, %v, stdout %q, stderr %q; want %d, %v, %q, %q", tt.args, code, ok, out.String(), errOut.String(), tt.code, tt.ok, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestPrintUsageWithoutFlags(t *testing.T) {
	var out bytes.Buffer
	PrintUsage(&out, nil, Usage{Synopsis: "prog", Examples: []string{"prog"}})
	if want := "usage: prog\n\nExamples:\n  prog\n"; out.String() != want {
		t.Errorf("PrintUsage(no flags) = %q, want %q", out.String(), want)
	}
}

// TestParseFlagsInterspersed: flags may follow the arguments; after "--"
// everything is an argument.
func TestParseFlagsInterspersed(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantK    int
		wantArgs []string
	}{
		{"flags first", []string{"--k", "3", "close issue"}, 3, []string{"close issue"}},
		{"flag after the request", []string{"close issue", "--k", "3"}, 3, []string{"close issue"}},
		{"flags around two arguments", []string{"a", "--k", "2", "b", "--v"}, 2, []string{"a", "b"}},
		{"double dash ends the flags", []string{"--k", "4", "--", "-x", "--k", "9"}, 4, []string{"-x", "--k", "9"}},
		{"double dash after an argument", []string{"a", "--", "--v"}, 5, []string{"a", "--v"}},
		{"no arguments", []string{"--k", "1"}, 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFlags()
			var out, errOut bytes.Buffer
			if code, ok := ParseFlags("prog", fs, usage, tc.args, &out, &errOut); !ok {
				t.Fatalf("ParseFlags(%q) = %d, stderr %q", tc.args, code, errOut.String())
			}
			k := fs.Lookup("k").Value.(flag.Getter).Get().(int)
			if k != tc.wantK || !slices.Equal(fs.Args(), tc.wantArgs) {
				t.Errorf("ParseFlags(%q): k = %d, args %q; want %d, %q", tc.args, k, fs.Args(), tc.wantK, tc.wantArgs)
			}
		})
	}
	var out, errOut bytes.Buffer
	if code, ok := ParseFlags("prog", newFlags(), usage, []string{"request", "--bogus"}, &out, &errOut); ok || code != ExitUsage ||
		errOut.String() != "prog serve: flag provided but not defined: -bogus\n" {
		t.Errorf("ParseFlags(request --bogus) = %d, %v, %q; want 2 and the flag named", code, ok, errOut.String())
	}
}
