package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/termtext"
)

// helps holds the usage of every flag set, by its name (the command's, or
// "mcp serve").
var helps = map[string]cli.Usage{
	"discover": {
		Synopsis: `toolgate discover --tools F [--tools F2] [--cards O]... [--scopes a,b] [--k 5] [--embed-model M [--embed-url URL]] [--format json] "request"`,
		Summary:  "Shortlist the tools a request needs from catalog files or upstream MCP servers, as the model would be shown them: at most --k, only tools the request matched; exit 1 with none.",
		Examples: []string{
			`toolgate discover --tools github=mcp-server-github.json --scopes repo:read --k 3 "close issue #42"`,
			`toolgate discover --mcp "npx -y @modelcontextprotocol/server-memory" --format json "remember my name"`,
		},
	},
	"eval": {
		Synopsis: `toolgate eval --tools F --queries Q [--k 5] [--cards O]... [--history share] [--backend B [--model M] [--library F] [--reformulate-below 0.3]]` + "\n       " +
			`[--embed-model M [--embed-url URL] [--embed-weights 0.5,0.7,0.9]] [--format text|json|html]`,
		Summary: "Score discovery on a labeled JSON Lines query file: recall@1/3/5, MRR, denied leaks and latency; exit 1 if an unauthorized tool leaked.",
		Examples: []string{`toolgate eval --tools tools.jsonl --queries queries.jsonl --k 5 --format json`,
			`toolgate eval --tools tools.jsonl --queries queries.jsonl --format html > eval.html`},
	},
	"lint": {
		Synopsis: `toolgate lint --tools F [--tools F2] [--cards O]... [--skip kinds] [--k 5] [--max-tokens 50] [--duplicate-threshold 0.8] [--all] [--format text|json|html]`,
		Summary:  "Check capability cards for near duplicates, missing aliases or not_for, cards over budget, tools discovery cannot find, and poisoning (another server's tool named, repeated text, alias floods, long descriptions, instructions aimed at the model); exit 1 with findings.",
		Examples: []string{`toolgate lint --tools github=mcp-server-github.json --skip missing-aliases`},
	},
	"grammar": {
		Synopsis: `toolgate grammar --schema S.json|- [--format gbnf|openai-strict|ollama]` + "\n       " +
			`toolgate grammar --tools F [--cards O]... --select a,b,c [--format gbnf|ollama]`,
		Summary: "Compile a JSON Schema, or the turn envelope of selected catalog tools, into a GBNF grammar or a structured-output spec; relaxations go to stderr.",
		Examples: []string{
			`toolgate grammar --schema args.json --format openai-strict`,
			`echo '{"type":"object"}' | toolgate grammar --schema -`,
			`toolgate grammar --tools bank.jsonl --select get_balance,transfer_funds > turn.gbnf`,
		},
	},
	"check": {
		Synopsis: `toolgate check --grammar G.gbnf [--input FILE|-]`,
		Summary:  "Check input, byte for byte (a trailing newline included), against a llama.cpp GBNF grammar (start rule root): exit 0 accepted, 1 rejected (byte offset on stderr), 2 grammar error.",
		Examples: []string{`printf '%s' '{"action":"answer","text":"hi"}' | toolgate check --grammar turn.gbnf`},
	},
	"mcp": {
		Synopsis: "toolgate mcp serve|approve|pin [flags] (toolgate mcp SUB -h lists each subcommand's flags)",
		Summary: "The MCP gateway: serve discovery and calls to an MCP client (serve), grant a call held for a human (approve), " +
			"pin upstream servers' tool definitions (pin).",
		Examples: []string{
			`toolgate mcp pin --mcp-config servers.json --pins mcp.pins`,
			`toolgate mcp serve --mcp-config servers.json --pins mcp.pins --http 127.0.0.1:8080 --tokens tokens.json --data ./state`,
		},
	},
	"mcp serve": {
		Synopsis: mcpServeSynopsis,
		Summary: "Serve progressive discovery (find_tools) and the gateway (call_tool) to an MCP client, over stdio or Streamable HTTP " +
			"(approvals at /v1/approvals/{approval_id} on the same address; toolgate mcp approve grants them on the --data store; Prometheus metrics at GET /metrics there, without a token).",
		Examples: []string{
			`toolgate mcp serve --tools bank.jsonl --principal alice --tenant acme --scopes accounts:read`,
			`toolgate mcp serve --mcp-config servers.json --http 127.0.0.1:8080 --tokens tokens.json --data ./state`,
		},
	},
	"mcp approve": {
		Synopsis: mcpApproveSynopsis,
		Summary: "Grant, as another principal of the tenant, a call that mcp serve holds for a human (CONFIRMATION_REQUIRED, its approval_id), " +
			"in the same --data store; the client then sends the same call with the same step again. --deny refuses it instead: " +
			"the call, sent again, is PERMISSION_DENIED until the approval expires. Exit 1 when the gateway refuses.",
		Examples: []string{
			`toolgate mcp approve --data ./state --principal bob --tenant acme --show apr_0123abcd`,
			`toolgate mcp approve --data ./state --principal bob --tenant acme apr_0123abcd`,
			`toolgate mcp approve --data ./state --principal bob --tenant acme --deny apr_0123abcd`,
		},
	},
}

