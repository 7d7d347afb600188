package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/ollama"
)

// showServer answers /api/show as Ollama does, with params as the
// response's "parameters" (one "name value" line each, the name padded to
// 30 columns), and records the models asked about.
func showServer(t *testing.T, status int, params string) (*httptest.Server, *[]string) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/show" || r.Method != http.MethodPost {
			t.Errorf("request %s %s, want POST /api/show", r.Method, r.URL.Path)
		}
		var body struct{ Model string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Error(err)
		}
		asked = append(asked, body.Model)
		if status != http.StatusOK {
			apiError(w, status, "model 'qwen3:8b' not found")
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(w).Encode(map[string]any{"parameters": params, "model_info": map[string]any{"llama.context_length": 131072}})
	}))
	t.Cleanup(srv.Close)
	return srv, &asked
}

func TestContextSize(t *testing.T) {
	pad := func(name, value string) string { return name + strings.Repeat(" ", 31-len(name)) + value }
	tests := []struct {
		name   string
		numCtx int
		params string
		want   int
		asks   bool
	}{
		{"the model's parameter", 0, pad("stop", `"<|user|>"`) + "\n" + pad("num_ctx", "2048") + "\n" + pad("temperature", "0.7"), 2048, true},
		{"written as a float", 0, pad("num_ctx", "8192.0"), 8192, true},
		// The server's default applies and is not reported; the model's
		// trained window (model_info) is not what requests run with.
		{"no parameter", 0, pad("temperature", "0.7"), 0, true},
		{"no parameters at all", 0, "", 0, true},
		{"Options.NumCtx wins, without asking", 4096, pad("num_ctx", "2048"), 4096, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, asked := showServer(t, http.StatusOK, tt.params)
			b, err := ollama.New("qwen3:8b", &ollama.Options{BaseURL: srv.URL, NumCtx: tt.numCtx})
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.ContextSize(context.Background())
			if err != nil || got != tt.want {
				t.Fatalf("ContextSize = %d, %v; want %d", got, err, tt.want)
			}
			if want := []string{"qwen3:8b"}; tt.asks && (len(*asked) != 1 || (*asked)[0] != want[0]) {
				t.Errorf("asked about %q, want %q", *asked, want)
			} else if !tt.asks && len(*asked) != 0 {
				t.Errorf("asked the server about %q; Options.NumCtx needs no question", *asked)
			}
		})
	}
}

func TestContextSizeErrors(t *testing.T) {
	for _, params := range []string{"num_ctx                        lots", "num_ctx -1", "num_ctx 0", "num_ctx 2048.5", "num_ctx 1e12", "num_ctx", "num_ctx 2048 4096"} {
		t.Run(params, func(t *testing.T) {
			srv, _ := showServer(t, http.StatusOK, params)
			b, _ := ollama.New("qwen3:8b", &ollama.Options{BaseURL: srv.URL})
			if n, err := b.ContextSize(context.Background()); err == nil || n != 0 || !strings.Contains(err.Error(), "num_ctx") {
				t.Errorf("parameters %q: ContextSize = %d, %v; want an error naming num_ctx", params, n, err)
			}
		})
	}
	srv, _ := showServer(t, http.StatusNotFound, "")
	b, _ := ollama.New("qwen3:8b", &ollama.Options{BaseURL: srv.URL})
	var se *llm.StatusError
	if _, err := b.ContextSize(context.Background()); !errors.As(err, &se) || se.StatusCode != http.StatusNotFound || !strings.Contains(se.Message, "not found") {
		t.Errorf("unknown model: ContextSize error %v, want an *llm.StatusError 404 with the server's message", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.ContextSize(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: ContextSize error %v, want context.Canceled", err)
	}
}
