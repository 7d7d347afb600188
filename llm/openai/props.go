package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// LlamaCppProps is what a llama.cpp server's /props endpoint says about
// itself, as far as a client choosing its mode needs.
type LlamaCppProps struct {
	// ModelPath is the GGUF the server loaded.
	ModelPath string `json:"model_path"`
	// BuildInfo is the server's version string (e.g. "b6700-abc1234").
	BuildInfo string `json:"build_info"`
	// ContextSize is the context window of one slot (n_ctx), 0 when not reported.
	ContextSize int `json:"-"`
}

// ProbeLlamaCpp asks the server at baseURL (an OpenAI API root such as
// "http://localhost:8080/v1"; the /props endpoint sits beside /v1) whether
// it is a llama.cpp server: one that takes a GBNF `grammar`, which a weak
// local model needs (llm.ModeGrammar). It returns the server's properties,
// or an error when the server does not answer /props as llama.cpp does (an
// OpenAI API, vLLM, Ollama's /v1). hc nil means [http.DefaultClient]; ctx
// bounds the probe.
func ProbeLlamaCpp(ctx context.Context, baseURL string, hc *http.Client) (*LlamaCppProps, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	root := strings.TrimSuffix(strings.TrimSuffix(baseURL, "/"), "/v1")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+"/props", nil)
	if err != nil {
		return nil, fmt.Errorf("openai: probe: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("openai: probe %s/props: %w", root, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("openai: probe %s/props: HTTP %d: not a llama.cpp server", root, resp.StatusCode)
	}
	var body struct {
		ModelPath string `json:"model_path"`
		BuildInfo string `json:"build_info"`
		Settings  *struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil || body.Settings == nil {
		return nil, fmt.Errorf("openai: probe %s/props: no default_generation_settings: not a llama.cpp server", root)
	}
	return &LlamaCppProps{ModelPath: body.ModelPath, BuildInfo: body.BuildInfo, ContextSize: body.Settings.NCtx}, nil
}
