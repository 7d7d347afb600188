package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/jsonschema"
	"github.com/toolgate/toolgate/tools"
)

// Errors a tool handler returns when the upstream cannot take the call.
var (
	// ErrDisconnected means the upstream server is not connected and is
	// being reconnected; the call was not sent (it is wrapped by
	// [tools.Unavailable], which implies [tools.NoEffect]).
	ErrDisconnected = errors.New("mcp: upstream server not connected")
	// ErrClosed is returned by methods of a closed Upstream, and (wrapped
	// by [tools.NoEffect]) by a call of its tool through a snapshot taken
	// before Close.
	ErrClosed = errors.New("mcp: upstream closed")
)

// MetaIdempotencyKey is the _meta field through which a call's idempotency
// key is passed to the upstream server, for servers that deduplicate.
const MetaIdempotencyKey = "io.toolgate/idempotency-key"

// Options configures [Connect]. The zero value of every field is documented;
// a nil *Options means all defaults.
type Options struct {
	// Logger receives connection events. Nil means slog.Default().
	Logger *slog.Logger
	// MinBackoff and MaxBackoff bound the exponential reconnection delay
	// (with jitter). Zero means 200ms and 30s.
	MinBackoff, MaxBackoff time.Duration
	// KeepAlive is the ping interval that detects a hung server (the SDK
	// closes the session when pings fail). Zero means 30s; negative disables.
	KeepAlive time.Duration
	// ConnectTimeout bounds one connection: starting (or opening) the
	// server, its initialization and its first listing, at [Connect], at
	// [ListTools] and at each reconnection; a server that has not answered
	// by then fails the attempt (and is stopped) with an error wrapping
	// [context.DeadlineExceeded]. It bounds each re-list after
	// notifications/tools/list_changed too: a server that has not answered
	// one by then is taken for hung, its connection closed and reconnected.
	// Zero means 2m (room for npx to fetch a package first); negative means
	// no bound.
	ConnectTimeout time.Duration
	// HTTPClient is used for Streamable HTTP servers. Nil means a client
	// with no overall timeout (streams are long-lived).
	HTTPClient *http.Client
	// MaxTools bounds the tools one server may list, all pages together;
	// a longer list is an error (Connect fails, a refresh keeps the old
	// tools). Zero means 10,000.
	MaxTools int
	// OnChange, if set, is called after the upstream's tools were
	// (re)registered or removed, with the number now registered.
	OnChange func(server string, tools int)
	// Transform, if set, rewrites the upstream's tools each time they are
	// listed, before they are registered (a card overlay's
	// cards.Overlay.Transform). It must return valid tools of the same
	// namespace. Nil registers them as listed.
	Transform func([]tools.Tool) []tools.Tool
	// Pins, if set, is checked at every listing (the first, each
	// list_changed, each reconnection) by Verify: a tool whose definition
	// differs from its pin, or that Unpinned keeps out, is quarantined:
	// not registered, its handler refusing calls with [ErrQuarantined],
	// logged with both hashes and counted, until the definition matches
	// again or the lock pins the new one. A pinned tool no longer listed
	// is logged. Nil pins nothing and checks nothing.
	Pins *Lock
	// Unpinned is the policy for a listed tool Pins has no pin for. Zero
	// means [UnpinnedQuarantine]. Ignored when Pins is nil.
	Unpinned Unpinned
	// Registerer, if set, receives the pin metrics
	// (toolgate_mcp_quarantined_tools, toolgate_mcp_pin_mismatches_total);
	// several Upstreams may share one. Nil means no metrics.
	Registerer prometheus.Registerer
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Logger == nil {
		out.Logger = slog.Default()
	}
	if out.MinBackoff <= 0 {
		out.MinBackoff = 200 * time.Millisecond
	}
	if out.MaxBackoff <= 0 {
		out.MaxBackoff = 30 * time.Second
	}
	if out.MaxBackoff < out.MinBackoff {
		out.MaxBackoff = out.MinBackoff
	}
	if out.KeepAlive == 0 {
		out.KeepAlive = 30 * time.Second
	}
	if out.ConnectTimeout == 0 {
		out.ConnectTimeout = 2 * time.Minute
	}
	if out.MaxTools <= 0 {
		out.MaxTools = 10_000
	}
	return out
}

