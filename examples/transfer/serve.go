package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
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
	auth, err := gateway.LoadTokenFile(*tokens)
	if err != nil {
		fmt.Fprintf(stderr, "transfer serve: %v\n", err)
		return exitUsage
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	b, err := openBank(ctx, *data, *storeSpec, &gateway.Options{Logger: log, Registerer: metrics,
		DefaultTimeout: *toolTimeout, LeaseGrace: *leaseGrace})
	if err != nil {
		fmt.Fprintf(stderr, "transfer serve: %v\n", err)
		return exitFailure
	}
	defer b.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "transfer serve: %v\n", err)
		return exitFailure
	}
	disc, err := discovery.New(nil)
	if err != nil {
		fmt.Fprintf(stderr, "transfer serve: %v\n", err)
		return exitFailure
	}
	srv := gateway.NewHTTPServer(*addr, gateway.NewHTTPHandler(b.gw, auth, &gateway.HTTPOptions{Gatherer: metrics, Logger: log,
		Discover: discoverHook(disc, b.reg)}), *toolTimeout+*leaseGrace+30*time.Second)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	go purgeLoop(ctx, b.gw, log)
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	log.Info("transfer serve: ready", "addr", ln.Addr().String(), "data", *data, "store", storeName(*storeSpec), "principals", auth.Len())

	select {
	case err := <-served:
		fmt.Fprintf(stderr, "transfer serve: %v\n", err)
		return exitFailure
	case <-ctx.Done():
	}
	log.Info("transfer serve: shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "transfer serve: shutdown: %v\n", err)
		return exitFailure
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "transfer serve: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// discoverAnswer is the body of POST /v1/discover: the CLI's `discover
// --format json` shape, with each candidate's description and input schema
// so that a client can call it.
type discoverAnswer struct {
	Query           string                `json:"query"`
	Candidates      []discoveredCandidate `json:"candidates"`
	Authorized      int                   `json:"authorized"`
	ShortlistTokens int                   `json:"shortlist_tokens"`
	CatalogTokens   int                   `json:"catalog_tokens"`
	Reformulated    bool                  `json:"reformulated"`
}

type discoveredCandidate struct {
	Name        string          `json:"name"` // the tool's ID
	Score       float64         `json:"score"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// discoverHook answers POST /v1/discover with the shortlist of the tools
// the bearer may use (the view is authorized before any search, so nothing
// else can be returned).
func discoverHook(d *discovery.Discoverer, reg *tools.Registry) gateway.DiscoverFunc {
	return func(ctx context.Context, p tools.Principal, query string, k int) (any, error) {
		sl, err := d.Shortlist(ctx, reg.Snapshot().Authorize(p), discovery.Request{Query: query, K: k})
		if err != nil {
			return nil, err
		}
		out := discoverAnswer{Query: sl.Query, Candidates: []discoveredCandidate{}, Authorized: sl.Authorized,
			ShortlistTokens: sl.ShortlistTokens, CatalogTokens: sl.CatalogTokens, Reformulated: sl.Reformulated}
		for _, c := range sl.Candidates {
			desc := c.Tool.Description
			if desc == "" {
				desc = c.Tool.Card.Summary
			}
			out.Candidates = append(out.Candidates, discoveredCandidate{Name: c.Tool.ID, Score: math.Round(c.Score*1e4) / 1e4,
				Description: desc, InputSchema: c.Tool.InputSchema})
		}
		return out, nil
	}
}

func purgeLoop(ctx context.Context, gw *gateway.Gateway, log *slog.Logger) {
	tick := time.NewTicker(purgeEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			st, err := gw.Purge(ctx, auditRetention)
			if err != nil {
				log.Error("transfer serve: purge failed", "error", err)
				continue
			}
			log.Info("transfer serve: purged", "records", st.Records, "approvals", st.Approvals, "audit", st.Audit)
		}
	}
}
