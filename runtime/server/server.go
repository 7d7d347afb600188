// Package serve runs the HTTP gateway of docs/design.md as a program, for
// agents not written in Go: POST /v1/tools/call and the approvals endpoints
// (runtime/gateway's handler), POST /v1/discover answered by discovery over
// the bearer's authorized view, GET /metrics and GET /healthz, on an
// http.Server with the contract's timeouts, a periodic purge, and a
// graceful shutdown when the context ends (SIGTERM in the programs).
//
// `toolgate serve` and `examples/transfer serve` are built on it:
//
//	st, err := serve.OpenStore(ctx, "", dataDir) // or redis://…, postgres://…
//	...
//	g, err := gateway.New(reg, st, &gateway.Options{Registerer: metrics})
//	err = serve.Run(ctx, serve.Config{Addr: "127.0.0.1:8080", Gateway: g, Registry: reg,
//		Auth: tokens, Gatherer: metrics})
//
// On shutdown the listener closes at once; calls in flight get
// ShutdownTimeout to finish and record their outcome, and outcomes the
// store failed to record (the gateway holds them) get what is left of it
// (gateway.Gateway.Close). A call still running, or an outcome still
// unrecorded, after that keeps its claim, whose lease then expires: a
// retry with the same key finds it uncertain (the gateway's recording
// table), never a silent second execution.
package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/pgstore"
	"github.com/toolgate/toolgate/runtime/gateway/redisstore"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// Config is what Run serves. Gateway, Registry and Auth are required.
type Config struct {
	// Addr is the listen address HOST:PORT; ignored when Listener is set.
	Addr string
	// Listener, when set, is served instead of listening on Addr.
	Listener net.Listener
	// Gateway executes the calls; Registry is the catalog it runs over
	// (discovery searches its current snapshot).
	Gateway  *gateway.Gateway
	Registry *tools.Registry
	// Auth maps bearer tokens to principals (gateway.LoadTokenFile, or an
	// oauth.Verifier).
	Auth gateway.Authenticator
	// Wrap, when set, wraps the gateway's handler: oauth.Verifier.Protect
	// adds the protected-resource metadata and the OAuth challenges.
	Wrap func(http.Handler) http.Handler
	// Discoverer answers POST /v1/discover, and is told of every call
	// (Discoverer.RecordOutcome), so that its log and metrics link the
	// tool a client called to the query of the same "session_id". Nil
	// means discovery.New(nil). Give one built with a Log and the
	// Registerer whose metrics Gatherer serves to see discovery from a
	// running server (`toolgate serve --discovery-log`).
	Discoverer *discovery.Discoverer
	// OfferUnconnected makes POST /v1/discover return the tools that
	// cannot run (no handler: a catalog file's tools with no server
	// connected, [tools.Tool.Runnable]), for a catalog that is there for
	// discovery only; a call of one is still refused 404 UNKNOWN_TOOL with
	// code [gateway.CodeServerNotConnected]. False (the zero value) never
	// returns them.
	OfferUnconnected bool
	// Gatherer serves GET /metrics. Nil means no /metrics.
	Gatherer prometheus.Gatherer
	// WriteTimeout bounds an answer; it must exceed the longest tool
	// timeout plus its lease grace. Zero means the gateway's default.
	WriteTimeout time.Duration
	// ShutdownTimeout is how long calls in flight may finish after ctx
	// ends. Zero means 30 seconds.
	ShutdownTimeout time.Duration
	// PurgeEvery is how often expired records, approvals, buckets and
	// audit entries older than AuditRetention are removed. Zero means 10
	// minutes; negative turns the purge off.
	PurgeEvery time.Duration
	// AuditRetention is how long audit entries are kept. Zero means 30 days.
	AuditRetention time.Duration
	// Logger receives the server's log. Nil means slog.Default().
	Logger *slog.Logger
	// Ready, when set, is called with the listening address once the
	// server accepts connections.
	Ready func(net.Addr)
}

