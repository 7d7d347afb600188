package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/mcpserver"
	"github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/runtime/server/oauth"
	"github.com/toolgate/toolgate/tools"
)

func init() { commands["mcp"] = runMCP }

// The synopses of the mcp commands (their helps entries are in help.go).
const (
	mcpServeSynopsis = `toolgate mcp serve [--tools F]... [--mcp "CMD ARGS"]... [--mcp-url URL]... [--mcp-config FILE] [--cards O]...
       [--principal P --tenant T --scopes a,b | --http ADDR (--tokens FILE | --oauth-issuer URL --oauth-audience URI)
       [--max-sessions 1024] [--max-sessions-per-principal 32] [--session-timeout 10m] [--allow-origin O]...] [--data DIR] [--shutdown-timeout 30s] [--k 5] [-v]
       [--pins FILE [--unpinned quarantine|allow|refuse]] [--discovery-log FILE] [--offer-unconnected] [--embed-model M [--embed-url URL]]`
	mcpApproveSynopsis = `toolgate mcp approve --data DIR --principal P --tenant T [--show | --deny] APPROVAL_ID`
	mcpUsage           = "usage: " + mcpServeSynopsis + "\n       " + mcpApproveSynopsis + "\n       " + mcpPinSynopsis
)

// runMCP is "toolgate mcp serve", "toolgate mcp approve" and "toolgate mcp
// pin"; "toolgate mcp --help" names the three (each one's --help lists its
// flags).
func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && cli.IsHelpFlag(args[0]) {
		cli.PrintUsage(stdout, nil, helps["mcp"])
		return exitOK
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, mcpUsage)
		return exitUsage
	}
	switch args[0] {
	case "serve":
		return runMCPServe(ctx, args[1:], stdin, stdout, stderr)
	case "approve":
		return runMCPApprove(ctx, args[1:], stdout, stderr)
	case "pin":
		return runMCPPin(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "toolgate mcp: unknown command %q (serve, approve or pin); see \"toolgate help mcp\"\n", args[0])
	return exitUsage
}

