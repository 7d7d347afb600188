package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/catalog"
	"github.com/toolgate/toolgate/tools/mcp"
)

// catalogSources are the catalog flags every catalog command takes:
// --tools [NS=]FILE, --mcp "[NAME=]CMD ARGS", --mcp-url [NAME=]URL and
// --mcp-config FILE, each repeatable except the config, and the card
// overlays --cards FILE (repeatable) applied to every catalog.
type catalogSources struct {
	files, commands, urls multiFlag
	// passEnv are the --mcp-pass-env names, given to every --mcp server.
	passEnv multiFlag
	config  string
	// connectTimeout is --mcp-connect-timeout: the bound on connecting to
	// one upstream server; 0 means none.
	connectTimeout time.Duration
	cards          cardFlags
	// pins are --pins and --unpinned, registered by the commands that run
	// upstream tools (pins.register); unset elsewhere.
	pins pinFlags
	// metrics, if set, receives the upstreams' pin metrics.
	metrics prometheus.Registerer
	// upstreams are the servers load connected.
	upstreams []*mcp.Upstream
	// rejected holds the upstream tools the catalog rules left out (a
	// lookalike name, say) and the --mcp-config overrides of tools no
	// server lists, from load; warnRejected reports them.
	rejected []error
	// mcpNamespaces are the namespaces whose tools came, from load, as an
	// MCP server lists them (a tools/list file or an upstream server):
	// their definitions cannot carry aliases or not_for.
	mcpNamespaces map[string]bool
	// emptyFiles are the catalog files that hold no tools, from load;
	// warnRejected reports them.
	emptyFiles []string
	// pageFiles are the tools/list files with a nextCursor: one page of a
	// longer list, from load; warnRejected reports them.
	pageFiles []string
	// cache, when set, is the cache file of the catalog files' load
	// (useIndex); cacheWarning, from load, says why it was not used, and
	// warnRejected reports it.
	cache        string
	cacheWarning error
	// warnLive, set by open, reports what an upstream's later listing did
	// (a tool whose risk it tried to weaken) on the command's stderr; nil
	// drops it.
	warnLive func(error)
}

// useIndex has load keep the catalog files' load in a cache beside the
// discovery index file at index (none when index is empty): a restart
// with unchanged files then reads it instead of parsing them, which at
// 100,000 tools is most of a restart.
func (c *catalogSources) useIndex(index string) {
	if index != "" {
		c.cache = index + ".catalog"
	}
}

// catalogFlagSet is the flag set of the catalog command name, with the
// catalog flags registered in src.
func catalogFlagSet(name string) (fs *flag.FlagSet, src *catalogSources) {
	fs = flag.NewFlagSet(name, flag.ContinueOnError)
	src = &catalogSources{}
	src.register(fs)
	return fs, src
}

func (c *catalogSources) register(fs *flag.FlagSet) {
	fs.Var(&c.files, "tools", "catalog `file` (JSON Lines, JSON array or MCP tools/list), as FILE or NS=FILE; repeatable")
	c.registerServers(fs)
	c.cards.register(fs)
}

// registerServers registers the upstream server flags alone (mcp pin).
func (c *catalogSources) registerServers(fs *flag.FlagSet) {
	fs.Var(&c.commands, "mcp", "upstream MCP server over stdio: a `command` line \"CMD ARGS\" or \"NAME=CMD ARGS\"; repeatable")
	fs.Var(&c.urls, "mcp-url", "upstream MCP server over Streamable HTTP, as `URL` or NAME=URL; repeatable")
	fs.Var(&c.passEnv, "mcp-pass-env", "`NAME`s of toolgate's environment variables to pass to every --mcp server (a token it reads), comma-separated; repeatable")
	fs.StringVar(&c.config, "mcp-config", "", "JSON `file` of upstream MCP servers with scopes and overrides, or another MCP client's list of them (Claude Desktop's, Cursor's, Claude Code's, VS Code's, Cline's, Roo Code's, Windsurf's, Zed's settings.json: docs/mcp.md)")
	fs.DurationVar(&c.connectTimeout, "mcp-connect-timeout", 2*time.Minute, "how long an upstream server may take to start, initialize and list its tools, at start, at each reconnection and at each re-list after list_changed (one that does not answer a re-list is reconnected); 0 waits without bound")
}

