package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// Config is what [Run] serves. Gateway, Registry and Auth are required;
// every other field's zero value is documented. Run checks it before it
// listens.
type Config struct {
	// What is served, to whom.

	// Addr is the listen address HOST:PORT; ignored when Listener is set.
	Addr string
	// Listener, when set, is served instead of listening on Addr.
	Listener net.Listener
	// AllowedOrigins lists the origins ("https://app.example.com"),
	// besides the server's own, whose browser pages may call it; any other
	// Origin header is refused with 403 before anything else
	// ([CheckOrigin]). Nil allows only the server's own origin.
	AllowedOrigins []string
	// Gateway executes the calls; Registry is the catalog it runs over
	// (discovery searches its current snapshot).
	Gateway  *gateway.Gateway
	Registry *tools.Registry
	// Auth maps bearer tokens to principals ([LoadTokenFile], or an
	// oauth.Verifier).
	Auth Authenticator
	// Wrap, when set, wraps the gateway's handler: oauth.Verifier.Protect
	// adds the protected-resource metadata and the OAuth challenges.
	Wrap func(http.Handler) http.Handler

	// Discovery.

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

	// Time limits and upkeep.

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

	// Observability.

	// Gatherer serves GET /metrics. Nil means no /metrics.
	Gatherer prometheus.Gatherer
	// Logger receives the server's log. Nil means slog.Default().
	Logger *slog.Logger
	// Ready, when set, is called with the listening address once the
	// server accepts connections.
	Ready func(net.Addr)
}

// Run serves cfg with [NewHandler] on [NewHTTPServer] until ctx ends, then shuts down gracefully. It returns
// nil after a clean shutdown, or the error that stopped it.
func Run(ctx context.Context, cfg Config) error {
	switch {
	case cfg.Gateway == nil:
		return errors.New("server: Config.Gateway is nil")
	case cfg.Registry == nil:
		return errors.New("server: Config.Registry is nil")
	case cfg.Auth == nil:
		return errors.New("server: Config.Auth is nil")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	disc := cfg.Discoverer
	if disc == nil {
		var err error
		if disc, err = discovery.New(nil); err != nil {
			return fmt.Errorf("server: %w", err)
		}
	}
	ln := cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return fmt.Errorf("server: %w", err)
		}
	}
	handler := NewHandler(cfg.Gateway, cfg.Auth, &HandlerOptions{
		Gatherer: cfg.Gatherer, Logger: log, Discover: Discover(disc, cfg.Registry, cfg.OfferUnconnected), Called: Called(disc, cfg.Registry)})
	if cfg.Wrap != nil {
		handler = cfg.Wrap(handler)
	}
	handler = CheckOrigin(handler, cfg.AllowedOrigins)
	srv := NewHTTPServer(ln.Addr().String(), handler, cfg.WriteTimeout)
	purgeCtx, stopPurge := context.WithCancel(ctx)
	defer stopPurge()
	if cfg.PurgeEvery >= 0 {
		go purgeLoop(purgeCtx, cfg.Gateway, log, or(cfg.PurgeEvery, 10*time.Minute), or(cfg.AuditRetention, 30*24*time.Hour))
	}
	log.Info("server: ready", "addr", ln.Addr().String())
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr())
	}
	return Serve(ctx, srv, ln, cfg.Gateway, cfg.ShutdownTimeout, log)
}

// Serve serves srv on ln until ctx ends, then shuts down gracefully, as
// [Run] does: the listener closes at once (a new connection is refused),
// the requests in flight get timeout (zero means 30 seconds) to finish and
// record their outcome, and then gw, when not nil, gets what is left of it
// to record the outcomes it holds ([gateway.Gateway.Close]). Serve
// returns only once that is over: nil after a clean shutdown, or the error
// that stopped it, which says when calls were left running or outcomes
// unrecorded (their claims' leases then expire to uncertain); past the
// timeout gw is closed all the same, which audits the calls still running
// ([gateway.Gateway.Close]). An event
// stream (a GET accepting text/event-stream, as an MCP client's stream of
// server notifications) never ends by itself: Serve ends its request's
// context when the shutdown starts, so that it does not hold the shutdown
// to its timeout (Serve wraps srv.Handler for that). log, nil meaning
// slog.Default(), says when the shutdown starts.
func Serve(ctx context.Context, srv *http.Server, ln net.Listener, gw *gateway.Gateway, timeout time.Duration, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv.Handler = endOnShutdown(streams, srv.Handler)
	// Shutdown runs this once it has closed the listener: from the line
	// on, a new connection is refused.
	srv.RegisterOnShutdown(func() {
		log.Info("server: shutting down; calls in flight may finish")
		endStreams()
	})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), or(timeout, 30*time.Second))
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		if gw != nil {
			// No time is left: Close runs no new handler, and audits
			// the calls still running (outcome uncertain) before the
			// process ends under them.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			gw.Close(cctx)
			cancel()
		}
		return fmt.Errorf("server: shutdown: %w (calls still running keep their claims; their leases expire to uncertain)", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: %w", err)
	}
	if gw == nil {
		return nil
	}
	// Outcomes the store failed to record get what is left of the
	// shutdown's time to be recorded.
	if err := gw.Close(sctx); err != nil {
		return fmt.Errorf("server: %w (their leases expire to uncertain)", err)
	}
	return nil
}