// runMCPServe is "toolgate mcp serve": progressive discovery and the gateway
// for any MCP client, over stdio (the principal from flags) or Streamable
// HTTP (the principal from each request's bearer token).
func runMCPServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	const serveProg = "toolgate mcp serve"
	fs, sf := serverFlagSet("mcp serve")
	principal := fs.String("principal", "", "principal `ID` the stdio client acts as")
	tenant := fs.String("tenant", "", "tenant of the stdio principal")
	scopes := fs.String("scopes", "", "comma-separated scopes of the stdio principal")
	addr := fs.String("http", "", "serve Streamable HTTP on `ADDR` (host:port) instead of stdio")
	tokenPath := fs.String("tokens", "", "bearer token `file` for --http: {\"tokens\":{\"<bearer>\":{\"principal\",\"tenant\",\"scopes\"}}}")
	var oa oauthFlags
	oa.register(fs)
	data := fs.String("data", "", "`DIR` for the gateway's SQLite store (idempotency, approvals, audit); empty keeps it in memory")
	maxSessions := fs.Int("max-sessions", mcpserver.DefaultMaxSessions, "HTTP sessions open at once, all principals together (beyond: 429)")
	maxPerPrincipal := fs.Int("max-sessions-per-principal", mcpserver.DefaultMaxSessionsPerPrincipal, "HTTP sessions one principal holds open at once (beyond: 429)")
	sessionTimeout := fs.Duration("session-timeout", mcpserver.DefaultSessionTimeout, "close an HTTP session after this long without a POST (an open event stream does not count)")
	shutdown := fs.Duration("shutdown-timeout", 30*time.Second, "how long calls in flight may finish after SIGTERM or SIGINT (with --http), and outcomes the store failed to record may still be recorded")
	var origins multiFlag
	fs.Var(&origins, "allow-origin", "with --http, an `ORIGIN` (https://app.example.com) besides the server's own whose browser pages may call it; any other Origin header is refused with 403; repeatable")
	k := fs.Int("k", 5, "tools find_tools returns")
	verbose := fs.Bool("v", false, "log to stderr")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := sf.flagsErr(fs); err != nil {
		return fail(stderr, serveProg, err)
	}
	switch {
	case *addr == "" && (*principal == "" || *tenant == ""):
		return fail(stderr, serveProg, errors.New("stdio needs --principal and --tenant (or serve --http with --tokens)"))
	case *addr != "" && listenAddrErr("http", *addr) != nil:
		return fail(stderr, serveProg, listenAddrErr("http", *addr))
	case *addr != "" && *tokenPath == "" && !oa.enabled():
		return fail(stderr, serveProg, errors.New("--http needs --tokens or --oauth-issuer"))
	case *addr == "" && oa.enabled():
		return fail(stderr, serveProg, errors.New("the --oauth flags need --http"))
	case oa.check(*tokenPath) != nil:
		return fail(stderr, serveProg, oa.check(*tokenPath))
	case *k < 1:
		return fail(stderr, serveProg, errors.New("--k must be at least 1"))
	case *maxSessions < 1 || *maxPerPrincipal < 1:
		return fail(stderr, serveProg, errors.New("--max-sessions and --max-sessions-per-principal must be at least 1"))
	case *sessionTimeout <= 0 || *shutdown <= 0:
		return fail(stderr, serveProg, errors.New("--session-timeout and --shutdown-timeout must be positive"))
	}
	// The token file is checked before any upstream server starts.
	var tf *server.TokenFile
	if *addr != "" && *tokenPath != "" {
		var err error
		if tf, err = server.LoadTokenFile(*tokenPath); err != nil {
			return failLine(stderr, serveProg, err)
		}
	}
	log := quietLogger()
	if *verbose {
		log = slog.New(slog.NewTextHandler(stderr, nil))
	}

	// SIGTERM (how a service manager stops a server, and the MCP stdio
	// shutdown's step after closing stdin) drains the calls in flight as
	// SIGINT does, as serve does: the process returns only once they are
	// answered and recorded.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	// Over HTTP the metrics are served at GET /metrics, as serve does;
	// over stdio nothing reads them.
	sv, ok := sf.open(ctx, log, stderr, serveProg)
	if !ok {
		return exitUsage
	}
	defer sv.close()
	reg, disc, metrics := sv.reg, sv.disc, sv.metrics
	store, closeStore, err := openStore(ctx, *data)
	if err != nil {
		return failLine(stderr, serveProg, err)
	}
	defer closeStore()
	gw, err := gateway.New(reg, store, &gateway.Options{Logger: log, Registerer: metrics})
	if err != nil {
		return fail(stderr, serveProg, err)
	}
	opts := &mcpserver.Options{K: *k, Logger: log, Registerer: metrics, OfferUnconnected: *sf.offerUnconnected,
		MaxSessions: *maxSessions, MaxSessionsPerPrincipal: *maxPerPrincipal, SessionTimeout: *sessionTimeout,
		AllowedOrigins: origins, Principal: tools.Principal{ID: *principal, Tenant: *tenant, Scopes: splitList(*scopes)}}
	if opts.HasApprover, err = approvers(*addr != "", *data != "", *tokenPath, oa.enabled()); err != nil {
		return failLine(stderr, serveProg, err)
	}
	if *data != "" {
		if opts.StateKey, err = stateKey(*data); err != nil {
			return failLine(stderr, serveProg, err)
		}
	}

	if *addr == "" {
		srv, err := mcpserver.New(reg, disc, gw, opts)
		if err != nil {
			return fail(stderr, serveProg, err)
		}
		err = srv.ServeStdio(ctx, stdin, termtext.Raw(stdout))
		// The session is over and its calls answered; outcomes the store
		// failed to record get --shutdown-timeout to be recorded, as over
		// HTTP.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), *shutdown)
		defer cancel()
		if cerr := gw.Close(cctx); cerr != nil {
			fmt.Fprintf(stderr, "%s: %v (their leases expire to uncertain)\n", serveProg, cerr)
			return exitNegative
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "%s: %v\n", serveProg, err)
			return exitNegative
		}
		return exitOK
	}

	var auth server.Authenticator = tf
	var verifier *oauth.Verifier
	if oa.enabled() {
		if verifier, err = oa.verifier(ctx, reg.Snapshot(), log, metrics); err != nil {
			return failLine(stderr, serveProg, err)
		}
		auth = verifier
	}
	opts.Authenticate = bearerAuth(auth)
	// The Origin check comes first: a browser page of another origin gets
	// 403, not the verifier's 401 challenge, nor /metrics.
	opts.Wrap = func(h http.Handler) http.Handler {
		if verifier != nil {
			h = verifier.Protect(h)
		}
		return withMetrics(h, metrics)
	}
	srv, err := mcpserver.New(reg, disc, gw, opts)
	if err != nil {
		return fail(stderr, serveProg, err)
	}
	h, err := srv.Handler()
	if err != nil {
		return fail(stderr, serveProg, err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail(stderr, serveProg, err)
	}
	hs := mcpHTTPServer(h)
	fmt.Fprintf(stderr, "%s: %d tools, Streamable HTTP on http://%s (approvals at %s{approval_id})\n",
		serveProg, reg.Snapshot().Len(), ln.Addr(), mcpserver.ApprovalsPath)
	if err := server.Serve(ctx, hs, ln, gw, *shutdown, log); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", serveProg, err)
		return exitNegative
	}
	return exitOK
}

// mcpHTTPServer is the HTTP server of "mcp serve --http": the gateway's
// timeouts (headers 5s, the whole request 30s, so a body sent one byte at a
// time is cut off; answers 2 minutes, beyond the gateway's default tool
// timeout and lease grace; event streams are exempt from the write timeout).
func mcpHTTPServer(h http.Handler) *http.Server {
	return server.NewHTTPServer("", h, 0)
}

// withMetrics serves GET /metrics from r in front of h, unauthenticated
// like serve's /metrics (its labels are bounded: tool IDs, outcomes and
// reasons, never a principal, token or session), outside the OAuth
// verifier so a scraper needs no token.
func withMetrics(h http.Handler, r *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(r, promhttp.HandlerOpts{}))
	mux.Handle("/", h)
	return mux
}

