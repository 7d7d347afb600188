// Package catalogtest loads catalog files into a snapshot, for the tests and
// benchmarks that rank, lint or evaluate tools without running them.
package catalogtest

import (
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
)

// Snapshot returns the snapshot of a new registry holding the tools of the
// catalog specs ("[namespace=]path", as catalog.LoadAll reads them). An
// error fails tb.
func Snapshot(tb testing.TB, specs ...string) *tools.Snapshot {
	tb.Helper()
	ts, err := catalog.LoadAll(specs...)
	if err != nil {
		tb.Fatalf("load catalogs: %v", err)
	}
	reg := tools.NewRegistry()
	if err := reg.Add(ts...); err != nil {
		tb.Fatal(err)
	}
	return reg.Snapshot()
}
