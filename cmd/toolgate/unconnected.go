package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/toolgate/toolgate/tools"
)

// offerUnconnectedFlag registers --offer-unconnected on a server command
// (serve, mcp serve): the name examples/transfer chat uses for the same
// choice.
func offerUnconnectedFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("offer-unconnected", false, "also offer in discovery the catalog files' tools that no server runs (a discovery-only catalog); a call of one is refused UNKNOWN_TOOL, code SERVER_NOT_CONNECTED")
}

// warnUnconnected tells the operator, on stderr, how many tools of snap
// cannot run (a catalog file's tools, no server behind them) and whether
// discovery offers them.
func warnUnconnected(stderr io.Writer, prog string, snap *tools.Snapshot, offer bool) {
	n := 0
	for _, t := range snap.Tools() {
		if !t.Runnable() {
			n++
		}
	}
	switch {
	case n == 0:
	case offer:
		fmt.Fprintf(stderr, "%s: %d catalog tools have no server connected; --offer-unconnected offers them, and their calls are refused (SERVER_NOT_CONNECTED)\n", prog, n)
	default:
		fmt.Fprintf(stderr, "%s: %d catalog tools have no server connected and are not offered (connect their server with --mcp, --mcp-url or --mcp-config; --offer-unconnected offers them for discovery)\n", prog, n)
	}
}