// Status is a point-in-time report on an upstream connection.
type Status struct {
	Server     string
	Connected  bool
	Tools      int
	Reconnects int
	LastError  error
	// Rejected holds, for each tool of the last listing that the catalog
	// rules refused ([tools.Define]: a lookalike name, an invalid schema),
	// and for each name listed twice with different definitions, why it
	// was left out, as "mcp: SERVER: tool left out: reason"; nil when every tool
	// was registered. One bad tool costs only itself: the server's other
	// tools are registered, and the refusal is logged too.
	Rejected []error
	// UnknownOverrides are the names in [Server.Tools] that the last
	// listing did not have (a typo, a tool renamed upstream), sorted: their
	// overrides apply to nothing until the server lists them. Logged too.
	UnknownOverrides []string
	// Weakened are the tools whose risk the last listing tried to weaken
	// below what this Upstream registered them with earlier (see
	// [Weakened]), sorted by tool; nil when none. Logged too.
	Weakened []Weakened
}

// Weakened reports a listing that tried to weaken a tool's risk: to drop
// destructiveHint (or the whole annotations object) from a tool registered
// irreversible, to add readOnlyHint or idempotentHint, or to drop
// openWorldHint. Within one running [Upstream] a tool's risk never
// weakens: the stronger flags are kept, and only a restart (or a re-pin,
// with [Options.Pins], and a restart) accepts the weaker definition. An
// operator's [ToolOverride] still decides: it applies after the ratchet.
type Weakened struct {
	// Tool is the tool's bare name on the server.
	Tool string
	// Kept names the flags kept against the listing: "irreversible",
	// "not read-only", "not idempotent", "open world".
	Kept []string
}

// Upstream is one connected MCP server whose tools live in a Registry under
// the namespace [Server.Name]. It keeps them current on
// notifications/tools/list_changed, keeps them known (their calls refused
// as retryable, [tools.Unavailable]) while a server that died or hangs is
// reconnected with backoff, and removes them at Close. Safe for concurrent
// use.
type Upstream struct {
	cfg    Server
	reg    *tools.Registry
	opts   Options
	client *sdk.Client

	metrics *pinMetrics
	// listing serializes register, so listings apply in the order they
	// were taken and each pin transition is reported once.
	listing sync.Mutex

	mu         sync.Mutex
	session    *sdk.ClientSession
	ntools     int
	rejected   []error
	unknown    []string // Status.UnknownOverrides
	reconnects int
	lastErr    error
	closed     bool
	pins       pinState // the last Verdict, when [Options.Pins] is set
	weakened   []Weakened
	// refreshing: a refresh after list_changed runs; again: another
	// notification came meanwhile (see listChanged).
	refreshing, again bool
	// relisted is when the last refresh after list_changed started.
	relisted time.Time
	// nextAttempt is when the supervisor next tries to reconnect.
	nextAttempt time.Time
	// dropped, when set, is why this Upstream closed its own session
	// (relist); the supervisor reports it as the loss.
	dropped error

	// risk is each tool's risk as the server's listings stated it, the
	// strongest seen; guarded by listing. forgot is the strongest of the
	// floors boundRisk has forgotten (forgotten: whether it forgot any),
	// the floor of every name risk does not hold from then on.
	risk      map[string]risk
	forgot    risk
	forgotten bool
	// undecodable collects the tools a server's listing held that are no
	// valid MCP tool, which its connection left out (listFilter).
	undecodable listRejects

	done   chan struct{} // closed when the supervisor exits
	cancel context.CancelFunc
}

