// Package cli gives toolgate's command-line programs (cmd/toolgate and
// examples/transfer) one way to parse flags and answer for themselves: -h
// or --help prints the command's usage (synopsis, summary, every flag,
// examples) on stdout and exits 0; a wrong flag is a one-line reason on
// stderr and exit 2.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// Exit codes of a usage answer.
const (
	ExitOK    = 0
	ExitUsage = 2
)

// Usage is what a command's help prints besides its flags.
type Usage struct {
	// Synopsis follows "usage: "; it may span lines.
	Synopsis string
	// Summary is one sentence on what the command does.
	Summary string
	// Examples are command lines a reader can copy.
	Examples []string
}

// IsHelpFlag reports whether arg asks for help as the flag package reads it.
func IsHelpFlag(arg string) bool {
	switch arg {
	case "-h", "--h", "-help", "--help":
		return true
	}
	return false
}

// ParseFlags parses args into fs, silencing the flag package's own output.
// Flags may come before or after the arguments (discover --tools F
// "request" --k 3), as in most command-line tools; after "--" everything is
// an argument, so an argument that starts with '-' can follow it. fs.Args()
// is then the arguments in order. It reports ok when the command should go
// on; otherwise code is the exit code: [ExitOK] after writing [PrintUsage] to
// stdout for -h or --help, [ExitUsage] after writing "PROG NAME: reason"
// (NAME is fs.Name()) as one line on stderr.
func ParseFlags(prog string, fs *flag.FlagSet, u Usage, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	err := parseInterspersed(fs, args)
	switch {
	case err == nil:
		return ExitOK, true
	case errors.Is(err, flag.ErrHelp):
		PrintUsage(stdout, fs, u)
		return ExitOK, false
	}
	fmt.Fprintf(stderr, "%s %s: %v\n", prog, fs.Name(), err)
	return ExitUsage, false
}

// parseInterspersed is fs.Parse(args) that goes on past an argument: the
// flag package stops at the first one, leaving later flags as arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			positional = append(positional, rest...) // after "--", all arguments
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	// Parse again to make fs.Args() the arguments: "--" ends the flags.
	return fs.Parse(append([]string{"--"}, positional...))
}

// PrintUsage writes "usage: SYNOPSIS", the summary, every flag of fs with
// its default (none when fs is nil or has no flags) and the examples.
func PrintUsage(w io.Writer, fs *flag.FlagSet, u Usage) {
	fmt.Fprintf(w, "usage: %s\n", u.Synopsis)
	if u.Summary != "" {
		fmt.Fprintf(w, "\n%s\n", u.Summary)
	}
	first := true
	if fs != nil {
		fs.VisitAll(func(f *flag.Flag) {
			if first {
				fmt.Fprint(w, "\nFlags:\n")
				first = false
			}
			kind, text := flag.UnquoteUsage(f)
			line := "  --" + f.Name
			if kind != "" {
				line += " " + kind
			}
			fmt.Fprintf(w, "%s\n        %s", line, text)
			switch {
			case isZeroDefault(f.DefValue):
			case isString(f):
				fmt.Fprintf(w, " (default %q)", f.DefValue)
			default:
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
			fmt.Fprintln(w)
		})
	}
	if len(u.Examples) > 0 {
		fmt.Fprint(w, "\nExamples:\n")
		for _, e := range u.Examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

// isString reports whether f holds a string, whose default is quoted.
func isString(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	_, ok = g.Get().(string)
	return ok
}

func isZeroDefault(v string) bool {
	switch v {
	case "", "0", "false", "[]", "0s":
		return true
	}
	return false
}