// Run serves cfg until ctx ends, then shuts down gracefully. It returns
// nil after a clean shutdown, or the error that stopped it.
func Run(ctx context.Context, cfg Config) error {
	switch {
	case cfg.Gateway == nil:
		return errors.New("serve: Config.Gateway is nil")
	case cfg.Registry == nil:
		return errors.New("serve: Config.Registry is nil")
	case cfg.Auth == nil:
		return errors.New("serve: Config.Auth is nil")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	disc := cfg.Discoverer
	if disc == nil {
		var err error
		if disc, err = discovery.New(nil); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
	}
	ln := cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
	}
	handler := gateway.NewHTTPHandler(cfg.Gateway, cfg.Auth, &gateway.HTTPOptions{
		Gatherer: cfg.Gatherer, Logger: log, Discover: Discover(disc, cfg.Registry, cfg.OfferUnconnected), Called: Called(disc, cfg.Registry)})
	if cfg.Wrap != nil {
		handler = cfg.Wrap(handler)
	}
	srv := gateway.NewHTTPServer(ln.Addr().String(), handler, cfg.WriteTimeout)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	purgeCtx, stopPurge := context.WithCancel(ctx)
	defer stopPurge()
	if cfg.PurgeEvery >= 0 {
		go purgeLoop(purgeCtx, cfg.Gateway, log, or(cfg.PurgeEvery, 10*time.Minute), or(cfg.AuditRetention, 30*24*time.Hour))
	}
	log.Info("serve: ready", "addr", ln.Addr().String())
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr())
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("serve: shutting down; calls in flight may finish")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), or(cfg.ShutdownTimeout, 30*time.Second))
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("serve: shutdown: %w (calls still running keep their claims; their leases expire to uncertain)", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	// Outcomes the store failed to record get what is left of the
	// shutdown's time to be recorded.
	if err := cfg.Gateway.Close(sctx); err != nil {
		return fmt.Errorf("serve: %w (their leases expire to uncertain)", err)
	}
	return nil
}

// UncertainPolicies reads the uncertain-outcome policy flags of `toolgate
// serve`: def, the default ("rerun" or "reconcile"; "" is rerun), and
// perTool, overrides written ID=POLICY, for gateway.Options.Uncertain and
// UncertainTools. An override must name a tool of snap: a misspelt ID
// would silently leave its tool on the default. A nil snap checks only the
// syntax.
func UncertainPolicies(def string, perTool []string, snap *tools.Snapshot) (gateway.UncertainPolicy, map[string]gateway.UncertainPolicy, error) {
	if def == "" {
		def = "rerun"
	}
	p, err := gateway.ParseUncertainPolicy(def)
	if err != nil {
		return 0, nil, fmt.Errorf("--uncertain: %w", err)
	}
	var over map[string]gateway.UncertainPolicy
	for _, kv := range perTool {
		id, name, ok := strings.Cut(kv, "=")
		if !ok || id == "" {
			return 0, nil, fmt.Errorf("--uncertain-tool %q: want ID=rerun or ID=reconcile", kv)
		}
		tp, err := gateway.ParseUncertainPolicy(name)
		if err != nil {
			return 0, nil, fmt.Errorf("--uncertain-tool %s: %w", id, err)
		}
		if snap != nil {
			if i, found := snap.Lookup(id); !found || snap.Tool(i).ID != id {
				return 0, nil, fmt.Errorf("--uncertain-tool %s: no tool with that ID", id)
			}
		}
		if _, dup := over[id]; dup {
			return 0, nil, fmt.Errorf("--uncertain-tool %s: given twice", id)
		}
		if over == nil {
			over = map[string]gateway.UncertainPolicy{}
		}
		over[id] = tp
	}
	return p, over, nil
}

func or(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func purgeLoop(ctx context.Context, gw *gateway.Gateway, log *slog.Logger, every, auditRetention time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			st, err := gw.Purge(ctx, auditRetention)
			if err != nil {
				log.Error("serve: purge failed", "error", err)
				continue
			}
			log.Info("serve: purged", "records", st.Records, "approvals", st.Approvals, "audit", st.Audit)
		}
	}
}

// Answer is the body of POST /v1/discover: the `toolgate discover --format
// json` shape, with each candidate's description and input schema so that
// a client can call it.
type Answer struct {
	Query           string      `json:"query"`
	Candidates      []Candidate `json:"candidates"`
	Authorized      int         `json:"authorized"`
	ShortlistTokens int         `json:"shortlist_tokens"`
	CatalogTokens   int         `json:"catalog_tokens"`
	Reformulated    bool        `json:"reformulated"`
}