// Connect starts the server (or opens its URL), lists its tools (following
// pagination), registers them in reg under the namespace cfg.Name, and keeps
// them current until Close. The first connection must succeed: a server
// that cannot be reached now is an error, so a misconfiguration is not
// silently an empty catalog. Later failures are reported through the log
// and [Status], and retried with backoff.
func Connect(ctx context.Context, reg *tools.Registry, cfg Server, opts *Options) (*Upstream, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	u := newUpstream(reg, cfg, opts)
	if _, err := ParseUnpinned(string(u.opts.Unpinned)); err != nil {
		return nil, fmt.Errorf("%w: Options.Unpinned", err)
	}
	m, err := newPinMetrics(u.opts.Registerer)
	if err != nil {
		return nil, err
	}
	u.metrics = m
	var cs *sdk.ClientSession
	err = u.bounded(ctx, func(ctx context.Context) error {
		var err error
		if cs, err = u.dial(ctx); err != nil {
			return fmt.Errorf("mcp: connect %s: %w", cfg.Name, err)
		}
		if err := u.register(ctx, cs, true); err != nil {
			cs.Close()
			return fmt.Errorf("mcp: list tools of %s: %w", cfg.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	u.cancel = cancel
	go u.supervise(sctx, cs)
	return u, nil
}

// newUpstream is an [Upstream] not yet connected: its client answers
// list_changed with Refresh.
func newUpstream(reg *tools.Registry, cfg Server, opts *Options) *Upstream {
	u := &Upstream{cfg: cfg, reg: reg, opts: opts.withDefaults(), done: make(chan struct{})}
	u.client = sdk.NewClient(&sdk.Implementation{Name: "toolgate", Version: "0.1.0"}, &sdk.ClientOptions{
		Logger:    u.opts.Logger,
		KeepAlive: max(u.opts.KeepAlive, 0),
		ToolListChangedHandler: func(ctx context.Context, _ *sdk.ToolListChangedRequest) {
			if u.reg == nil {
				return // ListTools: one listing, no registry to keep current
			}
			u.listChanged(ctx)
		},
	})
	return u
}

// relistGap is the least time between the starts of two re-lists after
// notifications/tools/list_changed. A server may send the notification as
// often as it likes, and each re-list costs a whole tools/list, its
// conversion and a discovery update: a server that notifies every few
// milliseconds costs at most four listings a second, not hundreds.
const relistGap = 250 * time.Millisecond

// listChanged answers notifications/tools/list_changed. The handler runs
// on the session's reader, and listing from it would wait on the reader it
// blocks, so it refreshes asynchronously; and as a server may send the
// notification as often as it likes, refreshes coalesce: one runs at a
// time, and notifications that arrive meanwhile make one more, not one
// each (a goroutine and a full listing per notification, otherwise);
// and a refresh starts [relistGap] after the one before it did at the
// earliest.
func (u *Upstream) listChanged(ctx context.Context) {
	u.mu.Lock()
	if u.refreshing {
		u.again = true
		u.mu.Unlock()
		return
	}
	u.refreshing = true
	u.mu.Unlock()
	go func() {
		for {
			u.mu.Lock()
			next := u.relisted.Add(relistGap)
			u.mu.Unlock()
			if !u.waitRelistGap(time.Until(next)) {
				return
			}
			// Notifications until now are answered by this listing.
			u.mu.Lock()
			u.again, u.relisted = false, time.Now()
			u.mu.Unlock()
			u.relist(context.WithoutCancel(ctx))
			u.mu.Lock()
			if !u.again {
				u.refreshing = false
				u.mu.Unlock()
				return
			}
			u.mu.Unlock()
		}
	}()
}

// waitRelistGap waits d, or until the Upstream closes, which it reports
// as false (and ends the refreshing).
func (u *Upstream) waitRelistGap(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-u.done:
		u.mu.Lock()
		u.refreshing = false
		u.mu.Unlock()
		return false
	}
}

// relist is one listing after list_changed, bounded like a connection
// by [Options.ConnectTimeout]: a server that has not answered by then is
// taken for hung, and its connection is closed so that the supervisor
// reconnects it (its tools stay known meanwhile, as for any lost
// connection) instead of keeping the old listing, and the listing lock,
// forever. That is logged once, as the reason the connection was lost.
func (u *Upstream) relist(ctx context.Context) {
	u.mu.Lock()
	cs, closed := u.session, u.closed
	u.mu.Unlock()
	if closed || cs == nil {
		return // the reconnection, if any, lists afresh
	}
	err := u.bounded(ctx, func(ctx context.Context) error { return u.register(ctx, cs, false) })
	switch {
	case err == nil:
	case u.opts.ConnectTimeout >= 0 && errors.Is(err, context.DeadlineExceeded):
		u.mu.Lock()
		if u.session == cs {
			u.dropped = fmt.Errorf("the re-list after notifications/tools/list_changed failed, so the connection was closed: %w", err)
		}
		u.mu.Unlock()
		cs.Close()
	default:
		u.opts.Logger.Warn("mcp: refresh after list_changed failed", "server", u.cfg.Name, "err", err)
	}
}

func (u *Upstream) dial(ctx context.Context) (*sdk.ClientSession, error) {
	var t sdk.Transport
	var stderr *logWriter // a stdio server's
	if u.cfg.URL != "" {
		var hc http.Client // a copy: the caller's client is not changed
		if u.opts.HTTPClient != nil {
			hc = *u.opts.HTTPClient
		}
		if len(u.cfg.Headers) > 0 {
			hc.Transport = headerTransport{base: hc.Transport, headers: u.cfg.Headers}
		}
		hc.Transport = &listTransport{base: hc.Transport, filter: newListFilter(u.cfg.Name, &u.undecodable)}
		t = &sdk.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: &hc}
	} else {
		cmd := exec.Command(u.cfg.Command[0], u.cfg.Command[1:]...)
		cmd.Env = stdioEnviron(u.cfg, os.LookupEnv, u.opts.Logger)
		ownProcessGroup(cmd)
		stderr = &logWriter{log: u.opts.Logger, server: u.cfg.Name}
		cmd.Stderr = stderr
		t = &stdioTransport{cmd: cmd, terminate: 2 * time.Second, log: u.opts.Logger, server: u.cfg.Name, rejects: &u.undecodable}
	}
	cs, err := u.client.Connect(ctx, t, nil)
	if err != nil {
		if ex := stderr.excerpt(); ex != "" {
			// A server that exits before it answers usually says why
			// there, and the SDK's error is only "EOF".
			err = fmt.Errorf("%w; the server wrote on stderr: %s", err, ex)
		}
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		cs.Close()
		return nil, ErrClosed
	}
	u.session = cs
	return cs, nil
}

// bounded runs one connection attempt, fn, under [Options.ConnectTimeout],
// and says so in the error of an attempt that ran out of it.
func (u *Upstream) bounded(ctx context.Context, fn func(context.Context) error) error {
	if u.opts.ConnectTimeout < 0 {
		return fn(ctx)
	}
	cctx, cancel := context.WithTimeout(ctx, u.opts.ConnectTimeout)
	defer cancel()
	err := fn(cctx)
	if err == nil || ctx.Err() != nil || !errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: no answer within %v", err, u.opts.ConnectTimeout)
	}
	return fmt.Errorf("%w; no answer within %v: %w", err, u.opts.ConnectTimeout, context.DeadlineExceeded)
}

// list returns every tool of cs, following pagination.
func (u *Upstream) list(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Tool, error) {
	var listed []*sdk.Tool
	params := &sdk.ListToolsParams{}
	for page := 0; ; page++ {
		if page > 1000 {
			return nil, errors.New("more than 1000 pages of tools")
		}
		res, err := cs.ListTools(ctx, params)
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
			// A tool of the answer is no valid MCP tool, and the answer
			// was too large for listFilter; say what, not the decoder's
			// Go types.
			return nil, fmt.Errorf("the server's tools/list answer is no valid MCP: %s", decodeProblem(err))
		}
		if err != nil {
			return nil, err
		}
		listed = append(listed, res.Tools...)
		if len(listed) > u.opts.MaxTools {
			return nil, fmt.Errorf("the server lists more than %d tools (Options.MaxTools)", u.opts.MaxTools)
		}
		if res.NextCursor == "" {
			return listed, nil
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
}

// register lists every tool of cs, keeps out what [Options.Pins]
// quarantines, and replaces the namespace's tools with the rest. On the
// first listing under [UnpinnedRefuse], an unpinned tool fails it with
// [ErrUnpinned] and nothing is registered.
func (u *Upstream) register(ctx context.Context, cs *sdk.ClientSession, first bool) error {
	u.listing.Lock()
	defer u.listing.Unlock()
	u.undecodable.take() // what an unfinished listing left
	listed, err := u.list(ctx, cs)
	if err != nil {
		return err
	}
	undecodable := u.undecodable.take()
	unknown := u.unknownOverrides(listed)
	if len(unknown) > 0 {
		u.opts.Logger.Warn("mcp: overrides name no listed tool", "server", u.cfg.Name, "tools", unknown)
	}
	if u.opts.Pins != nil {
		v := Verify(u.opts.Pins, u.cfg.Name, listed, u.opts.Unpinned)
		if first && u.opts.Unpinned == UnpinnedRefuse {
			for _, q := range v.Quarantined {
				if q.Reason == ReasonUnpinned {
					return fmt.Errorf("%w: %s/%s (--unpinned refuse; pin it with toolgate mcp pin)", ErrUnpinned, u.cfg.Name, q.Tool)
				}
			}
		}
		// The handlers refuse quarantined tools before the registry
		// drops them, so a call routed through an older snapshot is
		// refused too.
		u.mu.Lock()
		prev := u.pins
		u.mu.Unlock()
		next := u.applyVerdict(prev, v)
		u.mu.Lock()
		u.pins = next
		u.mu.Unlock()
		listed = v.Accepted
	}
	ts, rejected, weakened := u.convert(listed)
	rejected = append(undecodable, rejected...)
	for _, w := range weakened {
		u.opts.Logger.Warn("mcp: the listing weakens a tool's risk; the stronger flags are kept until a restart",
			"server", u.cfg.Name, "tool", w.Tool, "kept", w.Kept)
	}
	for _, err := range rejected {
		// A tool the catalog rules reject is reported and left out; the
		// others are still registered.
		u.opts.Logger.Warn("mcp: rejected tool", "server", u.cfg.Name, "err", err)
	}
	if u.opts.Transform != nil {
		ts = u.opts.Transform(ts)
	}
	// Status reflects the new list before the registry publishes it, so a
	// reader woken by the registry never sees a stale count.
	u.mu.Lock()
	prev, prevRejected, prevUnknown := u.ntools, u.rejected, u.unknown
	u.ntools, u.rejected, u.unknown, u.weakened = len(ts), rejected, unknown, weakened
	u.mu.Unlock()
	if err := u.reg.ReplaceNamespace(u.cfg.Name, ts); err != nil {
		u.mu.Lock()
		u.ntools, u.rejected, u.unknown = prev, prevRejected, prevUnknown
		u.mu.Unlock()
		return err
	}
	if u.opts.OnChange != nil {
		u.opts.OnChange(u.cfg.Name, len(ts))
	}
	return nil
}

// convert turns the server's tools into registry tools through
// [tools.DefineAll], the rules every tool's card follows (summary from the
// description, risk from the annotations, schema checks), then applies the
// configured scopes and overrides. A tool the rules reject is left out and
// reported, one error each; the others are returned. A name listed twice
// is one tool when the copies are alike, and otherwise every copy is left
// out: a call names the tool only by name, so which definition it would
// run is unknown. The risk the annotations state is ratcheted first
// (ratchet), so the overrides still decide; the tools whose
// risk the listing tried to weaken are returned, sorted.
func (u *Upstream) convert(listed []*sdk.Tool) ([]tools.Tool, []error, []Weakened) {
	defs := make([]tools.Definition, 0, len(listed))
	var errs []error
	listed, errs = u.dedupe(listed)
	outputs := make(map[string]*jsonschema.Schema)
	for _, t := range listed {
		d, err := definition(t)
		var out *jsonschema.Schema
		if err == nil {
			out, err = outputSchema(t)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("mcp: %s: tool left out: %+q: %w", u.cfg.Name, t.Name, err))
			continue
		}
		if out != nil {
			outputs[t.Name] = out
		}
		defs = append(defs, d)
	}
	defined, derrs := tools.DefineAll(u.cfg.Name, defs)
	ts := make([]tools.Tool, 0, len(defined))
	var weakened []Weakened
	for i, t := range defined {
		if derrs[i] != nil {
			errs = append(errs, &rejectedError{server: u.cfg.Name, err: derrs[i]})
			continue
		}
		name := t.Name()
		if kept := u.ratchet(name, &t.Card); len(kept) > 0 {
			weakened = append(weakened, Weakened{Tool: name, Kept: kept})
		}
		t.Card.Scopes = appendUnique(t.Card.Scopes, u.cfg.Scopes...)
		if o, ok := u.cfg.Tools[name]; ok {
			o.apply(&t.Card)
		}
		t.Handler = u.handler(name, outputs[name])
		ts = append(ts, t)
	}
	u.boundRisk(ts)
	slices.SortFunc(weakened, func(a, b Weakened) int { return strings.Compare(a.Tool, b.Tool) })
	return ts, errs, weakened
}

// risk is the part of a card the server's annotations decide that a later
// listing must not weaken, each field true on the stronger side.
type risk struct {
	irreversible, notReadOnly, notIdempotent, openWorld bool
}

// or returns the stronger of r and o in each field.
func (r risk) or(o risk) risk {
	return risk{irreversible: r.irreversible || o.irreversible, notReadOnly: r.notReadOnly || o.notReadOnly,
		notIdempotent: r.notIdempotent || o.notIdempotent, openWorld: r.openWorld || o.openWorld}
}

// ratchet keeps c's risk flags (as the server's annotations state them)
// at least as strong as the strongest this Upstream registered the tool
// name with, and returns the flags it kept against the listing; the first
// listing of a name sets its floor, unless boundRisk has forgotten floors:
// then a name without one may be a forgotten one, and is held to the
// strongest of them. A tool's scopes come from the configuration alone
// ([Server.Scopes], [ToolOverride]), never from a listing, so a listing
// cannot weaken them. The caller holds u.listing.
func (u *Upstream) ratchet(name string, c *tools.Card) []string {
	if u.risk == nil {
		u.risk = map[string]risk{}
	}
	floor, seen := u.risk[name]
	if !seen && u.forgotten {
		floor, seen = u.forgot, true
	}
	var kept []string
	if seen {
		if floor.irreversible && !c.Irreversible {
			c.Irreversible = true
			kept = append(kept, "irreversible")
		}
		if floor.notReadOnly && c.ReadOnly {
			c.ReadOnly = false
			kept = append(kept, "not read-only")
		}
		if floor.notIdempotent && c.Idempotent {
			c.Idempotent = false
			kept = append(kept, "not idempotent")
		}
		if floor.openWorld && !c.OpenWorld {
			c.OpenWorld = true
			kept = append(kept, "open world")
		}
		if c.Irreversible {
			c.ReadOnly = false
		}
	}
	u.risk[name] = risk{irreversible: c.Irreversible, notReadOnly: !c.ReadOnly, notIdempotent: !c.Idempotent, openWorld: c.OpenWorld}
	return kept
}

// boundRisk forgets the floors of tools the listing ts does not hold once
// there are more than twice [Options.MaxTools], so a server inventing new
// names at every listing cannot grow them without bound. A tool the
// server drops and lists again soon after keeps its floor; what is
// forgotten is kept as one floor, the strongest of them, which holds
// every name listed later without a floor of its own (ratchet), so that
// churning names is no way to weaken a tool's risk.
func (u *Upstream) boundRisk(ts []tools.Tool) {
	if len(u.risk) <= 2*u.opts.MaxTools {
		return
	}
	listed := make(map[string]bool, len(ts))
	for _, t := range ts {
		listed[t.Name()] = true
	}
	for name, r := range u.risk {
		if !listed[name] {
			u.forgot = u.forgot.or(r)
			u.forgotten = true
			delete(u.risk, name)
		}
	}
}

// unknownOverrides returns, sorted, the names in [Server.Tools] that
// listed lacks.
func (u *Upstream) unknownOverrides(listed []*sdk.Tool) []string {
	if len(u.cfg.Tools) == 0 {
		return nil
	}
	names := make(map[string]bool, len(listed))
	for _, t := range listed {
		names[t.Name] = true
	}
	var out []string
	for name := range u.cfg.Tools {
		if !names[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// dedupe returns listed with the second and later copies of a name
// dropped when every copy has the same definition, and with every copy
// dropped, the name reported once, when they differ ([listedTwice]).
func (u *Upstream) dedupe(listed []*sdk.Tool) ([]*sdk.Tool, []error) {
	twice := listedTwice(listed)
	if len(twice) == 0 {
		return listed, nil
	}
	out := make([]*sdk.Tool, 0, len(listed))
	seen := make(map[string]bool, len(twice))
	var errs []error
	for _, t := range listed {
		tw, dup := twice[t.Name]
		switch {
		case !dup:
			out = append(out, t)
		case seen[t.Name]:
		case !tw.alike:
			seen[t.Name] = true
			errs = append(errs, fmt.Errorf("mcp: %s: tool left out: %+q: the server lists the name %d times with different definitions, so which one a call runs is unknown", u.cfg.Name, t.Name, tw.copies))
		default:
			seen[t.Name] = true
			out = append(out, t)
		}
	}
	return out, errs
}

// twice is what [listedTwice] says of a name listed more than once.
type twice struct {
	copies int
	alike  bool // every copy has the first's [DefinitionHash]
}

// listedTwice returns the names listed holds more than once: how many
// times, and whether every copy has the same definition ([DefinitionHash];
// one that cannot be hashed is not alike). A call names only the tool, so
// of copies that differ nobody can say which the server runs: the
// upstream leaves them all out (dedupe) and a lock pins none ([Lock.Pin]).
func listedTwice(listed []*sdk.Tool) map[string]twice {
	copies := make(map[string]int, len(listed))
	for _, t := range listed {
		copies[t.Name]++
	}
	if len(copies) == len(listed) {
		return nil
	}
	out := make(map[string]twice, len(listed)-len(copies))
	first := make(map[string]string, len(listed)-len(copies))
	for _, t := range listed {
		n := copies[t.Name]
		if n < 2 {
			continue
		}
		h, err := DefinitionHash(t)
		prev, ok := first[t.Name]
		switch {
		case !ok:
			first[t.Name] = h
			out[t.Name] = twice{copies: n, alike: err == nil}
		case err != nil || h != prev:
			out[t.Name] = twice{copies: n}
		}
	}
	return out
}

// rejectedError is a tool of an upstream's listing that [tools.Define]
// refused: "mcp: SERVER: tool left out: REASON", the reason as a catalog
// file states it (for a name, the name escaped and the offending
// character).
type rejectedError struct {
	server string
	err    error
}

func (e *rejectedError) Error() string {
	reason := e.err.Error()
	var de *tools.DefinitionError
	if errors.As(e.err, &de) {
		reason = de.Reason
		if de.Field != "name" && de.Field != "id" {
			reason = fmt.Sprintf("%+q: %s", de.Name, de.Reason)
		}
	}
	return fmt.Sprintf("mcp: %s: tool left out: %s", e.server, reason)
}

func (e *rejectedError) Unwrap() error { return e.err }

// definition states an SDK tool as a [tools.Definition]: its name, title,
// description, input schema and annotations (as in a catalog file, an
// absent destructiveHint counts as true, MCP's default, and an absent
// openWorldHint as false: [tools.Annotations]).
func definition(t *sdk.Tool) (tools.Definition, error) {
	d := tools.Definition{Name: t.Name, Title: t.Title, Description: t.Description}
	switch s := t.InputSchema.(type) {
	case nil:
	case json.RawMessage:
		d.InputSchema = s
	default:
		raw, err := json.Marshal(s)
		if err != nil {
			return d, fmt.Errorf("encode input schema: %w", err)
		}
		d.InputSchema = raw
	}
	if a := t.Annotations; a != nil {
		d.Annotations = &tools.Annotations{
			ReadOnlyHint:    a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint == nil || *a.DestructiveHint,
			IdempotentHint:  a.IdempotentHint,
			OpenWorldHint:   a.OpenWorldHint != nil && *a.OpenWorldHint,
		}
	}
	return d, nil
}

// handler calls the upstream's tool name; a result that breaks output,
// the tool's outputSchema (nil: none declared), is refused ([checkOutput]).
func (u *Upstream) handler(name string, output *jsonschema.Schema) tools.Handler {
	return func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		u.mu.Lock()
		cs, closed := u.session, u.closed
		_, quarantined := u.pins.quarantined[name]
		u.mu.Unlock()
		if quarantined {
			return nil, tools.NoEffect(fmt.Errorf("%w: %s/%s", ErrQuarantined, u.cfg.Name, name))
		}
		if closed {
			// Gone for good; a call through an older snapshot.
			return nil, tools.NoEffect(fmt.Errorf("%w: %s", ErrClosed, u.cfg.Name))
		}
		if cs == nil {
			return nil, tools.Unavailable(fmt.Errorf("%w: %s", ErrDisconnected, u.cfg.Name), u.retryAfter())
		}
		params := &sdk.CallToolParams{Name: name, Arguments: args}
		if key, ok := tools.IdempotencyKey(ctx); ok {
			params.Meta = sdk.Meta{MetaIdempotencyKey: key}
		}
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			var werr *jsonrpc.Error
			if errors.As(err, &werr) && answeredByServer(werr) {
				// The server answered with a protocol error: it refused the
				// request (unknown tool, invalid params) without running it.
				return nil, tools.NoEffect(&ProtocolError{Server: u.cfg.Name, Tool: name, Code: int(werr.Code), Message: werr.Message})
			}
			// Transport failure, deadline, or an error the SDK made up (a
			// frame it could not read, an HTTP 5xx): the call may have run.
			return nil, fmt.Errorf("mcp: call %s/%s: %w", u.cfg.Name, name, err)
		}
		if err := invalidResult(u.cfg.Name, name, res); err != nil {
			return nil, err
		}
		if err := checkOutput(u.cfg.Name, name, output, res); err != nil {
			return nil, err
		}
		return toolResult(res)
	}
}

// retryAfter is how long a call refused while reconnecting should wait:
// until the next reconnection attempt, and at least [Options.MinBackoff].
func (u *Upstream) retryAfter() time.Duration {
	u.mu.Lock()
	next := u.nextAttempt
	u.mu.Unlock()
	return max(time.Until(next), u.opts.MinBackoff)
}

// ProtocolError is a JSON-RPC error the upstream answered a call with. It is
// distinct from a tool error (CallToolResult.isError), which the tool ran
// and reported, and which becomes a *[tools.DomainError].
type ProtocolError struct {
	Server, Tool string
	Code         int
	Message      string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("mcp: %s/%s: protocol error %d: %s", e.Server, e.Tool, e.Code, e.Message)
}

// toolResult converts a CallToolResult into the handler's JSON result: the
// structured content when the tool gave one, else {"content":[...]}; a tool
// that reported isError becomes a *[tools.DomainError] carrying its text.
func toolResult(res *sdk.CallToolResult) (json.RawMessage, error) {
	if res.IsError {
		var msg []string
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				msg = append(msg, tc.Text)
			}
		}
		return nil, &tools.DomainError{Code: "TOOL_ERROR", Message: strings.Join(msg, "\n"), Details: res.Content}
	}
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	return json.Marshal(struct {
		Content []sdk.Content `json:"content"`
	}{res.Content})
}

