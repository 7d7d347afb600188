// Command toolgate discovers, evaluates, lints and compiles tools for AI
// agents. Its commands, flags, JSON output and exit codes are a contract
// (docs/design.md): exit 0 ok, 1 a negative result, 2 a usage or input error
// with a one-line reason on stderr.
//
//	toolgate discover --tools F [--tools F2] [--scopes a,b] [--k 5] [--format json] "request"
//	toolgate eval     --tools F --queries Q [--k 5] --format json
//	toolgate lint     --tools F
//	toolgate grammar  --schema S.json|- [--format gbnf|openai-strict|ollama]
//	toolgate grammar  --tools F --select a,b,c
//	toolgate check    --grammar G.gbnf [--input FILE|-]
//	toolgate mcp serve --tools F --principal P --tenant T [--scopes a,b]
//	toolgate audit verify (--data DIR | --store URL | --file F) [--pubkey FILE]
//	toolgate audit export (--data DIR | --store URL) [--since T] [--tenant T]
//	toolgate help [CMD] | toolgate CMD --help
//	toolgate version
//
// A flag that reads one input whole (grammar --schema, eval --queries,
// check --grammar and --input, audit verify --file, a JSON Lines --log)
// takes "-" for stdin,
// and its errors then name "stdin"; a flag whose file stdin cannot stand
// for (a catalog, an overlay, a store) refuses "-" by name.
//
// Help is an answer, not an error: "toolgate help", "toolgate --help" and
// "toolgate CMD --help" (or -h) print usage with every flag and an example
// on stdout and exit 0.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/heapcap"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/runtime/gateway/storeurl"
)

// Exit codes, part of the CLI contract.
const (
	exitOK       = 0
	exitNegative = 1
	exitUsage    = 2
)

// command runs one subcommand with its arguments (after the command name)
// and returns the process exit code. It writes results to stdout and the
// one-line reason for a failure to stderr. A command parses its flags with
// parseFlags, so that --help prints its usage (the entry in helps).
type command func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// commands lists the subcommands. Each lives in the file of its name.
var commands = map[string]command{}

func main() {
	setGCPercent(os.Getenv)
	storeurl.QuietDriverLogs()
	memCap := heapcap.Start(memoryLimit, os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	memCap.Stop()
	os.Exit(code)
}

// gcPercent is the GC's target (GOGC) the program runs with when the
// environment sets none. Building the discovery index of a big catalog
// keeps most of what it allocates: at 100,000 tools the default, 100,
// let the heap grow to 30 MiB more (356–366 against 326–334 MiB of RSS)
// for no CPU that could be measured (docs/operations.md).
const gcPercent = 50

// memoryLimit is the soft memory limit the program runs with when the
// environment sets no GOMEMLIMIT, while its live heap stays under 7/8 of
// it (package heapcap). It holds the discovery index build of 100,000
// tools whose schemas all differ, whose live heap peaks near 270 MiB,
// under 400 MB of RSS with the binary's own pages, as go build links it
// (docs/operations.md); a lower limit would be lifted during the build.
const memoryLimit = 310 << 20

// setGCPercent sets gcPercent unless getenv("GOGC") says otherwise.
func setGCPercent(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

// run is the program: it sends everything a command writes through
// termtext, so that no text from a catalog, a server, a tool or a model
// reaches the terminal as controls (security invariant 10). JSON keeps its
// meaning through it; the MCP protocol of "mcp serve" on stdout bypasses it
// ([termtext.Raw]).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out, errOut := termtext.NewWriter(stdout), termtext.NewWriter(stderr)
	defer errOut.Flush()
	defer out.Flush()
	return dispatch(ctx, args, stdin, out, errOut)
}

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "toolgate: no command (want one of %s); see \"toolgate help\"\n", strings.Join(commandNames(), ", "))
		return exitUsage
	}
	switch name := args[0]; {
	case cli.IsHelpFlag(name) || name == "help":
		return runHelp(ctx, args[1:], stdin, stdout, stderr)
	case name == "version" || name == "--version" || name == "-version":
		return runVersion(args[1:], stdout, stderr)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "toolgate: unknown command %q (want one of %s); see \"toolgate help\"\n", args[0], strings.Join(commandNames(), ", "))
		return exitUsage
	}
	return cmd(ctx, args[1:], stdin, stdout, stderr)
}

// runHelp is "toolgate help [CMD]": the overview, or CMD's usage (what
// "toolgate CMD --help" prints), on stdout. CMD is one of the overview's
// commands, one word ("discover") or two ("mcp pin").
func runHelp(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		overview(stdout)
		return exitOK
	case len(args) > 1:
		name := strings.Join(args, " ")
		cmd, ok := commands[args[0]]
		if _, known := helps[name]; !ok || !known {
			fmt.Fprintf(stderr, "toolgate help: unknown command %q (want one of %s)\n", name, strings.Join(commandNames(), ", "))
			return exitUsage
		}
		return cmd(ctx, append(slices.Clone(args[1:]), "--help"), stdin, stdout, stderr)
	case args[0] == "help" || cli.IsHelpFlag(args[0]):
		overview(stdout)
		return exitOK
	case args[0] == "version":
		return runVersion([]string{"--help"}, stdout, stderr)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "toolgate help: unknown command %q (want one of %s)\n", args[0], strings.Join(commandNames(), ", "))
		return exitUsage
	}
	return cmd(ctx, []string{"--help"}, stdin, stdout, stderr)
}

func commandNames() []string {
	names := make([]string, 0, len(commands)+2)
	for n := range commands {
		names = append(names, n)
	}
	names = append(names, "help", "version")
	sort.Strings(names)
	return names
}
