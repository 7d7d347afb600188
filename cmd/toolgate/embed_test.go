package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/embedtest"
	"github.com/toolgate/toolgate/internal/testenv"
)

// embedCatalog writes a catalog whose lab/frobnicate_widget only the
// embedding model relates to "zizzle", and whose vault/read_secret needs
// the admin scope.
func embedCatalog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lab.jsonl")
	lines := []string{
		`{"name":"frobnicate_widget","description":"Frobnicate the widget"}`,
		`{"name":"wire_funds","description":"Wire funds between two accounts"}`,
		`{"name":"weather_forecast","description":"Weather forecast for a city"}`,
		`{"name":"read_file","description":"Read a file from the disk"}`,
		`{"name":"read_secret","description":"Read a secret password credential from the vault","scopes":["admin"]}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDiscoverEmbedModel runs discover with the model tier against an
// Ollama and an OpenAI-compatible server: the model's match comes first,
// the cards are embedded once and reused from the cache on the next run,
// and a tool the caller may not use never appears however the model
// ranks it.
func TestDiscoverEmbedModel(t *testing.T) {
	cat := embedCatalog(t)
	for _, tc := range []struct{ name, api, path string }{
		{"ollama", "ollama", ""},
		{"openai", "openai", "/v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := embedtest.New(t, "concept-embed")
			cache := t.TempDir()
			args := []string{"discover", "--tools", cat, "--embed-model", "concept-embed", "--embed-url", srv.URL + tc.path,
				"--embed-api", tc.api, "--embed-cache", cache, "--embed-weight", "0.3", "--k", "2"}
			code, out, errOut := runCmd(append(args, "zizzle it")...)
			if code != exitOK || !strings.Contains(out, "embedding model: fused") || errOut != "" {
				t.Fatalf("discover = %d, %q, stderr %q; want 0 and the model fused", code, out, errOut)
			}
			if first := strings.Fields(strings.Split(out, "\n")[1]); first[1] != "lab/frobnicate_widget" {
				t.Errorf("first candidate %s, want lab/frobnicate_widget:\n%s", first[1], out)
			}
			embedded := len(srv.Texts())
			if embedded != 6 { // 5 cards and the request
				t.Errorf("first run embedded %d texts, want 6 (5 cards, 1 request)", embedded)
			}
			files, _ := filepath.Glob(filepath.Join(cache, "*.tgvec"))
			if len(files) != 1 {
				t.Errorf("cache files %v, want one", files)
			}
			// A second process: only the request is embedded.
			code, out, errOut = runCmd(append(args, "--scopes", "", "my secret password credential")...)
			if code != exitOK || errOut != "" {
				t.Fatalf("second discover = %d, stderr %q", code, errOut)
			}
			if got := srv.Texts()[embedded:]; len(got) != 1 || got[0] != "my secret password credential" {
				t.Errorf("second run embedded %q, want the request alone: the cards come from the cache", got)
			}
			if strings.Contains(out, "vault") || strings.Contains(out, "read_secret") {
				t.Errorf("discover without the admin scope returned lab/read_secret:\n%s", out)
			}
		})
	}
}

// TestDiscoverEmbedFallback: a server that is gone, or that does not have
// the model, leaves the built-in ranking to answer, saying so.
func TestDiscoverEmbedFallback(t *testing.T) {
	cat := embedCatalog(t)
	gone := httptest.NewServer(nil)
	gone.Close()
	srv := embedtest.New(t, "concept-embed")
	for _, tc := range []struct{ name, url, model string }{
		{"server gone", gone.URL, "concept-embed"},
		{"model missing", srv.URL, "other-model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd("discover", "--tools", cat, "--embed-model", tc.model, "--embed-url", tc.url,
				"--embed-cache", "off", "read a file")
			if code != exitOK || !strings.Contains(out, "lab/read_file") || !strings.Contains(out, "embedding model: unavailable") {
				t.Errorf("discover = %d, %q; want 0, lab/read_file, and the model unavailable", code, out)
			}
			if !strings.Contains(errOut, "level=WARN") {
				t.Errorf("stderr %q, want a warning", errOut)
			}
		})
	}
}

func TestEmbedFlagErrors(t *testing.T) {
	cat := embedCatalog(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"url without model", []string{"--embed-url", "http://x"}, "need --embed-model"},
		{"bad api", []string{"--embed-model", "m", "--embed-api", "grpc"}, "unknown --embed-api"},
		{"bad weight", []string{"--embed-model", "m", "--embed-weight", "1.5"}, "--embed-weight"},
		{"bad timeout", []string{"--embed-model", "m", "--embed-timeout", "0s"}, "--embed-timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCmd(append(append([]string{"discover", "--tools", cat}, tc.args...), "read a file")...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("discover %v = %d, stderr %q; want %d naming %q", tc.args, code, errOut, exitUsage, tc.want)
			}
		})
	}
}

// TestEvalEmbedGuard: eval with the model tier scores the built-in
// ranking alone and fused at each weight, and says which helps.
func TestEvalEmbedGuard(t *testing.T) {
	cat := embedCatalog(t)
	qs := filepath.Join(t.TempDir(), "q.jsonl")
	queries := `{"query":"zizzle it","relevant":["frobnicate_widget"]}
{"query":"read a file","relevant":["read_file"]}
{"query":"will it rain tomorrow","relevant":["weather_forecast"]}
`
	if err := os.WriteFile(qs, []byte(queries), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := embedtest.New(t, "concept-embed")
	code, out, errOut := runCmd("eval", "--tools", cat, "--queries", qs, "--embed-model", "concept-embed", "--embed-url", srv.URL,
		"--embed-cache", t.TempDir(), "--embed-weights", "0.3,0.99")
	if code != exitOK {
		t.Fatalf("eval = %d, stderr %q", code, errOut)
	}
	guards := 0
	for _, line := range strings.Split(errOut, "\n") {
		if strings.Contains(line, "embedding model guard: weight") {
			guards++
		}
	}
	if guards != 2 || !strings.Contains(errOut, "the model helps") || !strings.Contains(errOut, "best weight on this set 0.30") || !strings.Contains(errOut, "fused 3") {
		t.Errorf("eval stderr %q: want a guard line per weight, the model helping, best 0.30, 3 queries fused", errOut)
	}
	if !strings.Contains(out, "3 queries") {
		t.Errorf("eval stdout %q, want the report", out)
	}
	// The catalog was embedded once for both weights (the cache).
	cards := slices.DeleteFunc(srv.Texts(), func(s string) bool { return !strings.Contains(s, "(lab)") })
	if len(cards) != 5 {
		t.Errorf("cards embedded %d times, want 5 (once each)", len(cards))
	}
}

// TestServeEmbedModel: serve with --embed-model answers /v1/discover with
// the model's match first, never a tool of a scope the bearer lacks, and
// counts the fused queries in /metrics.
func TestServeEmbedModel(t *testing.T) {
	dir := t.TempDir()
	srv := embedtest.New(t, "concept-embed")
	base, _, _ := serveInProcess(t, "--tokens", aliceTokens(t, dir, "tok-alice"), "--data", filepath.Join(dir, "data"),
		"--tools", embedCatalog(t), "--offer-unconnected", "--embed-model", "concept-embed", "--embed-url", srv.URL,
		"--embed-cache", filepath.Join(dir, "vectors"), "--embed-weight", "0.3")
	p := &serveProcess{url: base}
	names := func(query string) []string {
		t.Helper()
		code, body := p.post(t, "tok-alice", "/v1/discover", `{"query":"`+query+`","k":3}`)
		if code != 200 {
			t.Fatalf("discover %q = %d %v", query, code, body)
		}
		var out []string
		for _, c := range body["candidates"].([]any) {
			out = append(out, c.(map[string]any)["name"].(string))
		}
		return out
	}
	// The catalog is embedded in the background from the start: the first
	// queries may be answered without the model until it is done.
	deadline := time.Now().Add(time.Minute)
	for got := names("zizzle it"); len(got) == 0 || got[0] != "lab/frobnicate_widget"; got = names("zizzle it") {
		if time.Now().After(deadline) {
			t.Fatalf("discover \"zizzle it\" = %v, want lab/frobnicate_widget first once the catalog is embedded", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := names("my secret password credential"); slices.Contains(got, "lab/read_secret") {
		t.Errorf("discover = %v: lab/read_secret needs the admin scope alice lacks", got)
	}
	_, metrics := testenv.Get(t, base+"/metrics")
	if !strings.Contains(string(metrics), `toolgate_discovery_model_queries_total{outcome="fused"}`) {
		t.Errorf("/metrics lacks the fused model queries:\n%s", metrics)
	}
}