// Refresh lists the server's tools again and applies the new list.
func (u *Upstream) Refresh(ctx context.Context) error {
	u.mu.Lock()
	cs, closed := u.session, u.closed
	u.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if cs == nil {
		return ErrDisconnected
	}
	return u.register(ctx, cs, false)
}

// supervise waits for the session to end, removes the server's tools, and
// reconnects with backoff until ctx is cancelled.
func (u *Upstream) supervise(ctx context.Context, cs *sdk.ClientSession) {
	defer close(u.done)
	backoff := u.opts.MinBackoff
	for {
		err := cs.Wait()
		u.mu.Lock()
		u.session = nil
		closed := u.closed
		if u.dropped != nil {
			err, u.dropped = u.dropped, nil
		}
		u.mu.Unlock()
		if closed {
			return
		}
		if err == nil {
			err = errors.New("server closed the connection")
		}
		u.fail(err)
		for {
			delay := backoff/2 + rand.N(backoff/2+1)
			u.mu.Lock()
			u.nextAttempt = time.Now().Add(delay)
			u.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			backoff = min(backoff*2, u.opts.MaxBackoff)
			var next *sdk.ClientSession
			err := u.bounded(ctx, func(ctx context.Context) error {
				var err error
				if next, err = u.dial(ctx); err != nil {
					return err
				}
				u.mu.Lock()
				u.reconnects++
				u.mu.Unlock()
				if err := u.register(ctx, next, false); err != nil {
					u.mu.Lock()
					u.reconnects--
					u.mu.Unlock()
					next.Close()
					return err
				}
				return nil
			})
			if err == nil {
				u.opts.Logger.Info("mcp: reconnected", "server", u.cfg.Name)
				cs, backoff = next, u.opts.MinBackoff
				break
			}
			u.mu.Lock()
			u.lastErr = err
			u.mu.Unlock()
			u.opts.Logger.Warn("mcp: reconnect failed", "server", u.cfg.Name, "err", err)
		}
	}
}

