// Package embedtest is an embedding server at the network edge for
// tests: an httptest server speaking Ollama's POST /api/embed and the
// OpenAI-compatible POST /v1/embeddings exactly as those servers do, with
// a small deterministic model (each dimension a concept, a text's vector
// the count of each concept's words in it, plus a constant so that no
// vector is zero). It counts what it embeds, so that a test can tell a
// cached vector from a fresh one.
package embedtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Concepts are the model's dimensions, each a set of words it treats as
// one meaning. The last group's words are ones no lexicon relates.
var Concepts = [][]string{
	{"cash", "funds", "money", "payment", "pay", "balance"},
	{"wire", "send", "move", "transfer"},
	{"weather", "forecast", "rain"},
	{"ticket", "issue", "bug"},
	{"secret", "password", "credential"},
	{"frobnicate", "zizzle"},
}

// Server is a running embedding server.
type Server struct {
	*httptest.Server
	// Model is the only model name it serves; another gets a 404 as
	// Ollama's "model not found".
	Model string

	mu    sync.Mutex
	texts []string
}

// New starts a Server serving model, closed when t ends.
func New(t testing.TB, model string) *Server {
	s := &Server{Model: model}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/embed", s.ollama)
	mux.HandleFunc("POST /v1/embeddings", s.openai)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Texts returns every text embedded so far, in order.
func (s *Server) Texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.texts)
}

// Vector is the model's vector of text.
func Vector(text string) []float32 {
	v := make([]float32, len(Concepts)+1)
	v[len(Concepts)] = 0.1
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		for c, words := range Concepts {
			if slices.Contains(words, w) {
				v[c]++
			}
		}
	}
	return v
}

// input decodes an "input" that is one string or an array of them, as
// both APIs accept.
func input(raw json.RawMessage) ([]string, bool) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true
	}
	var many []string
	return many, json.Unmarshal(raw, &many) == nil && len(many) > 0
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request, notFound func()) ([]string, bool) {
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":"invalid request"}`, http.StatusBadRequest)
		return nil, false
	}
	if req.Model != s.Model {
		notFound()
		return nil, false
	}
	texts, ok := input(req.Input)
	if !ok {
		http.Error(w, `{"error":"invalid input"}`, http.StatusBadRequest)
		return nil, false
	}
	s.mu.Lock()
	s.texts = append(s.texts, texts...)
	s.mu.Unlock()
	return texts, true
}

// ollama answers as Ollama's /api/embed: {"model","embeddings":[[...]]}.
func (s *Server) ollama(w http.ResponseWriter, r *http.Request) {
	texts, ok := s.embed(w, r, func() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"model \"` + s.Model + `\" not found, try pulling it first"}`))
	})
	if !ok {
		return
	}
	out := struct {
		Model           string      `json:"model"`
		Embeddings      [][]float32 `json:"embeddings"`
		TotalDuration   int64       `json:"total_duration"`
		PromptEvalCount int         `json:"prompt_eval_count"`
	}{Model: s.Model, TotalDuration: 1000, PromptEvalCount: len(texts)}
	for _, t := range texts {
		out.Embeddings = append(out.Embeddings, Vector(t))
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// openai answers as /v1/embeddings:
// {"object":"list","data":[{"object":"embedding","index","embedding"}],"model","usage"}.
func (s *Server) openai(w http.ResponseWriter, r *http.Request) {
	texts, ok := s.embed(w, r, func() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}`))
	})
	if !ok {
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}{Object: "list", Model: s.Model}
	for i, t := range texts {
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: Vector(t)})
	}
	out.Usage.PromptTokens, out.Usage.TotalTokens = len(texts), len(texts)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}
