package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/toolgate/toolgate/internal/httpdiscover"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/pgstore"
	"github.com/toolgate/toolgate/runtime/gateway/redisstore"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/tools/discovery"
)

func init() { commands["serve"] = runServe }

const serveUsage = `usage: toolgate serve [--tools F]... [--mcp "CMD ARGS"]... [--mcp-url URL]... [--mcp-config FILE]
       --tokens FILE (--data DIR | --store redis://…|postgres://…) [--addr HOST:PORT] [--tool-timeout 30s] [-v]

The HTTP gateway for agents not written in Go: POST /v1/tools/call, POST /v1/discover,
GET|POST /v1/approvals/{id}, GET /metrics, GET /healthz (docs/gateway.md). Tools from --mcp
upstreams execute through the gateway; tools of catalog files are discoverable only.
Prints "listening on http://ADDR" on stdout once it accepts connections.

example:
  toolgate serve --mcp "memory=npx -y @modelcontextprotocol/server-memory" --tokens tokens.json --data ./toolgate-data`

// serveDrain bounds how long SIGTERM waits for in-flight calls; a handler
// still running after it is recorded as uncertain by its lease, and a
// retry re-runs it with the same key.
const serveDrain = 30 * time.Second

// runServe: toolgate serve. Exit 0 after a clean shutdown (SIGINT,
// SIGTERM), 1 when serving fails, 2 for usage or input errors.
func runServe(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var src catalogSources
	src.register(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address `HOST:PORT`")
	tokens := fs.String("tokens", "", "bearer token `file`: {\"tokens\":{\"<bearer>\":{\"principal\",\"tenant\",\"scopes\":[...]}}}")
	data := fs.String("data", "", "`DIR` for the SQLite store gateway.db (created when missing)")
	storeSpec := fs.String("store", "", "shared store instead of SQLite: redis://HOST:PORT/DB or postgres://USER@HOST:PORT/DB")
	toolTimeout := fs.Duration("tool-timeout", 30*time.Second, "how long a tool call may run")
	verbose := fs.Bool("v", false, "log requests and decisions to stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, serveUsage)
			return exitOK
		}
		fmt.Fprintf(stderr, "toolgate serve: %v\n", err)
		return exitUsage
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "toolgate serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	case src.empty():
		fmt.Fprintln(stderr, "toolgate serve: no catalog: give --tools, --mcp, --mcp-url or --mcp-config")
		return exitUsage
	case *tokens == "":
		fmt.Fprintln(stderr, "toolgate serve: --tokens FILE is required")
		return exitUsage
	case *data == "" && *storeSpec == "":
		fmt.Fprintln(stderr, "toolgate serve: --data DIR (SQLite) or --store URL is required")
		return exitUsage
	case *toolTimeout <= 0:
		fmt.Fprintln(stderr, "toolgate serve: --tool-timeout must be positive")
		return exitUsage
	}
	auth, err := gateway.LoadTokenFile(*tokens)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate serve: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := quietLogger()
	if *verbose {
		log = slog.New(slog.NewTextHandler(stderr, nil))
	}
	reg, closeUpstreams, err := src.load(ctx, log)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate serve: %s\n", firstLine(err))
		return exitUsage
	}
	defer closeUpstreams()
	store, closeStore, err := openServeStore(ctx, *storeSpec, *data)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate serve: %s\n", firstLine(err))
		return exitUsage
	}
	defer closeStore()
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	const leaseGrace = 5 * time.Second
	gw, err := gateway.New(reg, store, &gateway.Options{Logger: log, Registerer: metrics,
		DefaultTimeout: *toolTimeout, LeaseGrace: leaseGrace})
	if err != nil {
		fmt.Fprintf(stderr, "toolgate serve: %v\n", err)
		return exitUsage
	}
	disc, err := discovery.New(nil)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate serve: %v\n", err)
		return exitUsage
	}
	h := gateway.NewHTTPHandler(gw, auth, &gateway.HTTPOptions{Gatherer: metrics, Logger: log,
		Discover: httpdiscover.Hook(disc, reg)})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate serve: %v\n", err)
		return exitNegative
	}
	srv := gateway.NewHTTPServer(*addr, h, *toolTimeout+leaseGrace+30*time.Second)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	log.Info("toolgate serve: ready", "addr", ln.Addr().String(), "tools", reg.Snapshot().Len(), "principals", auth.Len())

	select {
	case err := <-served:
		fmt.Fprintf(stderr, "toolgate serve: %v\n", err)
		return exitNegative
	case <-ctx.Done():
	}
	log.Info("toolgate serve: shutting down; in-flight calls finish first")
	// In-flight calls finish (their handlers run detached from the
	// client) and are recorded before the stores close.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), serveDrain)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "toolgate serve: shutdown: %v\n", err)
		return exitNegative
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "toolgate serve: %v\n", err)
		return exitNegative
	}
	return exitOK
}

// openServeStore opens the gateway store: SQLite gateway.db in dir by
// default, Redis or PostgreSQL when spec names one (several serve
// processes then share claims, approvals, audit and rate limits).
func openServeStore(ctx context.Context, spec, dir string) (gateway.Store, func(), error) {
	scheme, _, _ := strings.Cut(spec, "://")
	switch {
	case spec == "":
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, nil, err
		}
		st, err := sqlitestore.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
		if err != nil {
			return nil, nil, err
		}
		return st, func() { st.Close() }, nil
	case scheme == "redis" || scheme == "rediss":
		st, err := redisstore.Open(ctx, spec, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("--store %s: %v", redactURL(spec), err)
		}
		return st, func() { st.Close() }, nil
	case scheme == "postgres" || scheme == "postgresql":
		st, err := pgstore.Open(ctx, spec, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("--store %s: %v", redactURL(spec), err)
		}
		return st, func() { st.Close() }, nil
	}
	return nil, nil, fmt.Errorf("--store %q: want redis://…, rediss://…, postgres://… or postgresql://…", redactURL(spec))
}

// redactURL hides a URL's password.
func redactURL(spec string) string {
	u, err := url.Parse(spec)
	if err != nil || u.Scheme == "" {
		if strings.Contains(spec, "@") {
			return "(unparsable URL)"
		}
		return spec
	}
	return u.Redacted()
}
