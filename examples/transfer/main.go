// Command transfer is toolgate's financial-transfer example. Its commands
// are part of toolgate's contract (DESIGN.md):
//
//	go run ./examples/transfer                       the guided demo; exits 0
//	go run ./examples/transfer serve --addr HOST:PORT --data DIR --tokens FILE [--store redis://…|postgres://…]
//	go run ./examples/transfer chat --backend scripted|ollama|openai [--model M] --principal P --tenant T --scopes a,b
//	        [--data DIR] [--approve never|prompt] [--once "request"]
//	go run ./examples/transfer team                  router–worker agents and the untrusted-output policy; exits 0
//
// serve runs the HTTP gateway over the finance tools (get_balance,
// list_transactions, transfer_funds, issue_full_refund) with a SQLite ledger
// and a SQLite gateway store in DIR (or, with --store, a Redis or PostgreSQL
// store that several serve processes share); FILE maps bearer tokens to principals:
//
//	{"tokens":{"<bearer>":{"principal":"alice","tenant":"acme","scopes":["payments:write"]}}}
//
// Exit codes: 0 ok, 1 a failure, 2 a usage error with a one-line reason on stderr.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// command runs one subcommand with its arguments (after the command name)
// and returns the process exit code.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// commands lists the subcommands; each registers itself from its own file.
// The empty name is what runs without arguments.
var commands = map[string]command{}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name := ""
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	if name == "-h" || name == "--help" || name == "help" {
		fmt.Fprintf(stderr, "usage: transfer [%s] [flags]\n", strings.Join(commandNames(), "|"))
		return exitUsage
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "transfer: unknown command %q (want one of %s)\n", name, strings.Join(commandNames(), ", "))
		return exitUsage
	}
	return cmd(ctx, args, stdout, stderr)
}

func commandNames() []string {
	var names []string
	for n := range commands {
		if n != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
