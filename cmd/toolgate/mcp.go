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
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/runtime/mcpserver"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

func init() { commands["mcp"] = runMCP }

const mcpUsage = `usage: toolgate mcp serve [--tools F]... [--mcp "CMD ARGS"]... [--mcp-url URL]... [--mcp-config FILE] [--cards O]...
       [--principal P --tenant T --scopes a,b | --http ADDR --tokens FILE] [--data DIR] [--k 5]`

// runMCP is "toolgate mcp serve": progressive discovery and the gateway
// for any MCP client, over stdio (the principal from flags) or Streamable
// HTTP (the principal from each request's bearer token).
func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && cli.IsHelpFlag(args[0]) {
		args = []string{"serve", args[0]} // "toolgate mcp --help" is serve's usage
	}
	if len(args) == 0 || args[0] != "serve" {
		fmt.Fprintln(stderr, mcpUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("mcp serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var src catalogSources
	src.register(fs)
	principal := fs.String("principal", "", "principal `ID` the stdio client acts as")
	tenant := fs.String("tenant", "", "tenant of the stdio principal")
	scopes := fs.String("scopes", "", "comma-separated scopes of the stdio principal")
	addr := fs.String("http", "", "serve Streamable HTTP on `ADDR` (host:port) instead of stdio")
	tokenPath := fs.String("tokens", "", "bearer token `file` for --http: {\"tokens\":{\"<bearer>\":{\"principal\",\"tenant\",\"scopes\"}}}")
	data := fs.String("data", "", "`DIR` for the gateway's SQLite store (idempotency, approvals, audit); empty keeps it in memory")
	k := fs.Int("k", 5, "tools find_tools returns")
	verbose := fs.Bool("v", false, "log to stderr")
	if code, ok := parseFlags(fs, args[1:], stdout, stderr); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "toolgate mcp serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	case src.empty():
		fmt.Fprintln(stderr, "toolgate mcp serve: no catalog: give --tools, --mcp, --mcp-url or --mcp-config")
		return exitUsage
	case *addr == "" && (*principal == "" || *tenant == ""):
		fmt.Fprintln(stderr, "toolgate mcp serve: stdio needs --principal and --tenant (or serve --http with --tokens)")
		return exitUsage
	case *addr != "" && *tokenPath == "":
		fmt.Fprintln(stderr, "toolgate mcp serve: --http needs --tokens")
		return exitUsage
	case *k < 1:
		fmt.Fprintln(stderr, "toolgate mcp serve: --k must be at least 1")
		return exitUsage
	}
	log := quietLogger()
	if *verbose {
		log = slog.New(slog.NewTextHandler(stderr, nil))
	}

	reg, closeUpstreams, err := src.load(ctx, log)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate mcp serve: %s\n", firstLine(err))
		return exitUsage
	}
	defer closeUpstreams()
	src.cards.warn(stderr, "toolgate mcp serve")
	store, closeStore, err := openStore(ctx, *data)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate mcp serve: %s\n", firstLine(err))
		return exitUsage
	}
	defer closeStore()
	gw, err := gateway.New(reg, store, &gateway.Options{Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "toolgate mcp serve: %v\n", err)
		return exitUsage
	}
	disc, err := discovery.New(nil)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate mcp serve: %v\n", err)
		return exitUsage
	}
	opts := &mcpserver.Options{K: *k, Logger: log,
		Principal: tools.Principal{ID: *principal, Tenant: *tenant, Scopes: splitList(*scopes)}}

	if *addr == "" {
		srv, err := mcpserver.New(reg, disc, gw, opts)
		if err != nil {
			fmt.Fprintf(stderr, "toolgate mcp serve: %v\n", err)
			return exitUsage
		}
		if err := srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "toolgate mcp serve: %v\n", err)
			return exitNegative
		}
		return exitOK
	}

	tf, err := gateway.LoadTokenFile(*tokenPath)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate mcp serve: %s\n", firstLine(err))
		return exitUsage
	}
	opts.Authenticate = func(r *http.Request) (tools.Principal, error) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			return tools.Principal{}, mcpserver.ErrUnauthenticated
		}
		return tf.Authenticate(r.Context(), tok)
	}
	srv, err := mcpserver.New(reg, disc, gw, opts)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate mcp serve: %v\n", err)
		return exitUsage
	}
	h, err := srv.Handler()
	if err != nil {
		fmt.Fprintf(stderr, "toolgate mcp serve: %v\n", err)
		return exitUsage
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate mcp serve: %v\n", err)
		return exitUsage
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "toolgate mcp serve: %d tools, Streamable HTTP on http://%s\n", reg.Snapshot().Len(), ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "toolgate mcp serve: %v\n", err)
		return exitNegative
	}
	return exitOK
}

// openStore opens the gateway's store: SQLite in dir, or memory when dir is empty.
func openStore(ctx context.Context, dir string) (gateway.Store, func(), error) {
	if dir == "" {
		return memstore.New(), func() {}, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	st, err := sqlitestore.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		return nil, nil, err
	}
	return st, func() { st.Close() }, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