// fail records a lost connection. The server's tools stay in the catalog
// with their last definitions while it is reconnected, so that a retry of
// a call of one is not told the tool does not exist: their handlers refuse
// with [tools.Unavailable] (nothing ran, retry later), and a call whose
// outcome the gateway recorded is still replayed. Only Close takes them out.
func (u *Upstream) fail(err error) {
	u.opts.Logger.Warn("mcp: upstream lost; reconnecting (its tools stay known, a call of one is refused as retryable meanwhile)",
		"server", u.cfg.Name, "err", err)
	u.mu.Lock()
	u.lastErr = err
	u.mu.Unlock()
}

// Status reports the connection's current state.
func (u *Upstream) Status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	return Status{Server: u.cfg.Name, Connected: u.session != nil, Tools: u.ntools, Reconnects: u.reconnects, LastError: u.lastErr,
		Rejected: slices.Clone(u.rejected), UnknownOverrides: slices.Clone(u.unknown), Weakened: slices.Clone(u.weakened)}
}

// Quarantined returns the tools the last listing quarantined (see
// [Options.Pins]), sorted by name; none when Pins is nil.
func (u *Upstream) Quarantined() []Quarantined {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]Quarantined, 0, len(u.pins.quarantined))
	for _, q := range u.pins.quarantined {
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b Quarantined) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}