// runMCPApprove is "toolgate mcp approve": grant (or deny) a held call in the --data
// store of "mcp serve", as an operator principal (access to the store is
// the operator's authority; the gateway still refuses the requester itself).
func runMCPApprove(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const approveProg = "toolgate mcp approve"
	fs := flag.NewFlagSet("mcp approve", flag.ContinueOnError)
	data := fs.String("data", "", "the `DIR` \"mcp serve --data\" uses")
	principal := fs.String("principal", "", "the approver's principal `ID` (not the requester)")
	tenant := fs.String("tenant", "", "the approver's tenant (the requester's)")
	show := fs.Bool("show", false, "print the approval without granting it")
	deny := fs.Bool("deny", false, "deny the approval instead of granting it: the call it covers is refused until the approval expires")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	switch {
	case fs.NArg() != 1:
		return fail(stderr, approveProg, errors.New("give one APPROVAL_ID"))
	case *data == "":
		return fail(stderr, approveProg, errors.New("--data is required (the store of mcp serve)"))
	case *principal == "" || *tenant == "":
		return fail(stderr, approveProg, errors.New("--principal and --tenant are required"))
	case *show && *deny:
		return fail(stderr, approveProg, errors.New("give --show or --deny, not both"))
	}
	if _, err := os.Stat(filepath.Join(*data, "gateway.db")); err != nil {
		fmt.Fprintf(stderr, "%s: no gateway store in %s\n", approveProg, *data)
		return exitUsage
	}
	st, closeStore, err := openStore(ctx, *data)
	if err != nil {
		return failLine(stderr, approveProg, err)
	}
	defer closeStore()
	// Approving needs the store only: the tool and its arguments are in the approval.
	gw, err := gateway.New(tools.NewRegistry(), st, &gateway.Options{Logger: quietLogger()})
	if err != nil {
		return fail(stderr, approveProg, err)
	}
	approver := tools.Principal{ID: *principal, Tenant: *tenant, Scopes: []string{gateway.ApprovalScope}}
	var a *store.Approval
	switch {
	case *show:
		a, err = gw.Approval(ctx, approver, fs.Arg(0))
	case *deny:
		a, err = gw.Deny(ctx, approver, fs.Arg(0))
	default:
		a, err = gw.Approve(ctx, approver, fs.Arg(0))
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", approveProg, firstLine(err))
		return exitNegative
	}
	out, _ := json.Marshal(a)
	fmt.Fprintln(stdout, string(out))
	return exitOK
}

// stateKeyFile is the file in --data that holds the key signing held
// calls' request states, so that a restart (or another server on the
// same --data) resumes them.
const stateKeyFile = "mcp-state.key"

// stateKey returns the request-state key in dir, creating it (32 random
// bytes, mode 0600) on first use.
func stateKey(dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, stateKeyFile)
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, 32)
		rand.Read(key)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) { // another server created it first
			return stateKey(dir)
		}
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(key); err != nil {
			f.Close()
			return nil, err
		}
		return key, f.Close()
	}
	if err != nil {
		return nil, err
	}
	if len(key) < 32 {
		return nil, fmt.Errorf("%s: the request-state key is %d bytes, want at least 32 (delete it to make a new one)", path, len(key))
	}
	return key, nil
}

// approvers decides who can grant a held call on this server
// ([mcpserver.Options.HasApprover]): with --data, an operator with the
// store (toolgate mcp approve); over HTTP with OAuth, any token holder the
// issuer gives approvals:grant; over HTTP with --tokens, a principal of
// the file, of the requester's tenant, holding approvals:grant, other
// than the requester. Otherwise (stdio without --data) no one.
func approvers(overHTTP, withData bool, tokenPath string, oauth bool) (func(context.Context, tools.Principal) bool, error) {
	yes := func(context.Context, tools.Principal) bool { return true }
	switch {
	case withData || (overHTTP && oauth):
		return yes, nil
	case !overHTTP:
		return func(context.Context, tools.Principal) bool { return false }, nil
	}
	data, err := os.ReadFile(tokenPath)
	if err != nil {
		return nil, err
	}
	var file struct {
		Tokens map[string]tools.Principal `json:"tokens"`
	}
	if err := json.Unmarshal(data, &file); err != nil { // LoadTokenFile checked it strictly
		return nil, err
	}
	grantors := map[[2]string]bool{} // tenant, principal
	for _, p := range file.Tokens {
		if p.HasScope(gateway.ApprovalScope) {
			grantors[[2]string{p.Tenant, p.ID}] = true
		}
	}
	return func(_ context.Context, requester tools.Principal) bool {
		for k := range grantors {
			if k[0] == requester.Tenant && k[1] != requester.ID {
				return true
			}
		}
		return false
	}, nil
}

// openStore opens the gateway's store: SQLite in dir, or memory when dir is empty.
func openStore(ctx context.Context, dir string) (store.Store, func(), error) {
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
