// Command gen writes a big synthetic catalog file (JSON Lines) grown from
// real catalogs, for measuring discovery at scale:
//
//	go run ./internal/bigcatalog/gen -n 100000 -o /tmp/big.jsonl examples/transfer/catalog/*.json
//
// With -distinct every tool gets an input schema of its own
// ([bigcatalog.DistinctSchemas]), as in a catalog gathered from many
// different servers.
//
// The same inputs and -n give the same file.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/toolgate/toolgate/internal/bigcatalog"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
)

func main() {
	n := flag.Int("n", 100000, "number of tools")
	out := flag.String("o", "", "output `file` (required)")
	distinct := flag.Bool("distinct", false, "give every tool an input schema of its own")
	flag.Parse()
	if err := run(*n, *out, *distinct, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(n int, out string, distinct bool, specs []string) error {
	if out == "" || len(specs) == 0 || n < 1 {
		return fmt.Errorf("usage: gen [-distinct] -n N -o FILE CATALOG...")
	}
	ts, err := catalog.LoadAll(specs...)
	if err != nil {
		return err
	}
	reg := tools.NewRegistry()
	if err := reg.Add(ts...); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := bigcatalog.WriteJSONL(w, reg.Snapshot().Tools(), n, distinct); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