// parseFlags parses a command's flags with its entry in helps (see
// [cli.ParseFlags]) and refuses "-" (stdin) for a flag that names a file
// stdin cannot stand for ([stdinRefused]): ok means go on, else code is
// the exit code.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	if code, ok := cli.ParseFlags("toolgate", fs, helps[fs.Name()], args, stdout, stderr); !ok {
		return code, false
	}
	if err := stdinRefused(fs); err != nil {
		return fail(stderr, "toolgate "+fs.Name(), err), false
	}
	return exitOK, true
}

// fail writes err as the one-line reason of a usage or input error,
// "PROG: err", on stderr and returns exitUsage. The reason may quote a
// catalog or a server: [termtext.Line] keeps it to one line.
func fail(stderr io.Writer, prog string, err error) int {
	fmt.Fprintf(stderr, "%s: %s\n", prog, termtext.Line(err.Error()))
	return exitUsage
}

// listenAddrErr says what is wrong with addr, the value of the listen
// address flag --name, before anything starts: net.Listen would say it
// only after the catalog loaded and the upstream servers started.
func listenAddrErr(name, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			err = errors.New(ae.Err)
		}
		return fmt.Errorf("--%s %q: want HOST:PORT, e.g. 127.0.0.1:8080 (%v)", name, addr, err)
	}
	return nil
}

// failLine is [fail] for an error whose first line is its reason (a token
// file's, a store's, an upstream server's): it writes "PROG: first line"
// on stderr and returns exitUsage.
func failLine(stderr io.Writer, prog string, err error) int {
	fmt.Fprintf(stderr, "%s: %s\n", prog, firstLine(err))
	return exitUsage
}

// writeJSON writes v as indented JSON, with <, > and & as they are: the
// --format json output of the commands.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// flagsErr is the usage check the commands share once their flags are
// parsed: each flag named in required must be given (not empty), and no
// argument is taken. It returns the first problem, or nil.
func flagsErr(fs *flag.FlagSet, required ...string) error {
	for _, name := range required {
		if fs.Lookup(name).Value.String() == "" {
			return fmt.Errorf("--%s is required", name)
		}
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// formatErr checks a --format value against the command's formats: nil when
// it is one of them, else `unknown --format "xml" (want text, json or html)`.
func formatErr(format string, formats ...string) error {
	if slices.Contains(formats, format) {
		return nil
	}
	last := len(formats) - 1
	return fmt.Errorf("unknown --format %q (want %s or %s)", format, strings.Join(formats[:last], ", "), formats[last])
}

// overview is "toolgate help": every command with its summary.
func overview(w io.Writer) {
	fmt.Fprint(w, "toolgate discovers, evaluates, lints and compiles tools for AI agents.\n\nusage: toolgate <command> [flags]\n\nCommands:\n")
	names := make([]string, 0, len(helps))
	for n := range helps {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s %s\n", width, n, helps[n].Summary)
	}
	fmt.Fprintf(w, "  %-*s %s\n", width, "help", "Show this overview, or one command's usage: toolgate help CMD (or toolgate CMD --help).")
	fmt.Fprintf(w, "  %-*s %s\n", width, "version", "Print toolgate's module version.")
	fmt.Fprint(w, "\nExit codes: 0 ok, 1 a negative result, 2 a usage or input error (one line on stderr).\n\nExample:\n  toolgate discover --tools github=mcp-server-github.json --k 3 \"close issue #42\"\n")
}
