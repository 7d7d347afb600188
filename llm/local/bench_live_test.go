package local

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/llm"
)

// decodeGrammar never completes within the budget (no model writes
// \x01), so every generation runs to MaxTokens, each token masked.
const decodeGrammar = `root ::= [^\x01]* "\x01"`

const decodePrompt = "Write a long story about a dragon who learns to count."

// BenchmarkLiveDecode measures generation speed, in tokens/s, of the
// local backend ("local", every token masked by the grammar) and, when
// TOOLGATE_BENCH_LLAMA_SERVER names a llama-server's root URL (e.g.
// http://127.0.0.1:18190, started on the same model with the same -t), of
// llama-server on the same prompt and the same number of tokens, without
// a grammar ("llama-server": its plain decode speed, its own
// timings.predicted_per_second) and, with TOOLGATE_BENCH_SERVER_GRAMMAR=1,
// with the same grammar ("llama-server+grammar": its own grammar
// sampler, about 7 ms a step over a 32k vocabulary). The prompt is decoded once up front
// (both sides keep it cached), so each iteration is a generation of
// TOOLGATE_BENCH_TOKENS tokens (128) on TOOLGATE_BENCH_THREADS threads
// (2). -count alternates the two under the same load.
func BenchmarkLiveDecode(b *testing.B) {
	lib, model := testenv.LocalModel(b)
	threads, tokens := envInt(b, "TOOLGATE_BENCH_THREADS", 2), envInt(b, "TOOLGATE_BENCH_TOKENS", 128)
	be, err := New(model, &Options{Library: lib, Threads: threads, ContextSize: 2048})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	temp := 0.0
	req := &llm.Request{
		Messages:     []llm.Message{{Role: llm.RoleUser, Content: decodePrompt}},
		NoToolPrompt: true,
		Constraint:   llm.Constraint{Mode: llm.ModeGrammar, GBNF: decodeGrammar},
		MaxTokens:    tokens,
		Temperature:  &temp,
	}
	b.Run("local", func(b *testing.B) {
		generate := func() (int, time.Duration) {
			t0 := time.Now()
			resp, _ := be.Chat(context.Background(), req) // a truncated reply: the budget is the point
			if resp == nil || resp.FinishReason != llm.FinishLength {
				b.Fatalf("the generation did not run to the budget: %+v", resp)
			}
			return resp.Usage.CompletionTokens, time.Since(t0)
		}
		generate() // the prompt into the cache
		var n int
		var d time.Duration
		for b.Loop() {
			k, e := generate()
			n, d = n+k, d+e
		}
		b.ReportMetric(float64(n)/d.Seconds(), "tokens/s")
	})
	url := os.Getenv("TOOLGATE_BENCH_LLAMA_SERVER")
	if url == "" {
		return
	}
	msgs := chatMessages(req.Messages)
	be.mu.Lock()
	prompt, err := be.render(msgs)
	be.mu.Unlock()
	if err != nil {
		b.Fatal(err)
	}
	server := func(b *testing.B, grammar string) {
		params := map[string]any{"prompt": prompt, "n_predict": tokens, "temperature": 0, "cache_prompt": true, "ignore_eos": true}
		if grammar != "" {
			params["grammar"] = grammar
		}
		body, _ := json.Marshal(params)
		generate := func() (int, float64) {
			res, err := http.Post(url+"/completion", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			defer res.Body.Close()
			var out struct {
				Timings struct {
					PredictedN      int     `json:"predicted_n"`
					PredictedMS     float64 `json:"predicted_ms"`
					PredictedPerSec float64 `json:"predicted_per_second"`
				} `json:"timings"`
			}
			if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
				b.Fatalf("llama-server: %d %v", res.StatusCode, err)
			}
			return out.Timings.PredictedN, out.Timings.PredictedMS
		}
		generate()
		var n int
		var ms float64
		for b.Loop() {
			k, m := generate()
			n, ms = n+k, ms+m
		}
		b.ReportMetric(float64(n)/(ms/1000), "tokens/s")
	}
	b.Run("llama-server", func(b *testing.B) { server(b, "") })
	if os.Getenv("TOOLGATE_BENCH_SERVER_GRAMMAR") == "1" {
		b.Run("llama-server+grammar", func(b *testing.B) { server(b, decodeGrammar) })
	}
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		b.Fatalf("%s=%q: want a positive count", name, s)
	}
	return v
}
