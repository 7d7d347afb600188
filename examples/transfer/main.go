// Command transfer is toolgate's financial-transfer example. Its commands
// are part of toolgate's contract (docs/design.md):
//
//	go run ./examples/transfer                       the guided demo; exits 0
//	go run ./examples/transfer serve --addr HOST:PORT --data DIR --tokens FILE [--store redis://…|postgres://…]
//	go run ./examples/transfer chat --backend scripted|ollama|openai|anthropic|local [--api chat|responses] [--model M] --principal P --tenant T --scopes a,b
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
// "transfer help [CMD]", "transfer --help" and "transfer CMD --help" print
// usage with every flag and an example on stdout and exit 0.
//
// Exit codes: 0 ok, 1 a failure, 2 a usage or configuration error (a
// token file, data folder or store that cannot be used) with a one-line
// reason on stderr.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/runtime/gateway/storeurl"
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
	storeurl.QuietDriverLogs()
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run is the program: everything a command writes goes through termtext,
// so that no text from a catalog, a server, a tool or a model reaches the
// terminal as controls (security invariant 10).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out, errOut := termtext.NewWriter(stdout), termtext.NewWriter(stderr)
	defer errOut.Flush()
	defer out.Flush()
	return dispatch(ctx, args, out, errOut)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name := ""
	if len(args) > 0 && !cli.IsHelpFlag(args[0]) {
		name, args = args[0], args[1:]
	}
	switch {
	case name == "help" && len(args) == 0, name == "" && len(args) == 1 && cli.IsHelpFlag(args[0]):
		overview(stdout)
		return exitOK
	case name == "help" && len(args) == 1:
		name, args = args[0], []string{"--help"}
		if name == "demo" {
			name = ""
		}
	case name == "help":
		fmt.Fprintf(stderr, "transfer help: want at most one command, got %q\n", strings.Join(args, " "))
		return exitUsage
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "transfer: unknown command %q (want one of %s)\n", name, strings.Join(commandNames(), ", "))
		return exitUsage
	}
	if u := helps[name]; u.NoFlags && len(args) == 1 && cli.IsHelpFlag(args[0]) {
		cli.PrintUsage(stdout, nil, u.Usage)
		return exitOK
	}
	return cmd(ctx, args, stdout, stderr)
}

// commandUsage is a command's help; NoFlags marks the commands that take
// no flags, whose --help run answers for them.
type commandUsage struct {
	cli.Usage
	NoFlags bool
}

// helps holds every command's usage, by name ("" is the demo).
var helps = map[string]commandUsage{
	"": {NoFlags: true, Usage: cli.Usage{
		Synopsis: "transfer",
		Summary:  "The guided demo on embedded defaults (scripted model, SQLite in a temporary folder): discovery, the turn grammar, a transfer, a replayed duplicate, a denied admin call, a large transfer held for a second person's approval.",
		Examples: []string{"go run ./examples/transfer"},
	}},
	"serve": {Usage: cli.Usage{
		Synopsis: "transfer serve --addr HOST:PORT --data DIR --tokens FILE [--store redis://…|postgres://…] [--tool-timeout 30s] [--lease-grace 5s]" + "\n       " +
			"[--discovery-log FILE]",
		Summary: "Serve the HTTP gateway (POST /v1/tools/call, /v1/discover, approvals, /metrics) over the finance tools and a SQLite ledger in DIR.",
		Examples: []string{
			"go run ./examples/transfer serve --addr 127.0.0.1:8080 --data ./bank --tokens examples/transfer/testdata/tokens.json",
		},
	}},
	"chat": {Usage: cli.Usage{
		Synopsis: `transfer chat --backend scripted|ollama|openai|anthropic|local [--api chat|responses] [--model M] --principal P --tenant T --scopes a,b` + "\n       " +
			`[--data DIR] [--approve never|prompt] [--approver P] [--once "request"] [--script FILE] [--mode M]` + "\n       " +
			`[--temperature T] [--seed N] [--library FILE] [--mcp "CMD ARGS"]... [--mcp-url URL]... [--mcp-config FILE] [--offer-unconnected] [--v]` + "\n       " +
			`[--pins FILE [--unpinned quarantine|allow|refuse]] [--discovery-log FILE] [--embed-model M [--embed-url URL]]`,
		Summary: "Chat with the agent over the finance tools and the real MCP catalogs; calls go through the gateway.",
		Examples: []string{
			`go run ./examples/transfer chat --backend scripted --principal alice --tenant acme --scopes accounts:read,payments:write --once "move 25 USD from ACC-00001 to ACC-00002"`,
			`OLLAMA_HOST=http://127.0.0.1:11434 go run ./examples/transfer chat --backend ollama --model qwen3:8b --principal alice --tenant acme --scopes accounts:read`,
			`OPENAI_API_KEY=sk-... go run ./examples/transfer chat --backend openai --api responses --principal alice --tenant acme --scopes accounts:read`,
			`go run ./examples/transfer chat --backend local --model tinyllama-1.1b-chat-q4_0.gguf --library /opt/llama/libllama.so --principal alice --tenant acme --scopes accounts:read`,
		},
	}},
	"team": {NoFlags: true, Usage: cli.Usage{
		Synopsis: "transfer team",
		Summary:  "Router–worker agents and the untrusted-output policy, on embedded defaults.",
		Examples: []string{"go run ./examples/transfer team"},
	}},
}

// overview is "transfer help": every command with its summary.
func overview(w io.Writer) {
	fmt.Fprint(w, "transfer is toolgate's financial-transfer example.\n\nusage: transfer [command] [flags]\n\nCommands:\n")
	fmt.Fprintf(w, "  %-6s %s\n", "(none)", helps[""].Summary)
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-6s %s\n", n, helps[n].Summary)
	}
	fmt.Fprintf(w, "  %-6s %s\n", "help", "This overview, or one command's usage: transfer help CMD (or transfer CMD --help).")
	fmt.Fprint(w, "\nExit codes: 0 ok, 1 a failure, 2 a usage or configuration error (one line on stderr).\n\nExample:\n  go run ./examples/transfer serve --help\n")
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