// Close disconnects, stops reconnecting and removes the server's tools from
// the registry. It is idempotent.
func (u *Upstream) Close() error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil
	}
	u.closed = true
	cs := u.session
	u.mu.Unlock()
	u.cancel()
	var err error
	if cs != nil {
		err = cs.Close()
	}
	<-u.done
	u.metrics.set(u.cfg.Name, nil)
	if rerr := u.reg.ReplaceNamespace(u.cfg.Name, nil); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	base := h.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// logWriter forwards an upstream's stderr to the logger, one record a write.
// logWriter logs what a stdio server writes on stderr (at Debug), and
// keeps its first and its last stderrKeep bytes for its excerpt.
type logWriter struct {
	log    *slog.Logger
	server string

	mu   sync.Mutex
	head []byte // the first stderrKeep bytes written
	tail []byte // the last stderrKeep bytes written after head
}

const (
	stderrKeep    = 2048
	stderrExcerpt = 200 // bytes of each end an excerpt shows
)

func (w *logWriter) Write(p []byte) (int, error) {
	w.log.Debug("mcp: upstream stderr", "server", w.server, "text", strings.TrimSpace(string(p)))
	w.mu.Lock()
	defer w.mu.Unlock()
	rest := p
	if n := min(len(rest), stderrKeep-len(w.head)); n > 0 {
		w.head = append(w.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		w.tail = append(w.tail, rest...)
		if len(w.tail) > stderrKeep {
			w.tail = append(w.tail[:0], w.tail[len(w.tail)-stderrKeep:]...)
		}
	}
	return len(p), nil
}

// excerpt returns what was written, its white space collapsed, its first
// and last stderrExcerpt bytes when longer, Go-quoted with only ASCII
// (a terminal control or a lookalike letter shows escaped); "" when w is
// nil or nothing but white space was written.
func (w *logWriter) excerpt() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	text := string(w.head)
	if len(w.tail) > 0 {
		text += " ... " + string(w.tail)
	}
	w.mu.Unlock()
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return ""
	}
	if len(text) > 2*stderrExcerpt+len(" ... ") {
		text = text[:stderrExcerpt] + " ... " + text[len(text)-stderrExcerpt:]
	}
	return fmt.Sprintf("%+q", text)
}

func appendUnique(dst []string, add ...string) []string {
	for _, s := range add {
		found := false
		for _, d := range dst {
			if d == s {
				found = true
				break
			}
		}
		if !found {
			dst = append(dst, s)
		}
	}
	return dst
}
