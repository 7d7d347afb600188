package main

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// subcommands are every command line that has its own usage: each
// registered command, each two-word one ("mcp serve"), plus version.
func subcommands() []string {
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	for n := range helps {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return append(names, "version")
}

var flagInSynopsis = regexp.MustCompile(`--([a-z][a-z-]*)`)

// TestHelpEveryCommand: "help CMD", "CMD --help" and "CMD -h" print the same
// usage on stdout and exit 0, with a synopsis, every flag the synopsis
// names, and an example.
func TestHelpEveryCommand(t *testing.T) {
	for _, name := range subcommands() {
		code, want, errOut := runCmd(append([]string{"help"}, strings.Fields(name)...)...)
		if code != exitOK || errOut != "" {
			t.Errorf("toolgate help %s = %d, stderr %q; want 0, no stderr", name, code, errOut)
			continue
		}
		if !strings.HasPrefix(want, "usage: toolgate "+name) || !strings.Contains(want, "Example") {
			t.Errorf("toolgate help %s = %q; want a usage line and an example", name, want)
		}
		if name != "version" {
			synopsis, flags, _ := strings.Cut(want, "\nFlags:\n")
			// A group without flags of its own ("mcp") sends a reader to
			// its subcommands', which are in subcommands() too.
			group := flags == "" && strings.Contains(synopsis, "SUB -h lists each subcommand's flags")
			if flags == "" && !group {
				t.Errorf("toolgate help %s lists no flags:\n%s", name, want)
			}
			if group {
				synopsis = ""
			}
			for _, m := range flagInSynopsis.FindAllStringSubmatch(synopsis, -1) {
				if !strings.Contains(flags, "  --"+m[1]+"\n") && !strings.Contains(flags, "  --"+m[1]+" ") {
					t.Errorf("toolgate help %s: synopsis names --%s, the flag list does not:\n%s", name, m[1], want)
				}
			}
		}
		for i, flag := range []string{"--help", "-h", "-help"} {
			form := append(strings.Fields(name), flag)
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				code, out, errOut := runCmd(form...)
				if code != exitOK || out != want || errOut != "" {
					t.Errorf("toolgate %s = %d, %q, %q; want 0 and what help %s prints", strings.Join(form, " "), code, out, errOut, name)
				}
			})
		}
	}
}

// TestHelpSubcommandByName: "help mcp pin" prints what "mcp pin --help"
// prints, for every two-word command of the overview (it was a usage
// error, "want at most one command", though the overview lists them).
func TestHelpSubcommandByName(t *testing.T) {
	for name := range helps {
		words := strings.Fields(name)
		if len(words) < 2 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCmd(append([]string{"help"}, words...)...)
			_, want, _ := runCmd(append(words, "--help")...)
			if code != exitOK || errOut != "" || out != want || !strings.HasPrefix(out, "usage: toolgate "+name) {
				t.Errorf("toolgate help %s = %d, %q, %q; want 0 and what %s --help prints", name, code, out, errOut, name)
			}
		})
	}
}

// TestHelpOverview: every way to ask for the overview prints it on stdout,
// naming every command, and exits 0.
func TestHelpOverview(t *testing.T) {
	_, want, _ := runCmd("help")
	for _, name := range subcommands() {
		if !strings.Contains(want, "\n  "+name+" ") {
			t.Errorf("toolgate help does not list %s:\n%s", name, want)
		}
	}
	// The summaries start in one column, however long a command's name.
	col := -1
	for name, u := range helps {
		t.Run(name, func(t *testing.T) {
			line := "  " + name + " "
			i := strings.Index(want, line)
			j := strings.Index(want[max(i, 0):], u.Summary)
			if i < 0 || j < 0 || strings.TrimSpace(want[i+len(line):i+j]) != "" {
				t.Errorf("toolgate help lacks the line of %s and its summary:\n%s", name, want)
				return
			}
			if col == -1 {
				col = j
			} else if j != col {
				t.Errorf("toolgate help: the summary of %s starts at column %d, another's at %d", name, j, col)
			}
		})
	}
	for i, form := range [][]string{{"help"}, {"--help"}, {"-h"}, {"-help"}, {"help", "help"}, {"help", "--help"}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			code, out, errOut := runCmd(form...)
			if code != exitOK || out != want || errOut != "" || !strings.Contains(out, "Example:") {
				t.Errorf("toolgate %s = %d, %q, %q; want 0 and the overview", strings.Join(form, " "), code, out, errOut)
			}
		})
	}
}

