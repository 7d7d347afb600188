package embedflags_test

import (
	"context"
	"flag"
	"io"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/internal/catalogtest"
	"github.com/toolgate/toolgate/internal/embedflags"
	"github.com/toolgate/toolgate/internal/embedflags/ollamaembed"
	"github.com/toolgate/toolgate/internal/embedflags/openaiembed"
	"github.com/toolgate/toolgate/internal/embedtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// modelTier returns the model tier the flags build for args, against an
// embedtest server of either API.
func modelTier(tb testing.TB, api, cache string) *discovery.ModelOptions {
	tb.Helper()
	srv := embedtest.New(tb, "bench")
	url := srv.URL
	if api == "openai" {
		url += "/v1"
	}
	var f embedflags.Flags
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse([]string{"--embed-model", "bench", "--embed-url", url, "--embed-api", api, "--embed-cache", cache}); err != nil {
		tb.Fatal(err)
	}
	m, err := f.Options(io.Discard, map[string]embedflags.API{"ollama": ollamaembed.New, "openai": openaiembed.New})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func realCatalog(tb testing.TB) *tools.Snapshot {
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(tb), "examples/transfer/catalog/*.json"))
	return catalogtest.Snapshot(tb, files...)
}

var requests = []string{"open a pull request for my branch", "what tables are in the database", "take a screenshot of the page",
	"post a message to the team channel", "remember that my name is Ana", "list the files in this folder"}

// BenchmarkModelQuery is one Shortlist over the 105 real MCP tools with
// the model tier (the catalog embedded before), against an httptest
// server on loopback: the request's embedding round trip, its cosine with
// every card and the fusion. "none" is the same without a model tier.
func BenchmarkModelQuery(b *testing.B) {
	snap := realCatalog(b)
	view := snap.Authorize(tools.Principal{ID: "b", Tenant: "b"})
	for _, api := range []string{"none", "ollama", "openai"} {
		b.Run(api, func(b *testing.B) {
			opts := &discovery.Options{}
			if api != "none" {
				opts.Model = modelTier(b, api, "off")
			}
			d, err := discovery.New(opts)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if err := d.EmbedCatalog(ctx, snap); err != nil {
				b.Fatal(err)
			}
			if _, err := d.Index(ctx, snap); err != nil {
				b.Fatal(err)
			}
			var sl discovery.Shortlist
			i := 0
			for b.Loop() {
				if err := d.ShortlistTo(ctx, view, discovery.Request{Query: requests[i%len(requests)]}, &sl); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if api != "none" && sl.Model != discovery.ModelFused {
				b.Fatalf("model %q, want fused", sl.Model)
			}
		})
	}
}

// BenchmarkModelCatalog is embedding the 105 real MCP tools' cards at a
// Discoverer's first query: "uncached" through the server (batches of 32,
// two at once) into an empty cache directory, "cached" from the file a
// previous process saved (opening and checking it included). The index
// is built outside the timing.
func BenchmarkModelCatalog(b *testing.B) {
	snap := realCatalog(b)
	for _, cached := range []bool{false, true} {
		name := map[bool]string{false: "uncached", true: "cached"}[cached]
		b.Run(name, func(b *testing.B) {
			warm := b.TempDir()
			if cached {
				d, _ := discovery.New(&discovery.Options{Model: modelTier(b, "ollama", warm)})
				if err := d.EmbedCatalog(context.Background(), snap); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				b.StopTimer()
				dir := warm
				if !cached {
					dir = b.TempDir()
				}
				m := modelTier(b, "ollama", dir)
				d, err := discovery.New(&discovery.Options{Model: m})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := d.Index(context.Background(), snap); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := d.EmbedCatalog(context.Background(), snap); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