// endOnShutdown serves h, ending the context of every event stream (a GET
// accepting text/event-stream) when shutdown ends (Serve ends it as the
// server's shutdown starts). Other requests keep theirs: a call in flight
// finishes and is answered.
func endOnShutdown(shutdown context.Context, h http.Handler) http.Handler {
	if h == nil {
		h = http.DefaultServeMux // what [http.Server] serves for a nil Handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(strings.Join(r.Header.Values("Accept"), ","), "text/event-stream") {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(shutdown, cancel)()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
}

// UncertainPolicies reads the uncertain-outcome policy flags of `toolgate
// serve`: def, the default ("rerun" or "reconcile"; "" is rerun), and
// perTool, overrides written ID=POLICY, for [gateway.Options.Uncertain]
// and [gateway.Options.UncertainTools]. An override must name a tool of snap: a misspelt ID
// would silently leave its tool on the default. A nil snap checks only the
// syntax.
func UncertainPolicies(def string, perTool []string, snap *tools.Snapshot) (gateway.UncertainPolicy, map[string]gateway.UncertainPolicy, error) {
	if def == "" {
		def = "rerun"
	}
	var p gateway.UncertainPolicy
	if err := p.UnmarshalText([]byte(def)); err != nil {
		return 0, nil, fmt.Errorf("--uncertain: %w", err)
	}
	var over map[string]gateway.UncertainPolicy
	for _, kv := range perTool {
		id, name, ok := strings.Cut(kv, "=")
		if !ok || id == "" {
			return 0, nil, fmt.Errorf("--uncertain-tool %q: want ID=rerun or ID=reconcile", kv)
		}
		var tp gateway.UncertainPolicy
		if err := tp.UnmarshalText([]byte(name)); err != nil {
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
				log.Error("server: purge failed", "error", err)
				continue
			}
			log.Info("server: purged", "records", st.Records, "approvals", st.Approvals, "audit", st.Audit)
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

// Candidate is one tool of an [Answer].
type Candidate struct {
	Name        string          `json:"name"` // the tool's ID
	Score       float64         `json:"score"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Discover returns the POST /v1/discover hook ([HandlerOptions.Discover]): the shortlist of
// the tools the bearer may use that can run (all of them, those without a
// handler too, when offerUnconnected: [Config.OfferUnconnected]). The view
// is authorized before any search, so nothing else can be returned. The
// request's session goes to the discovery log ([discovery.Request].Session),
// where [Called]'s record of the tool finally called is linked to it.
func Discover(d *discovery.Discoverer, reg *tools.Registry, offerUnconnected bool) DiscoverFunc {
	return func(ctx context.Context, p tools.Principal, req DiscoverRequest) (any, error) {
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

// Called returns the gateway's hook for calls ([HandlerOptions.Called]):
// it records the tool a client called as an outcome of its session
// ([discovery.SourceCall]), whatever the gateway answered, since the client
// chose that tool. [discovery.Discoverer.RecordOutcome] leaves out a tool the caller may not use.
func Called(d *discovery.Discoverer, reg *tools.Registry) func(context.Context, gateway.Call, error) {
	return func(ctx context.Context, call gateway.Call, _ error) {
		d.RecordOutcome(ctx, reg.Snapshot().Authorize(call.Principal),
			discovery.Outcome{Session: call.SessionID, Source: discovery.SourceCall, Tools: []string{call.Tool}})
	}
}
