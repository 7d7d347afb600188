package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestHelpEveryCommand: for the demo and every command, "help CMD", "CMD
// --help" and "CMD -h" print the same usage on stdout with an example, and
// exit 0; a command with flags lists every one of them.
func TestHelpEveryCommand(t *testing.T) {
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			helpName, forms := name, [][]string{{name, "--help"}, {name, "-h"}}
			if name == "" {
				helpName, forms = "demo", nil // "transfer --help" is the overview
			}
			code, want, errOut := runArgs("help", helpName)
			if code != exitOK || errOut != "" || !strings.HasPrefix(want, "usage: transfer") || !strings.Contains(want, "\nExamples:\n  go run ./examples/transfer") {
				t.Errorf("transfer help %s = %d, %q, %q; want 0 and a usage with an example", helpName, code, want, errOut)
			}
			if !helps[name].NoFlags && !strings.Contains(want, "\nFlags:\n  --") {
				t.Errorf("transfer help %s lists no flags:\n%s", helpName, want)
			}
			synopsis, flags, _ := strings.Cut(want, "\nFlags:\n")
			for _, m := range regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(synopsis, -1) {
				if !strings.Contains(flags, "  --"+m[1]+"\n") && !strings.Contains(flags, "  --"+m[1]+" ") {
					t.Errorf("transfer help %s: synopsis names --%s, the flag list does not:\n%s", helpName, m[1], want)
				}
			}
			for i, form := range forms {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					if code, out, errOut := runArgs(form...); code != exitOK || out != want || errOut != "" {
						t.Errorf("transfer %q = %d, %q, %q; want 0 and what help %s prints", form, code, out, errOut, helpName)
					}
				})
			}
		})
	}
	for _, flag := range []string{"--addr", "--data", "--tokens", "--store", "--tool-timeout", "--lease-grace"} {
		t.Run(flag, func(t *testing.T) {
			if _, out, _ := runArgs("serve", "--help"); !strings.Contains(out, "\n  "+flag+" ") {
				t.Errorf("transfer serve --help does not list %s:\n%s", flag, out)
			}
		})
	}
}

func TestHelpOverview(t *testing.T) {
	_, want, _ := runArgs("help")
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			if name != "" && !strings.Contains(want, "\n  "+name+" ") {
				t.Errorf("transfer help does not list %s:\n%s", name, want)
			}
		})
	}
	for i, form := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if code, out, errOut := runArgs(form...); code != exitOK || out != want || errOut != "" {
				t.Errorf("transfer %q = %d, %q, %q; want 0 and the overview", form, code, out, errOut)
			}
		})
	}
}

// TestWrongFlags: a wrong flag of any command exits 2 with one line naming it.
func TestWrongFlags(t *testing.T) {
	for i, args := range [][]string{{"serve", "--bogus"}, {"chat", "--bogus"}, {"team", "--bogus"}, {"--bogus"}, {"help", "nope"}, {"help", "a", "b"}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			code, out, errOut := runArgs(args...)
			if code != exitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "transfer") {
				t.Errorf("transfer %q = %d, %q, %q; want 2 and one stderr line", args, code, out, errOut)
			}
		})
	}
}