// mcpOptions returns the upstream options every command shares, for
// logging to log.
func (c *catalogSources) mcpOptions(log *slog.Logger) *mcp.Options {
	o := &mcp.Options{Logger: log, ConnectTimeout: c.connectTimeout}
	if c.connectTimeout <= 0 {
		o.ConnectTimeout = -1
	}
	return o
}

func (c *catalogSources) empty() bool {
	return len(c.files) == 0 && len(c.commands) == 0 && len(c.urls) == 0 && c.config == ""
}

// errNoCatalog is the usage error of a catalog command given no source.
var errNoCatalog = errors.New("a catalog is required: --tools, --mcp, --mcp-url or --mcp-config")

// flagsErr is flagsErr for a catalog command: first, a catalog is required.
func (c *catalogSources) flagsErr(fs *flag.FlagSet, required ...string) error {
	if c.empty() {
		return errNoCatalog
	}
	return flagsErr(fs, required...)
}

// open is load for the command prog: it reports a failure's first line on
// stderr, and ok is false when the command must exit with exitUsage.
func (c *catalogSources) open(ctx context.Context, log *slog.Logger, stderr io.Writer, prog string) (reg *tools.Registry, closeUpstreams func(), ok bool) {
	loaded := slowNotice(stderr, prog, "loading the catalog")
	var mu sync.Mutex
	c.warnLive = func(err error) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "%s: warning: %s\n", prog, termtext.Line(err.Error()))
	}
	reg, closeUpstreams, err := c.load(ctx, log)
	loaded()
	if err != nil {
		failLine(stderr, prog, err)
		return nil, nil, false
	}
	c.warnRejected(stderr, prog)
	return reg, closeUpstreams, true
}

// openWarned is open with a quiet log, then the cards' warnings: how a
// one-shot command (not a server) opens its catalog.
func (c *catalogSources) openWarned(ctx context.Context, stderr io.Writer, prog string) (reg *tools.Registry, closeUpstreams func(), ok bool) {
	reg, closeUpstreams, ok = c.open(ctx, quietLogger(), stderr, prog)
	if ok {
		c.cards.warn(stderr, prog)
	}
	return reg, closeUpstreams, ok
}

// warnRejected prints, one line each prefixed by prog, the catalog files
// that hold no tools (an empty file, "tools": [], the wrong file given),
// the upstream tools load left out and the overrides of tools no server
// lists. A catalog file's bad line stops
// the command (its author can fix it); an upstream's bad tool costs only
// itself, since the server is not the operator's to fix, but it is never
// dropped silently.
func (c *catalogSources) warnRejected(stderr io.Writer, prog string) {
	if c.cacheWarning != nil {
		fmt.Fprintf(stderr, "%s: warning: %s\n", prog, termtext.Line(c.cacheWarning.Error()))
	}
	for _, path := range c.emptyFiles {
		fmt.Fprintf(stderr, "%s: warning: %s: the catalog holds no tools\n", prog, termtext.Line(path))
	}
	for _, path := range c.pageFiles {
		fmt.Fprintf(stderr, "%s: warning: %s: one page of a tools/list result: its nextCursor says the server lists more tools than the file holds\n", prog, termtext.Line(path))
	}
	for _, err := range c.rejected {
		fmt.Fprintf(stderr, "%s: warning: %s\n", prog, termtext.Line(err.Error()))
	}
}

