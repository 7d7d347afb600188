package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/storeurl"
	"github.com/toolgate/toolgate/runtime/server"
)

func init() {
	commands["serve"] = runServe
	helps["serve"] = cli.Usage{
		Synopsis: `toolgate serve (--tokens FILE | --oauth-issuer URL --oauth-audience URI) [--addr HOST:PORT] [--tools F]... [--mcp "CMD ARGS"]... [--mcp-url URL]...` + "\n       " +
			`[--mcp-config FILE] [--cards O]... [--data DIR | --store redis://…|postgres://…] [--tool-timeout 30s] [--lease-grace 5s]` + "\n       " +
			`[--pins FILE [--unpinned quarantine|allow|refuse]] [--uncertain rerun|reconcile] [--uncertain-tool ID=rerun|reconcile]...` + "\n       " +
			`[--discovery-log FILE] [--offer-unconnected] [--embed-model M [--embed-url URL]]`,
		Summary: "Serve the HTTP gateway (POST /v1/tools/call, /v1/discover, approvals, /metrics, /healthz) over catalogs and upstream MCP servers; SIGTERM stops it gracefully.",
		Examples: []string{
			`toolgate serve --tokens tokens.json --data ./gw --mcp "memory=npx -y @modelcontextprotocol/server-memory"`,
			`toolgate serve --tokens tokens.json --tools github=github.json --store redis://127.0.0.1:6379/0 --addr 0.0.0.0:8080`,
			`toolgate serve --tokens tokens.json --data ./gw --mcp "pay=./payments-mcp" --uncertain-tool pay/send_payment=reconcile`,
			`toolgate serve --tokens tokens.json --data ./gw --tools github=github.json --discovery-log discovery.jsonl`,
			`toolgate serve --oauth-issuer https://id.example.com --oauth-audience https://gw.example.com --data ./gw --mcp-config servers.json`,
		},
	}
}

// runServe is "toolgate serve": the HTTP gateway (POST /v1/tools/call,
// POST /v1/discover, the approvals endpoints, GET /metrics, GET /healthz)
// over catalog files and upstream MCP servers, for agents not written in
// Go. Tools with a handler are the upstream servers'. A catalog file's
// tools have none: /v1/discover does not offer them unless
// --offer-unconnected, and a call of one is refused 404 UNKNOWN_TOOL with
// code SERVER_NOT_CONNECTED.
func runServe(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	const prog = "toolgate serve"
	fs, sf := serverFlagSet("serve")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address `HOST:PORT`")
	tokenPath := fs.String("tokens", "", "bearer token `file`: {\"tokens\":{\"<bearer>\":{\"principal\",\"tenant\",\"scopes\"}}}")
	var oa oauthFlags
	oa.register(fs)
	data := fs.String("data", "", "`DIR` for the SQLite store gateway.db (created when missing)")
	storeSpec := fs.String("store", "", "shared store for several replicas: redis://HOST:PORT/DB or postgres://USER@HOST:PORT/DB (default: SQLite in --data)")
	toolTimeout := fs.Duration("tool-timeout", 30*time.Second, "how long a tool call may run")
	leaseGrace := fs.Duration("lease-grace", 5*time.Second, "added to --tool-timeout to form a claim's lease")
	shutdown := fs.Duration("shutdown-timeout", 30*time.Second, "how long calls in flight may finish after SIGTERM")
	uncertain := fs.String("uncertain", "rerun", "what a retry of a call whose earlier outcome is unknown (a timeout, a crash) gets: `rerun` runs the tool again with the same idempotency key, which the tool must deduplicate; reconcile refuses with 409 OUTCOME_UNCERTAIN until the record expires")
	var uncertainTools multiFlag
	fs.Var(&uncertainTools, "uncertain-tool", "`ID=POLICY` overrides --uncertain for one tool (rerun or reconcile), e.g. reconcile for a tool whose downstream cannot deduplicate; repeatable")
	var origins multiFlag
	fs.Var(&origins, "allow-origin", "an `ORIGIN` (https://app.example.com) besides the server's own whose browser pages may call it; any other Origin header is refused with 403 on every endpoint; repeatable")
	verbose := fs.Bool("v", false, "log at debug level")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := sf.flagsErr(fs); err != nil {
		return fail(stderr, prog, err)
	}
	switch {
	case *tokenPath == "" && !oa.enabled():
		return fail(stderr, prog, errors.New("--tokens FILE or --oauth-issuer URL is required"))
	case oa.check(*tokenPath) != nil:
		return fail(stderr, prog, oa.check(*tokenPath))
	case *storeSpec == "" && *data == "":
		return fail(stderr, prog, errors.New("give --data DIR (SQLite) or --store URL"))
	case *storeSpec != "" && *data != "":
		return fail(stderr, prog, errors.New("give --data DIR (SQLite) or --store URL, not both: the store would leave --data unused"))
	case listenAddrErr("addr", *addr) != nil:
		return fail(stderr, prog, listenAddrErr("addr", *addr))
	case *toolTimeout <= 0 || *leaseGrace <= 0 || *shutdown <= 0:
		return fail(stderr, prog, errors.New("--tool-timeout, --lease-grace and --shutdown-timeout must be positive"))
	}
	if _, _, err := server.UncertainPolicies(*uncertain, uncertainTools, nil); err != nil {
		return fail(stderr, prog, err)
	}
	var auth server.Authenticator
	if *tokenPath != "" {
		tf, err := server.LoadTokenFile(*tokenPath)
		if err != nil {
			return failLine(stderr, prog, err)
		}
		auth = tf
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	sv, ok := sf.open(ctx, log, stderr, prog)
	if !ok {
		return exitUsage
	}
	defer sv.close()
	reg, disc, metrics := sv.reg, sv.disc, sv.metrics
	policy, perTool, err := server.UncertainPolicies(*uncertain, uncertainTools, reg.Snapshot())
	if err != nil {
		return fail(stderr, prog, err)
	}
	var wrap func(http.Handler) http.Handler
	if oa.enabled() {
		v, err := oa.verifier(ctx, reg.Snapshot(), log, metrics)
		if err != nil {
			return failLine(stderr, prog, err)
		}
		auth, wrap = v, v.Protect
	}
	if *data != "" {
		if err := os.MkdirAll(*data, 0o700); err != nil {
			return fail(stderr, prog, err)
		}
	}
	st, err := storeurl.Open(ctx, *storeSpec, *data)
	if err != nil {
		return failLine(stderr, prog, err)
	}
	defer st.Close()
	gw, err := gateway.New(reg, st, &gateway.Options{Logger: log, Registerer: metrics,
		DefaultTimeout: *toolTimeout, LeaseGrace: *leaseGrace, Uncertain: policy, UncertainTools: perTool})
	if err != nil {
		return fail(stderr, prog, err)
	}
	err = server.Run(ctx, server.Config{
		Addr: *addr, AllowedOrigins: origins, Gateway: gw, Registry: reg, Auth: auth, Wrap: wrap, Discoverer: disc, OfferUnconnected: *sf.offerUnconnected, Gatherer: metrics, Logger: log,
		WriteTimeout: *toolTimeout + *leaseGrace + 30*time.Second, ShutdownTimeout: *shutdown,
		Ready: func(a net.Addr) {
			fmt.Fprintf(stdout, "listening on http://%s (%d tools, store %s)\n", a, reg.Snapshot().Len(), storeurl.Name(*storeSpec))
		},
	})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return exitNegative
	}
	return exitOK
}
