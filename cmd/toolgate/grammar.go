package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/cards"
	"github.com/toolgate/toolgate/tools/catalog"
)

func init() { commands["grammar"] = runGrammar }

// runGrammar compiles a JSON Schema, or the turn envelope of selected
// catalog tools, into a constraint artifact:
//
//	toolgate grammar --schema S.json|- [--format gbnf|openai-strict|ollama] [--strict] [--compact] [--open-objects]
//	toolgate grammar --tools F [--tools F2] [--cards O]... --select a,b,c [--format gbnf|ollama] [--strict] [--compact]
//
// The artifact goes to stdout; each relaxation (a constraint the artifact
// does not enforce; the gateway still validates it) goes to stderr as one
// line "POINTER<TAB>KEYWORD<TAB>REASON" (prefixed by "TOOL: " for the
// envelope), as does each tool left out of the envelope. Exit 0 on
// success, 2 with one line on stderr for bad usage, an unreadable or
// invalid schema, or (with --strict) a schema that needs relaxations.
func runGrammar(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("grammar", flag.ContinueOnError)
	var files multiFlag
	schemaPath := fs.String("schema", "", "JSON Schema `file` to compile, or - for stdin")
	format := fs.String("format", "gbnf", "artifact: gbnf, openai-strict (schema only) or ollama")
	sel := fs.String("select", "", "comma-separated tool names or IDs for the envelope")
	strict := fs.Bool("strict", false, "fail instead of reporting relaxations")
	compact := fs.Bool("compact", false, "no whitespace between JSON tokens in the grammar")
	open := fs.Bool("open-objects", false, "objects without additionalProperties admit undeclared properties (JSON Schema's default)")
	noAnswer := fs.Bool("no-answer", false, "envelope without the answer branch")
	noFind := fs.Bool("no-find-tools", false, "envelope without the find_tools branch")
	fs.Var(&files, "tools", "catalog `file` for the envelope, as FILE or NS=FILE; repeatable")
	var cardFiles multiFlag
	fs.Var(&cardFiles, "cards", "card overlay `file` for the catalog, checked for stale and unknown entries (an overlay changes no name or schema, so not the grammar); repeatable")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "toolgate grammar: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	opts := &grammar.Options{Strict: *strict, Compact: *compact, OpenObjects: *open, NoAnswer: *noAnswer, NoFindTools: *noFind}
	switch *format {
	case "gbnf", "openai-strict", "ollama":
	default:
		fmt.Fprintf(stderr, "toolgate grammar: --format %q: want gbnf, openai-strict or ollama\n", *format)
		return exitUsage
	}
	switch {
	case *schemaPath != "" && len(files) == 0 && *sel == "" && len(cardFiles) == 0:
		return grammarSchema(*schemaPath, stdin, *format, opts, stdout, stderr)
	case *schemaPath == "" && len(files) > 0 && *sel != "":
		if *format == "openai-strict" {
			fmt.Fprintln(stderr, "toolgate grammar: --format openai-strict takes --schema; for the envelope use gbnf or ollama")
			return exitUsage
		}
		return grammarEnvelope(files, cardFiles, *sel, *format, opts, stdout, stderr)
	default:
		fmt.Fprintln(stderr, "toolgate grammar: give --schema FILE, or --tools FILE with --select a,b,c")
		return exitUsage
	}
}

// grammarSchema compiles the schema at path, or on stdin for "-".
func grammarSchema(path string, stdin io.Reader, format string, opts *grammar.Options, stdout, stderr io.Writer) int {
	data, path, err := readInput("schema", path, stdin)
	if err != nil {
		return fail(stderr, "toolgate grammar", err)
	}
	switch format {
	case "gbnf":
		res, err := grammar.FromSchema(data, opts)
		if err != nil {
			fmt.Fprintf(stderr, "toolgate grammar: %s: %s\n", path, oneLineErr(err))
			return exitUsage
		}
		io.WriteString(stdout, res.GBNF)
		printRelaxations(stderr, "", res.Relaxations)
	case "openai-strict":
		spec, relax, err := grammar.OpenAIStrict(data)
		if err == nil && opts.Strict && len(relax) > 0 {
			err = &grammar.RelaxationError{Relaxations: relax}
		}
		if err != nil {
			fmt.Fprintf(stderr, "toolgate grammar: %s: %s\n", path, oneLineErr(err))
			return exitUsage
		}
		fmt.Fprintf(stdout, "%s\n", spec)
		printRelaxations(stderr, "", relax)
	case "ollama":
		// Ollama's format takes a JSON Schema as it is; check that it compiles
		// and report what a grammar cannot enforce.
		res, err := grammar.FromSchema(data, opts)
		if err != nil {
			fmt.Fprintf(stderr, "toolgate grammar: %s: %s\n", path, oneLineErr(err))
			return exitUsage
		}
		fmt.Fprintf(stdout, "%s\n", strings.TrimSpace(string(data)))
		printRelaxations(stderr, "", res.Relaxations)
	}
	return exitOK
}

