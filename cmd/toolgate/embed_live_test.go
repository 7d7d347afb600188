package main

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/embedflags"
	"github.com/toolgate/toolgate/internal/metricstest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
	"github.com/toolgate/toolgate/tools/discovery/embedcache"
)

// TestLiveEmbedDiscovery runs discovery's embedding model tier against a
// real embedding server (TOOLGATE_LIVE_EMBED_URL: .ci/engines starts
// llama-server --embeddings on the CI's TinyLlama GGUF, a chat model, so
// the wiring and the cache are tested, not recall): the real filesystem
// MCP server's catalog is embedded through the same flags the commands
// take, every card is on disk after the first run and none is embedded
// again by a second Discoverer with a freshly opened cache, and a tool the
// caller may not use never appears, whatever the model makes of it.
func TestLiveEmbedDiscovery(t *testing.T) {
	url, model := testenv.LiveEmbed(t)
	// The tools that change the disk need the write scope.
	writes := []string{"write_file", "edit_file", "move_file", "create_directory"}
	var ts []tools.Tool
	for _, c := range testenv.CatalogTools(t) {
		if c.Catalog != "filesystem" {
			continue
		}
		tl := tools.Tool{ID: "filesystem/" + c.Name, Description: c.Description, InputSchema: c.InputSchema,
			Card: tools.Card{Name: c.Name, Summary: c.Description}}
		if slices.Contains(writes, c.Name) {
			tl.Card.Scopes = []string{"write"}
		}
		ts = append(ts, tl)
	}
	snap := catalogtest.Registry(t, ts...).Snapshot()
	reader := snap.Authorize(tools.Principal{ID: "r", Tenant: "t", Scopes: []string{"read"}})
	cache := t.TempDir()

	run := func(queries ...string) (reg *prometheus.Registry, shortlists []*discovery.Shortlist) {
		t.Helper()
		var f embedflags.Flags
		fs := flag.NewFlagSet("live", flag.ContinueOnError)
		f.Register(fs)
		// A loaded CI machine embeds a card in seconds on a CPU: generous
		// bounds, and small batches (a batch is one HTTP request).
		if err := fs.Parse([]string{"--embed-model", model, "--embed-url", url, "--embed-cache", cache, "--embed-timeout", "5m",
			"--embed-catalog-timeout", "30m", "--embed-batch", "4"}); err != nil {
			t.Fatal(err)
		}
		m, err := f.Options(io.Discard, embedAPIs)
		if err != nil {
			t.Fatal(err)
		}
		reg = prometheus.NewRegistry()
		d, err := discovery.New(&discovery.Options{Model: m, Registerer: reg})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.EmbedCatalog(context.Background(), snap); err != nil {
			t.Fatalf("ENGINE ERROR: embedding the catalog: %v", err)
		}
		for _, q := range queries {
			t.Run(q, func(t *testing.T) {
				sl, err := d.Shortlist(context.Background(), reader, discovery.Request{Query: q, K: 5})
				if err != nil {
					t.Fatal(err)
				}
				if sl.Model != discovery.ModelFused {
					t.Errorf("ENGINE ERROR: Shortlist(%q).Model = %q, want fused", q, sl.Model)
				}
				for _, c := range sl.Candidates {
					if slices.Contains(c.Tool.Card.Scopes, "write") {
						t.Errorf("Shortlist(%q) returned %s, which needs the write scope the caller lacks", q, c.Tool.ID)
					}
				}
				shortlists = append(shortlists, sl)
			})
		}
		return reg, shortlists
	}

	queries := []string{"write this text into notes.txt", "rename the file report.txt", "show me what is inside this folder"}
	reg, first := run(queries...)
	if got := metricstest.Count(t, reg, "toolgate_discovery_model_cards_total", "source", "embedded"); got != float64(len(ts)) {
		t.Errorf("first run embedded %v cards, want all %d", got, len(ts))
	}
	files, _ := filepath.Glob(filepath.Join(cache, "*.tgvec"))
	if len(files) != 1 {
		t.Fatalf("cache files %v, want one", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	f, err := embedcache.Decode(data)
	if err != nil || len(f.Entries) != len(ts) || f.Dim == 0 || !strings.Contains(f.Model, model) {
		t.Fatalf("cache file: %v, %d entries of %d dimensions for %q; want %d vectors of the model", err, len(f.Entries), f.Dim, f.Model, len(ts))
	}
	t.Logf("%d card vectors of %d dimensions cached in %s (%d bytes)", len(f.Entries), f.Dim, files[0], len(data))

	// A restart: a new Discoverer and a cache opened again from disk.
	reg, second := run(queries...)
	if got := metricstest.Count(t, reg, "toolgate_discovery_model_cards_total", "source", "embedded"); got != 0 {
		t.Errorf("after a restart %v cards were embedded again, want none", got)
	}
	if got := metricstest.Count(t, reg, "toolgate_discovery_model_cards_total", "source", "cache"); got != float64(len(ts)) {
		t.Errorf("after a restart %v cards came from the cache, want %d", got, len(ts))
	}
	for i := range first {
		if a, b := ids(first[i]), ids(second[i]); !slices.Equal(a, b) {
			t.Errorf("Shortlist(%q) = %v, after a restart %v: the cached vectors must rank as the fresh ones", queries[i], a, b)
		}
	}
}

func ids(sl *discovery.Shortlist) []string {
	var out []string
	for _, c := range sl.Candidates {
		out = append(out, c.Tool.ID)
	}
	return out
}
