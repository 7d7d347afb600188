package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/promreg"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/storeurl"
	api "github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/tools/discovery"
)

func init() { commands["serve"] = runServe }

// purgeEvery is how often serve removes expired records, approvals and
// buckets; auditRetention is how long it keeps audit entries.
const (
	purgeEvery     = 10 * time.Minute
	auditRetention = 30 * 24 * time.Hour
)

// runServe serves the HTTP gateway until SIGINT or SIGTERM, then drains
// in-flight requests (up to 30s) and closes the databases. It prints
// "listening on http://ADDR" on stdout once it accepts connections (ADDR is
// the bound address, useful with port 0).
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address HOST:PORT")
	data := fs.String("data", "", "data folder for ledger.db and gateway.db (created when missing)")
	tokens := fs.String("tokens", "", `token file {"tokens":{"<bearer>":{"principal","tenant","scopes":[...]}}}`)
	toolTimeout := fs.Duration("tool-timeout", 30*time.Second, "how long a tool call may run")
	storeSpec := fs.String("store", "", "gateway store shared by several serve processes: redis://HOST:PORT/DB or postgres://USER@HOST:PORT/DB (default: SQLite gateway.db in --data)")
	leaseGrace := fs.Duration("lease-grace", 5*time.Second, "added to --tool-timeout to form a claim's lease; a crashed call's slot frees after both")
	discoveryLog := fs.String("discovery-log", "", "append each /v1/discover query and each tool then called to `FILE` (JSON Lines, created 0600), for toolgate log misses and cards learn")
	if code, ok := cli.ParseFlags("transfer", fs, helps["serve"].Usage, args, stdout, stderr); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "transfer serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	case *data == "":
		fmt.Fprintln(stderr, "transfer serve: --data DIR is required")
		return exitUsage
	case *tokens == "":
		fmt.Fprintln(stderr, "transfer serve: --tokens FILE is required")
		return exitUsage
	case *toolTimeout <= 0 || *leaseGrace <= 0:
		fmt.Fprintln(stderr, "transfer serve: --tool-timeout and --lease-grace must be positive")
		return exitUsage
	}
	auth, err := api.LoadTokenFile(*tokens)
	if err != nil {
		fmt.Fprintf(stderr, "transfer serve: %v\n", err)
		return exitUsage
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	metrics := promreg.NewProcessRegistry()

	dopts := &discovery.Options{Registerer: metrics}
	if *discoveryLog != "" {
		l, err := discovery.OpenJSONLog(*discoveryLog)
		if err != nil {
			fmt.Fprintf(stderr, "transfer serve: %v\n", err)
			return exitUsage
		}
		defer l.Close()
		dopts.Log = l
	}
	disc, err := discovery.New(dopts)
	if err != nil {
		fmt.Fprintf(stderr, "transfer serve: %v\n", err)
		return exitFailure
	}

	b, err := openBank(ctx, *data, *storeSpec, &gateway.Options{Logger: log, Registerer: metrics,
		DefaultTimeout: *toolTimeout, LeaseGrace: *leaseGrace})
	if err != nil {
		// A data folder, store or ledger that cannot be opened is the
		// operator's to fix, as toolgate serve has it: exit 2, one line.
		fmt.Fprintf(stderr, "transfer serve: %s\n", termtext.Line(err.Error()))
		return exitUsage
	}
	defer b.Close()

	err = api.Run(ctx, api.Config{
		Addr: *addr, Gateway: b.gw, Registry: b.reg, Auth: auth, Discoverer: disc, Gatherer: metrics, Logger: log,
		WriteTimeout: *toolTimeout + *leaseGrace + 30*time.Second, ShutdownTimeout: 30 * time.Second,
		PurgeEvery: purgeEvery, AuditRetention: auditRetention,
		Ready: func(a net.Addr) {
			fmt.Fprintf(stdout, "listening on http://%s\n", a)
			log.Info("transfer serve: ready", "addr", a.String(), "data", *data, "store", storeurl.Name(*storeSpec), "principals", auth.Len())
		},
	})
	if err != nil {
		fmt.Fprintf(stderr, "transfer serve: %v\n", err)
		return exitFailure
	}
	return exitOK
}
