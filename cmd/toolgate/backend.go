package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/local"
	"github.com/toolgate/toolgate/llm/ollama"
	"github.com/toolgate/toolgate/llm/openai"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/tools/discovery"
)

// This file is --backend B --model M of eval and cards suggest: the model
// backends and the scripted stand-ins that run the wiring without a model.

// reformulation returns the discovery options for --backend: nil without
// one, else a [runtime.ModelReformulator] on that backend, fused, below the
// threshold, counting its calls by outcome into reg (nil: nowhere).
func reformulation(m modelFlags, below float64, timeout time.Duration, reg prometheus.Registerer) (*discovery.Options, error) {
	if m.backend == "" {
		return nil, nil
	}
	b, _, err := modelBackend(m, echoBackend{})
	if err != nil {
		return nil, err
	}
	if !(below > 0 && below <= 1) { // NaN too
		return nil, fmt.Errorf("--reformulate-below %v must be in (0,1]", below)
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("--reformulate-timeout %v must be positive", timeout)
	}
	r, err := runtime.NewModelReformulator(b, &runtime.ReformulatorOptions{Timeout: timeout, Logger: quietLogger(), Registerer: reg})
	if err != nil {
		return nil, err
	}
	return &discovery.Options{Reformulator: r, FuseReformulation: true, ReformulateBelow: below}, nil
}

// reformulations sums toolgate_reformulations_total in reg by outcome, as
// "rewritten 12, timeout 1", "" when the model was never called.
func reformulations(reg *prometheus.Registry) string {
	parts, total := byOutcome(reg, "toolgate_reformulations_total")
	if total == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f model calls: %s", total, strings.Join(parts, ", "))
}

// byOutcome returns the series of the counter metric in reg as "OUTCOME
// N", sorted, and their sum.
func byOutcome(reg *prometheus.Registry, metric string) (parts []string, total float64) {
	mfs, err := reg.Gather()
	if err != nil {
		return nil, 0
	}
	for _, mf := range mfs {
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					parts = append(parts, fmt.Sprintf("%s %.0f", l.GetValue(), m.GetCounter().GetValue()))
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	sort.Strings(parts)
	return parts, total
}

// echoBackend is --backend scripted for reformulation: it answers every
// rewrite with the request itself, so the wiring runs without a model.
type echoBackend struct{}

func (echoBackend) Chat(_ context.Context, req *llm.Request) (*llm.Response, error) {
	text := req.Messages[len(req.Messages)-1].Content
	return &llm.Response{Action: llm.ActionAnswer, Answer: text, Message: llm.Message{Role: llm.RoleAssistant, Content: text}}, nil
}

// modelFlags are --backend, --model and --library of eval and cards
// suggest.
type modelFlags struct{ backend, model, library string }

// register adds the flags to fs; what is --backend's help text.
func (m *modelFlags) register(fs *flag.FlagSet, what string) {
	fs.StringVar(&m.backend, "backend", "", what+", ollama (OLLAMA_HOST), openai (OPENAI_API_KEY, OPENAI_BASE_URL) or local (a GGUF model run in process: --model FILE.gguf)")
	fs.StringVar(&m.model, "model", "", "the --backend model (the GGUF file for local)")
	fs.StringVar(&m.library, "library", "", "llama.cpp's libllama.so `file` for --backend local (default $TOOLGATE_LIBLLAMA)")
}

// modelBackend builds the --backend B --model M backend of eval and cards
// suggest (the same environment as chat: OLLAMA_HOST; OPENAI_API_KEY,
// OPENAI_BASE_URL; TOOLGATE_LIBLLAMA) and the mode to constrain it in;
// scripted is the given stand-in. The local backend runs in envelope
// mode: it compiles the envelope schema to a grammar and masks every
// token with it (llm/local).
func modelBackend(m modelFlags, scripted llm.Backend) (llm.Backend, llm.Mode, error) {
	backend, model := m.backend, m.model
	if m.library != "" && backend != "local" {
		return nil, 0, fmt.Errorf("--library needs --backend local")
	}
	switch backend {
	case "scripted":
		return scripted, llm.ModeEnvelope, nil
	case "ollama":
		b, err := ollama.New(cmp.Or(model, "llama3.2"), nil)
		return b, llm.ModeEnvelope, err
	case "openai":
		if os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("OPENAI_BASE_URL") == "" {
			return nil, 0, fmt.Errorf("--backend openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server)")
		}
		b, err := openai.New(cmp.Or(model, "gpt-4o-mini"), nil)
		return b, llm.ModeNative, err
	case "local":
		if model == "" {
			return nil, 0, fmt.Errorf("--backend local needs --model FILE.gguf, the model to run in process")
		}
		b, err := local.New(model, &local.Options{Library: m.library})
		if err != nil {
			return nil, 0, err
		}
		return b, llm.ModeEnvelope, nil
	}
	return nil, 0, fmt.Errorf("unknown --backend %q (want scripted, ollama, openai or local)", backend)
}

// cardStandIn is --backend scripted for cards suggest: it answers each
// request with a write_card call built from the prompt's tool name,
// description and sibling, so the wiring runs without a model.
type cardStandIn struct{}

func (cardStandIn) Chat(_ context.Context, req *llm.Request) (*llm.Response, error) {
	var name, desc, sibling string
	for _, line := range strings.Split(req.Messages[len(req.Messages)-1].Content, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "Tool":
			name = strings.ReplaceAll(v, "_", " ")
		case "Description":
			desc = strings.TrimSuffix(strings.ToLower(v), ".")
		case "Sibling":
			sibling = v
		}
	}
	notFor := "anything its description does not say"
	if sibling != "" {
		notFor = "the neighbouring task: use " + sibling
	}
	args, _ := json.Marshal(map[string]any{
		"aliases":  []string{name},
		"examples": []string{oneWords(desc, 12), "please " + oneWords(desc, 10), "can you " + name},
		"not_for":  notFor,
	})
	return &llm.Response{Action: llm.ActionCall, Calls: []llm.ToolCall{{ID: "c0", Name: "write_card", Arguments: args}}}, nil
}

func oneWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) > n {
		w = w[:n]
	}
	if len(w) == 0 {
		return "do it"
	}
	return strings.Join(w, " ")
}
