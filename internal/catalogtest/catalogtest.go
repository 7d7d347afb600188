// Package catalogtest builds the registries and snapshots that tests and
// benchmarks start from: from catalog files, for those that rank, lint or
// evaluate tools without running them, or from tools they declare.
package catalogtest

import (
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
)

// Snapshot returns the snapshot of a new registry holding the tools of the
// catalog specs ("[namespace=]path", as [catalog.LoadAll] reads them). An
// error fails tb.
func Snapshot(tb testing.TB, specs ...string) *tools.Snapshot {
	tb.Helper()
	ts, err := catalog.LoadAll(specs...)
	if err != nil {
		tb.Fatalf("load catalogs: %v", err)
	}
	return Registry(tb, ts...).Snapshot()
}

// Registry returns a new registry holding ts. A tool the registry refuses
// fails tb.
func Registry(tb testing.TB, ts ...tools.Tool) *tools.Registry {
	tb.Helper()
	reg := tools.NewRegistry()
	if err := reg.Add(ts...); err != nil {
		tb.Fatal(err)
	}
	return reg
}