// load builds a registry from every source. The returned close function
// disconnects the upstream servers. Errors read as one line: FILE:LINE for
// catalog files, the server's name for upstreams.
func (c *catalogSources) load(ctx context.Context, log *slog.Logger) (*tools.Registry, func(), error) {
	reg := tools.NewRegistry()
	if err := c.cards.load(); err != nil {
		return nil, nil, err
	}
	var files []catalog.File
	var err error
	add := reg.Add
	if c.cache != "" && len(c.files) > 0 {
		var rep catalog.CacheReport
		files, rep, err = catalog.LoadFilesCached(c.cache, c.files...)
		c.cacheWarning = rep.Warning
		if rep.Hit {
			// The cache's tools were just decoded, their schemas shared
			// by content already: the registry keeps them (at 100,000
			// tools, 0.12 s of a restart). A parse's schemas are copied,
			// which frees the parser's buffers.
			add = reg.Adopt
		}
	} else {
		files, err = catalog.LoadFiles(c.files...)
	}
	if err != nil {
		return nil, nil, err
	}
	c.mcpNamespaces = map[string]bool{}
	for _, f := range files {
		if len(f.Tools) == 0 {
			c.emptyFiles = append(c.emptyFiles, f.Path)
		}
		if f.NextCursor != "" {
			c.pageFiles = append(c.pageFiles, f.Path)
		}
		if f.Format == catalog.FormatToolsList {
			c.mcpNamespaces[f.Namespace] = true
		}
	}
	ts := catalog.Tools(files)
	if err := add(c.cards.apply(ts)...); err != nil {
		return nil, nil, err
	}
	servers, err := c.servers()
	if err != nil {
		return nil, nil, err
	}
	if err := c.pins.load(); err != nil {
		return nil, nil, err
	}
	var ups []*mcp.Upstream
	closeAll := func() {
		for _, u := range ups {
			u.Close()
		}
	}
	for _, s := range servers {
		c.mcpNamespaces[s.Name] = true
		fileTools := namespaceIDs(ts, s.Name)
		// A later listing that tries to weaken a tool's risk is said on
		// stderr, where the quiet log of mcp serve would not.
		var up atomic.Pointer[mcp.Upstream]
		onChange := func(string, int) {
			if u := up.Load(); u != nil && c.warnLive != nil {
				for _, w := range u.Status().Weakened {
					c.warnLive(fmt.Errorf("mcp: %s: the listing tries to weaken the risk of %+q; kept until a restart: %s",
						s.Name, w.Tool, strings.Join(w.Kept, ", ")))
				}
			}
		}
		o := c.mcpOptions(log)
		o.Transform, o.Pins, o.Unpinned, o.Registerer, o.OnChange = c.cards.transform(), c.pins.lock, c.pins.policy, c.metrics, onChange
		u, err := mcp.Connect(ctx, reg, s, o)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		up.Store(u)
		ups = append(ups, u)
		st := u.Status()
		c.rejected = append(c.rejected, st.Rejected...)
		for _, name := range st.UnknownOverrides {
			c.rejected = append(c.rejected, fmt.Errorf("mcp: %s: the override of %+q names no tool the server lists, so it applies to nothing", s.Name, name))
		}
		if gone := missing(reg.Snapshot(), fileTools); len(gone) > 0 {
			c.rejected = append(c.rejected, fmt.Errorf("mcp: %s: the server's listing replaced the catalog files' tools of its namespace, and does not list %d of them: %s",
				s.Name, len(gone), strings.Join(gone, ", ")))
		}
	}
	c.upstreams = ups
	c.cards.check(reg.Snapshot())
	return reg, closeAll, nil
}

// namespaceIDs returns the IDs of the tools of ts in namespace ns: a
// catalog file's tools that an upstream of that name replaces with its
// listing (docs/mcp.md: a file's tools run once their server is connected).
func namespaceIDs(ts []tools.Tool, ns string) []string {
	var ids []string
	for i := range ts {
		if ts[i].Namespace() == ns {
			ids = append(ids, ts[i].ID)
		}
	}
	return ids
}

// missing returns those of ids that snap does not hold, quoted.
func missing(snap *tools.Snapshot, ids []string) []string {
	var out []string
	for _, id := range ids {
		if _, ok := snap.Lookup(id); !ok {
			out = append(out, strconv.Quote(id))
		}
	}
	return out
}

// servers are the upstream servers of --mcp, --mcp-url and --mcp-config,
// each name once; each --mcp server passes on the --mcp-pass-env
// variables ([mcp.Server.PassEnv]) beside the default environment.
func (c *catalogSources) servers() ([]mcp.Server, error) {
	return mcp.Flags{Commands: c.commands, PassEnv: c.passEnv, URLs: c.urls, Config: c.config}.Servers()
}

// quietLogger discards library logs: the CLI reports failures itself.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