func grammarEnvelope(files, cardFiles []string, sel, format string, opts *grammar.Options, stdout, stderr io.Writer) int {
	ov, err := cards.Load(cardFiles...)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate grammar: %s\n", oneLineErr(err))
		return exitUsage
	}
	all, err := catalog.LoadAll(files...)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate grammar: %s\n", oneLineErr(err))
		return exitUsage
	}
	all, rep := ov.Apply(all)
	for _, p := range rep.Problems() {
		fmt.Fprintf(stderr, "toolgate grammar: warning: %s\n", termtext.Line(p.String()))
	}
	picked, err := selectTools(all, sel)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate grammar: %v\n", err)
		return exitUsage
	}
	// Each tool is named as the agent and mcp serve show it: a bare name
	// another tool of the catalogs shares, selected or not, is qualified.
	reg := tools.NewRegistry()
	if err := reg.Add(all...); err != nil {
		fmt.Fprintf(stderr, "toolgate grammar: %s\n", oneLineErr(err))
		return exitUsage
	}
	snap := reg.Snapshot()
	names := tools.NewSessionNames("", runtime.FindToolsName)
	env := make([]grammar.EnvelopeTool, 0, len(picked))
	for _, t := range picked {
		i, _ := snap.Lookup(t.ID)
		name, _ := names.Name(snap, snap.Tool(i))
		env = append(env, grammar.EnvelopeTool{Name: name, Schema: t.InputSchema})
	}
	if format == "ollama" {
		spec, relax, err := grammar.EnvelopeSchema(env, opts)
		if err != nil {
			fmt.Fprintf(stderr, "toolgate grammar: %s\n", oneLineErr(err))
			return exitUsage
		}
		fmt.Fprintf(stdout, "%s\n", spec)
		printRelaxations(stderr, "", relax)
		return exitOK
	}
	res, err := grammar.Envelope(env, opts)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate grammar: %s\n", oneLineErr(err))
		return exitUsage
	}
	io.WriteString(stdout, res.GBNF)
	for _, name := range res.Tools {
		printRelaxations(stderr, name+": ", res.Relaxations[name])
	}
	for _, x := range res.Excluded {
		fmt.Fprintf(stderr, "%s: excluded: %s\n", termtext.Line(x.Name), termtext.Line(oneLineErr(x.Err)))
	}
	// Bounds the grammar adds where the schemas set none (the envelope's
	// own under "envelope").
	for _, b := range res.Bounds[""] {
		fmt.Fprintf(stderr, "envelope: %s\n", b)
	}
	for _, name := range res.Tools {
		for _, b := range res.Bounds[name] {
			fmt.Fprintf(stderr, "%s: %s\n", name, b)
		}
	}
	return exitOK
}

// selectTools picks tools by ID or bare name, in the order given; a bare
// name two namespaces share must be written as an ID.
func selectTools(all []tools.Tool, sel string) ([]tools.Tool, error) {
	var out []tools.Tool
	seen := map[string]bool{}
	for _, want := range strings.Split(sel, ",") {
		want = strings.TrimSpace(want)
		if want == "" {
			continue
		}
		var match []tools.Tool
		for _, t := range all {
			if t.ID == want {
				match = []tools.Tool{t}
				break
			}
			if t.Name() == want {
				match = append(match, t)
			}
		}
		switch len(match) {
		case 0:
			return nil, fmt.Errorf("--select: no tool %q in the catalogs", want)
		case 1:
		default:
			ids := make([]string, len(match))
			for i, t := range match {
				ids[i] = t.ID
			}
			return nil, fmt.Errorf("--select: %q is ambiguous (%s); give the ID", want, strings.Join(ids, ", "))
		}
		if !seen[match[0].ID] {
			seen[match[0].ID] = true
			out = append(out, match[0])
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--select names no tool")
	}
	return out, nil
}

// printRelaxations writes one "POINTER<TAB>KEYWORD<TAB>REASON" line per
// relaxation; a pointer holds the schema's property names, escaped so
// that none can break its line or its columns.
func printRelaxations(w io.Writer, prefix string, rs []grammar.Relaxation) {
	for _, r := range rs {
		fmt.Fprintf(w, "%s#%s\t%s\t%s\n", termtext.Line(prefix), termtext.Line(r.Pointer), termtext.Line(r.Keyword), termtext.Line(r.Reason))
	}
}

// oneLineErr flattens an error to one line.
func oneLineErr(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
