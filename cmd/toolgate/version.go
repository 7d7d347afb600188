package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/toolgate/toolgate/internal/cli"
)

// runVersion is "toolgate version": the module version toolgate was built
// as ("(devel)" for a build from a checkout), with the VCS revision when
// the build recorded one, and the Go version.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && cli.IsHelpFlag(args[0]) {
		cli.PrintUsage(stdout, nil, cli.Usage{Synopsis: "toolgate version",
			Summary: "Print toolgate's module version, VCS revision and Go version.", Examples: []string{"toolgate version"}})
		return exitOK
	}
	if len(args) > 0 {
		fmt.Fprintf(stderr, "toolgate version: unexpected argument %q\n", args[0])
		return exitUsage
	}
	fmt.Fprintln(stdout, versionLine(debug.ReadBuildInfo()))
	return exitOK
}

// versionLine formats build information: "toolgate v1.2.3 go1.26.0", with
// " (rev 0123456789ab, modified)" after the version when the build
// recorded its VCS state.
func versionLine(info *debug.BuildInfo, ok bool) string {
	if !ok {
		return "toolgate (unknown version)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev != "" {
		v += fmt.Sprintf(" (rev %.12s%s)", rev, modified)
	}
	return "toolgate " + v + " " + info.GoVersion
}
