// Command toolgate discovers, evaluates, lints and compiles tools for AI
// agents. Its commands, flags, JSON output and exit codes are a contract
// (docs/design.md): exit 0 ok, 1 a negative result, 2 a usage or input error
// with a one-line reason on stderr.
//
//	toolgate discover --tools F [--tools F2] [--scopes a,b] [--k 3] [--format json] "request"
//	toolgate eval     --tools F --queries Q [--k 5] --format json
//	toolgate lint     --tools F
//	toolgate grammar  --schema S.json [--format gbnf|openai-strict|ollama]
//	toolgate grammar  --tools F --select a,b,c
//	toolgate check    --grammar G.gbnf [--input FILE|-]
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
)

// Exit codes, part of the CLI contract.
const (
	exitOK       = 0
	exitNegative = 1
	exitUsage    = 2
)

// command runs one subcommand with its arguments (after the command name)
// and returns the process exit code. It writes results to stdout and the
// one-line reason for a failure to stderr.
type command func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// commands lists the subcommands. Each lives in the file of its name.
var commands = map[string]command{}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		return exitUsage
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "toolgate: unknown command %q (want one of %s)\n", args[0], strings.Join(commandNames(), ", "))
		return exitUsage
	}
	return cmd(ctx, args[1:], stdin, stdout, stderr)
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: toolgate <command> [flags]\ncommands: %s\n", strings.Join(commandNames(), ", "))
}