// Candidate is one tool of an Answer.
type Candidate struct {
	Name        string          `json:"name"` // the tool's ID
	Score       float64         `json:"score"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Discover returns the gateway's POST /v1/discover hook: the shortlist of
// the tools the bearer may use that can run (all of them, those without a
// handler too, when offerUnconnected: Config.OfferUnconnected). The view
// is authorized before any search, so nothing else can be returned. The
// request's session goes to the discovery log (discovery.Request.Session),
// where Called's record of the tool finally called is linked to it.
func Discover(d *discovery.Discoverer, reg *tools.Registry, offerUnconnected bool) gateway.DiscoverFunc {
	return func(ctx context.Context, p tools.Principal, req gateway.DiscoverRequest) (any, error) {
		view := reg.Snapshot().Authorize(p)
		if !offerUnconnected {
			view = view.Filter((*tools.Tool).Runnable)
		}
		sl, err := d.Shortlist(ctx, view,
			discovery.Request{Query: req.Query, K: req.K, Session: req.SessionID, Source: discovery.SourceTurn})
		if err != nil {
			return nil, err
		}
		out := Answer{Query: sl.Query, Candidates: []Candidate{}, Authorized: sl.Authorized,
			ShortlistTokens: sl.ShortlistTokens, CatalogTokens: sl.CatalogTokens, Reformulated: sl.Reformulated}
		for _, c := range sl.Candidates {
			desc := c.Tool.Description
			if desc == "" {
				desc = c.Tool.Card.Summary
			}
			out.Candidates = append(out.Candidates, Candidate{Name: c.Tool.ID, Score: math.Round(c.Score*1e4) / 1e4,
				Description: desc, InputSchema: c.Tool.InputSchema})
		}
		return out, nil
	}
}

// Called returns the gateway's hook for calls (gateway.HTTPOptions.Called):
// it records the tool a client called as an outcome of its session
// (discovery.SourceCall), whatever the gateway answered, since the client
// chose that tool. RecordOutcome leaves out a tool the caller may not use.
func Called(d *discovery.Discoverer, reg *tools.Registry) func(context.Context, gateway.Call, error) {
	return func(ctx context.Context, call gateway.Call, _ error) {
		d.RecordOutcome(ctx, reg.Snapshot().Authorize(call.Principal),
			discovery.Outcome{Session: call.SessionID, Source: discovery.SourceCall, Tools: []string{call.Tool}})
	}
}

// Store is a gateway store a program closes when it stops.
type Store interface {
	gateway.Store
	Close() error
}

// OpenStore opens the store spec names: "" for the embedded SQLite file
// gateway.db in dir (one host; processes on it may share the file),
// redis:// or rediss:// for Redis, postgres:// or postgresql:// for
// PostgreSQL (replicas on several hosts share claims, approvals, audit and
// rate limits), or "memory" for the in-memory reference store (nothing
// survives the process or is shared: tests and benchmarks only).
func OpenStore(ctx context.Context, spec, dir string) (Store, error) {
	scheme, _, _ := strings.Cut(spec, "://")
	switch {
	case spec == "":
		if dir == "" {
			return nil, errors.New("serve: the SQLite store needs a data folder")
		}
		return sqlitestore.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	case spec == "memory":
		return memoryStore{memstore.New()}, nil
	case scheme == "redis" || scheme == "rediss":
		return redisstore.Open(ctx, spec, nil)
	case IsPostgres(spec):
		return pgstore.Open(ctx, spec, nil)
	}
	return nil, fmt.Errorf("store %q: want redis://…, rediss://…, postgres://… or postgresql://… (or nothing for SQLite in the data folder)", Redact(spec))
}

// IsPostgres reports whether a store spec names PostgreSQL.
func IsPostgres(spec string) bool {
	scheme, _, _ := strings.Cut(spec, "://")
	return scheme == "postgres" || scheme == "postgresql"
}

type memoryStore struct{ *memstore.Store }

func (memoryStore) Close() error { return nil }

// Redact hides a store URL's password, for logs and messages.
func Redact(spec string) string {
	u, err := url.Parse(spec)
	if err != nil || u.Scheme == "" {
		if strings.Contains(spec, "@") {
			return "(unparsable URL)"
		}
		return spec
	}
	return u.Redacted()
}

// StoreName says which store spec names, for a log line.
func StoreName(spec string) string {
	if spec == "" {
		return "sqlite (gateway.db in the data folder)"
	}
	return Redact(spec)
}
