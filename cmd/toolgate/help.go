package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// usage is what "toolgate CMD --help" prints besides the flags: the
// synopsis, one sentence on what the command does, and examples.
type usage struct {
	synopsis string   // after "usage: "
	summary  string   // one sentence
	examples []string // command lines
}

// helps holds the usage of every flag set, by its name (the command's, or
// "mcp serve").
var helps = map[string]usage{
	"discover": {
		synopsis: `toolgate discover --tools F [--tools F2] [--scopes a,b] [--k 3] [--format json] "request"`,
		summary:  "Shortlist the tools a request needs from catalog files or upstream MCP servers, as the model would be shown them.",
		examples: []string{
			`toolgate discover --tools github=mcp-server-github.json --scopes repo:read --k 3 "close issue #42"`,
			`toolgate discover --mcp "npx -y @modelcontextprotocol/server-memory" --format json "remember my name"`,
		},
	},
	"eval": {
		synopsis: `toolgate eval --tools F --queries Q [--k 5] [--format json]`,
		summary:  "Score discovery on a labeled JSON Lines query file: recall@1/3/5, MRR, denied leaks and latency; exit 1 if an unauthorized tool leaked.",
		examples: []string{`toolgate eval --tools tools.jsonl --queries queries.jsonl --k 5 --format json`},
	},
	"lint": {
		synopsis: `toolgate lint --tools F [--tools F2] [--skip kinds] [--k 5] [--max-tokens 50] [--duplicate-threshold 0.8] [--format text|json]`,
		summary:  "Check capability cards for near duplicates, missing aliases or not_for, cards over budget and tools discovery cannot find; exit 1 with findings.",
		examples: []string{`toolgate lint --tools github=mcp-server-github.json --skip missing-aliases`},
	},
	"grammar": {
		synopsis: `toolgate grammar --schema S.json [--format gbnf|openai-strict|ollama]` + "\n       " +
			`toolgate grammar --tools F --select a,b,c [--format gbnf|ollama]`,
		summary: "Compile a JSON Schema, or the turn envelope of selected catalog tools, into a GBNF grammar or a structured-output spec; relaxations go to stderr.",
		examples: []string{
			`toolgate grammar --schema args.json --format openai-strict`,
			`toolgate grammar --tools bank.jsonl --select get_balance,transfer_funds > turn.gbnf`,
		},
	},
	"check": {
		synopsis: `toolgate check --grammar G.gbnf [--input FILE|-]`,
		summary:  "Check input against a llama.cpp GBNF grammar (start rule root): exit 0 accepted, 1 rejected (byte offset on stderr), 2 grammar error.",
		examples: []string{`echo '{"action":"answer","text":"hi"}' | toolgate check --grammar turn.gbnf`},
	},
	"mcp serve": {
		synopsis: strings.TrimPrefix(mcpUsage, "usage: "),
		summary:  "Serve progressive discovery (find_tools) and the gateway (call_tool) to an MCP client, over stdio or Streamable HTTP.",
		examples: []string{
			`toolgate mcp serve --tools bank.jsonl --principal alice --tenant acme --scopes accounts:read`,
			`toolgate mcp serve --mcp-config servers.json --http 127.0.0.1:8080 --tokens tokens.json --data ./state`,
		},
	},
}

// parseFlags parses args into fs (whose output must be io.Discard). It
// reports ok when the command should go on; otherwise code is the exit
// code: 0 after printing the usage for -h or --help on stdout, 2 after a
// one-line reason for a bad flag on stderr.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return exitOK, true
	case errors.Is(err, flag.ErrHelp):
		printUsage(stdout, fs)
		return exitOK, false
	}
	fmt.Fprintf(stderr, "toolgate %s: %v\n", fs.Name(), err)
	return exitUsage, false
}

// printUsage writes fs's usage: synopsis, summary, every flag, examples.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	u := helps[fs.Name()]
	if u.synopsis == "" {
		u.synopsis = "toolgate " + fs.Name() + " [flags]"
	}
	fmt.Fprintf(w, "usage: %s\n\n", u.synopsis)
	if u.summary != "" {
		fmt.Fprintf(w, "%s\n\n", u.summary)
	}
	fmt.Fprintln(w, "Flags:")
	fs.VisitAll(func(f *flag.Flag) {
		kind, text := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintf(w, "%s\n        %s", line, text)
		switch {
		case isZeroDefault(f):
		case kind == "string":
			fmt.Fprintf(w, " (default %q)", f.DefValue)
		default:
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
	if len(u.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range u.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

func isZeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "[]":
		return true
	}
	return false
}

// overview is "toolgate help": every command with its summary.
func overview(w io.Writer) {
	fmt.Fprint(w, "toolgate discovers, evaluates, lints and compiles tools for AI agents.\n\nusage: toolgate <command> [flags]\n\nCommands:\n")
	names := make([]string, 0, len(helps))
	for n := range helps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, helps[n].summary)
	}
	fmt.Fprintf(w, "  %-10s %s\n", "help", "Show this overview, or one command's usage: toolgate help CMD (or toolgate CMD --help).")
	fmt.Fprintf(w, "  %-10s %s\n", "version", "Print toolgate's module version.")
	fmt.Fprint(w, "\nExit codes: 0 ok, 1 a negative result, 2 a usage or input error (one line on stderr).\n\nExample:\n  toolgate discover --tools github=mcp-server-github.json --k 3 \"close issue #42\"\n")
}