// TestUsageErrors: a wrong flag, an unknown command and no command exit 2
// with one line on stderr and nothing on stdout.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string // stderr prefix
	}{
		{nil, "toolgate: no command (want one of "},
		{[]string{"nope"}, `toolgate: unknown command "nope"`},
		{[]string{"help", "nope"}, `toolgate help: unknown command "nope"`},
		{[]string{"help", "discover", "eval"}, `toolgate help: unknown command "discover eval"`},
		{[]string{"help", "mcp", "nope"}, `toolgate help: unknown command "mcp nope"`},
		{[]string{"version", "--bogus"}, `toolgate version: unexpected argument "--bogus"`},
		{[]string{"cards", "nope"}, `toolgate cards: unknown command "nope" (hash, check, learn or suggest); see "toolgate help cards"`},
		{[]string{"mcp", "nope"}, `toolgate mcp: unknown command "nope" (serve, approve or pin); see "toolgate help mcp"`},
		{[]string{"audit", "no\x1b[2Jpe"}, `toolgate audit: unknown command "no\x1b[2Jpe" (verify, export or checkpoint); see "toolgate help audit"`},
	}
	for _, name := range subcommands() {
		if name == "version" {
			continue
		}
		args := append(strings.Fields(name), "--no-such-flag")
		if name == "mcp" {
			args = []string{"mcp", "serve", "--no-such-flag"}
		}
		tests = append(tests, struct {
			args []string
			want string
		}{args, "toolgate " + strings.Join(args[:len(args)-1], " ") + ": flag provided but not defined: -no-such-flag"})
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			code, out, errOut := runCmd(tt.args...)
			lines := strings.Count(strings.TrimSuffix(errOut, "\n"), "\n") + 1
			if code != exitUsage || out != "" || !strings.HasPrefix(errOut, tt.want) || lines != 1 {
				t.Errorf("toolgate %q = %d, %q, %q; want 2, one stderr line starting %q", tt.args, code, out, errOut, tt.want)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	code, out, errOut := runCmd("version")
	if code != exitOK || errOut != "" || !regexp.MustCompile(`^toolgate \S+( \(rev [0-9a-f]+(, modified)?\))? go\S+\n$`).MatchString(out) {
		t.Errorf("toolgate version = %d, %q, %q; want 0 and one line \"toolgate VERSION go...\"", code, out, errOut)
	}
	for _, alias := range []string{"--version", "-version"} {
		t.Run(alias, func(t *testing.T) {
			if code, got, _ := runCmd(alias); code != exitOK || got != out {
				t.Errorf("toolgate %s = %d, %q; want what version prints", alias, code, got)
			}
		})
	}
}

func TestVersionLine(t *testing.T) {
	tests := []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}}, true, "toolgate v1.2.3 go1.26.0"},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}, true,
			"toolgate (devel) (rev 0123456789ab, modified) go1.26.0"},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}, true,
			"toolgate (devel) (rev abc) go1.26.0"},
		{nil, false, "toolgate (unknown version)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := versionLine(tt.info, tt.ok); got != tt.want {
				t.Errorf("versionLine(%+v) = %q, want %q", tt.info, got, tt.want)
			}
		})
	}
}

func TestFlagsErr(t *testing.T) {
	tests := []struct {
		args    []string
		catalog bool // a catalog command's check
		want    string
	}{
		{nil, true, "a catalog is required: --tools, --mcp, --mcp-url or --mcp-config"},
		{[]string{"--tools", "c.json"}, true, "--out is required"},
		{[]string{"--tools", "c.json", "--out", "o", "extra"}, true, `unexpected argument "extra"`},
		{[]string{"--tools", "c.json", "--out", "o"}, true, ""},
		{[]string{"--out", "o", "extra"}, false, `unexpected argument "extra"`},
		{[]string{"--out", "o"}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			fs, src := catalogFlagSet("t")
			fs.String("out", "", "")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := flagsErr(fs, "out")
			if tt.catalog {
				err = src.flagsErr(fs, "out")
			}
			if got := errText(err); got != tt.want {
				t.Errorf("flagsErr(%q, catalog %v) = %v, want %q", tt.args, tt.catalog, err, tt.want)
			}
		})
	}
}

func TestFormatErr(t *testing.T) {
	tests := []struct {
		format  string
		formats []string
		want    string
	}{
		{"json", []string{"text", "json"}, ""},
		{"xml", []string{"text", "json"}, `unknown --format "xml" (want text or json)`},
		{"xml", []string{"text", "json", "html"}, `unknown --format "xml" (want text, json or html)`},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			err := formatErr(tt.format, tt.formats...)
			if got := errText(err); got != tt.want {
				t.Errorf("formatErr(%q, %q) = %v, want %q", tt.format, tt.formats, err, tt.want)
			}
		})
	}
}

// errText is err's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

var numericFlagInSynopsis = regexp.MustCompile(`\[--([a-z][a-z-]*) (-?[0-9][0-9.]*)\]`)

// TestHelpSynopsisShowsDefaults: a synopsis that shows a number for an
// optional flag ("[--k 5]") shows its default, which a reader takes it for.
func TestHelpSynopsisShowsDefaults(t *testing.T) {
	for _, name := range subcommands() {
		if name == "version" {
			continue
		}
		_, usage, _ := runCmd(append([]string{"help"}, strings.Fields(name)...)...)
		synopsis, flags, _ := strings.Cut(usage, "\nFlags:\n")
		for _, m := range numericFlagInSynopsis.FindAllStringSubmatch(synopsis, -1) {
			t.Run(name+"/"+m[1], func(t *testing.T) {
				line := regexp.MustCompile(`(?m)^  --` + regexp.QuoteMeta(m[1]) + ` .*\n.*$`).FindString(flags)
				if !strings.HasSuffix(line, "(default "+m[2]+")") {
					t.Errorf("toolgate help %s: synopsis shows [--%s %s], the flag list says:\n%s", name, m[1], m[2], line)
				}
			})
		}
	}
}
