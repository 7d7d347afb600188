// Package runtimetest builds what the runtime and mcpserver tests stand an
// agent or an MCP server on, so that each test states only what it changes.
package runtimetest

import (
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// Stack returns a gateway over reg with a fresh in-memory store and opts
// (nil: the gateway's defaults), and a discoverer with the default options.
// An error fails tb.
func Stack(tb testing.TB, reg *tools.Registry, opts *gateway.Options) (*gateway.Gateway, *discovery.Discoverer) {
	tb.Helper()
	gw, err := gateway.New(reg, memstore.New(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	disc, err := discovery.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return gw, disc
}
