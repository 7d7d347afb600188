package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/embedflags"
	"github.com/toolgate/toolgate/internal/promreg"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// serverFlags are the catalog flags of a server command ("serve", "mcp
// serve"): catalogFlagSet's, --pins, and how discovery runs
// (--discovery-log, --index, the embedding model, --offer-unconnected).
type serverFlags struct {
	src              *catalogSources
	discoveryLog     *string
	indexPath        *string
	embed            embedflags.Flags
	offerUnconnected *bool
}

// serverFlagSet is the flag set of the server command name, with the
// server flags registered in sf; the command adds its own.
func serverFlagSet(name string) (*flag.FlagSet, *serverFlags) {
	fs, src := catalogFlagSet(name)
	src.pins.register(fs)
	sf := &serverFlags{src: src, discoveryLog: discoveryLogFlag(fs), indexPath: indexFlag(fs)}
	sf.embed.Register(fs)
	sf.offerUnconnected = offerUnconnectedFlag(fs)
	return fs, sf
}

// errNoServerCatalog is the usage error of a server command given no
// catalog source.
var errNoServerCatalog = errors.New("no catalog: give --tools, --mcp, --mcp-url or --mcp-config")

// flagsErr is the usage check of a server command once its flags are
// parsed: [flagsErr] (no argument), then a catalog is required.
func (sf *serverFlags) flagsErr(fs *flag.FlagSet) error {
	if err := flagsErr(fs); err != nil {
		return err
	}
	if sf.src.empty() {
		return errNoServerCatalog
	}
	return nil
}

// served is the catalog a server serves: the registry, its discoverer
// with the index prepared, and the metrics registry both report to (the
// server adds its gateway's and its own).
type served struct {
	reg     *tools.Registry
	disc    *discovery.Discoverer
	metrics *prometheus.Registry
	closers []func()
}

// close stops the upstream servers, then closes the discovery log; call
// it once the server has stopped.
func (s *served) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// open builds what sf describes, failing early: the embedding options and
// the discovery log are checked before any upstream server starts. Then
// it starts the upstreams, warns about cards, pins and unconnected tools,
// starts embedding the catalog (a no-op without --embed-model) and
// prepares the index. On failure it has written why on stderr, prefixed
// by prog, closed what it opened, and returns false: the command exits
// with exitUsage.
func (sf *serverFlags) open(ctx context.Context, log *slog.Logger, stderr io.Writer, prog string) (*served, bool) {
	s := &served{metrics: promreg.NewProcessRegistry()}
	sf.src.metrics = s.metrics
	model, err := sf.embed.Options(stderr, embedAPIs)
	if err != nil {
		fail(stderr, prog, err)
		return nil, false
	}
	disc, closeLog, err := serverDiscoverer(*sf.discoveryLog, s.metrics, model)
	if err != nil {
		fail(stderr, prog, err)
		return nil, false
	}
	s.disc = disc
	s.closers = append(s.closers, func() { closeLog() })
	sf.src.useIndex(*sf.indexPath)
	reg, closeUpstreams, ok := sf.src.open(ctx, log, stderr, prog)
	if !ok {
		s.close()
		return nil, false
	}
	s.reg = reg
	s.closers = append(s.closers, closeUpstreams)
	sf.src.cards.warn(stderr, prog)
	sf.src.pins.warn(stderr, prog, sf.src.upstreams)
	go func() { _ = disc.EmbedCatalog(ctx, reg.Snapshot()) }()
	warnUnconnected(stderr, prog, reg.Snapshot(), *sf.offerUnconnected)
	if err := prepareIndex(ctx, disc, reg.Snapshot(), *sf.indexPath, stderr, prog); err != nil {
		fail(stderr, prog, err)
		s.close()
		return nil, false
	}
	return s, true
}
