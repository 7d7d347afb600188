package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/grammar"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/tools/discovery"
)

// reformulateSchema constrains the model's rewrite: the envelope's answer
// action, with the rewrite as its text. It is the envelope's own shape, so
// every adapter parses it, and it holds no tool name. The text is bounded
// (maxRewriteLength), so a rambling model's string is closed by the
// constraint within the token budget instead of being cut off by it: the
// rewrite is a dozen words, and a reply cut off is no rewrite at all.
var reformulateSchema = `{"type":"object","properties":{"action":{"type":"string","enum":["answer"]},"text":{"type":"string","maxLength":` +
	strconv.Itoa(maxRewriteLength) + `}},"required":["action","text"],"additionalProperties":false}`

// maxRewriteLength bounds the rewrite's text, in code points: 16 words of
// tool vocabulary, about 30 tokens (the default MaxTokens, 64, leaves room
// for the envelope around it and for tokenizers that count a third more
// than o200k).
const maxRewriteLength = 100

const reformulatePrompt = `You rewrite a user's request to an AI assistant into the words a software tool's name and description would use, so that a search over tool descriptions finds the right tool.
Reply with the JSON object {"action":"answer","text":...} whose text is one short line, at most 12 words, in English: the action (a verb such as create, list, get, update, delete, send, search, run), the object it acts on, and the system or service when the request names or implies one. Keep any identifiers (numbers, names, paths) from the request. No explanation.
Examples:
"open a pull request for my branch" -> create pull request github branch
"what tables are in the database" -> list tables database sql query
"borra el archivo notas.txt" -> delete file notas.txt filesystem`

// ModelReformulateBelow is the confidence under which a [ModelReformulator]
// is worth its call, calibrated on the public sets (docs/benchmarks.md,
// "Reformulation threshold"): below 0.3 the model is called for 18–53% of
// answerable requests and 63% of BFCL's irrelevance requests, and those
// calls cover 39–73% of the requests whose top 5 missed.
const ModelReformulateBelow = 0.3

// ModelReformulator is a [discovery.Reformulator] backed by the agent's own
// model: when discovery's confidence is below its threshold, one short,
// constrained call rewrites the request into tool vocabulary (what action,
// on what object, in which system), and discovery searches again.
//
// The model is shown the request only — no tool name, authorized or not,
// is ever part of the call — and its reply is constrained to
// {"action":"answer","text":...} (structured output, or the equivalent
// GBNF in [llm.ModeGrammar]), then cut to MaxWords words of letters, digits
// and identifier punctuation. The call is bounded by Timeout; on timeout
// or any failure Reformulate returns an error and discovery keeps its
// first shortlist. Each rewrite and failure is logged.
//
// Use it with [discovery.Options]{Reformulator: r, FuseReformulation: true,
// ReformulateBelow: [ModelReformulateBelow]}; it is safe for concurrent use
// if the backend is.
type ModelReformulator struct {
	backend   llm.Backend
	timeout   time.Duration
	maxWords  int
	log       *slog.Logger
	con       llm.Constraint
	calls     *prometheus.CounterVec
	maxTokens int
}

var _ discovery.Reformulator = (*ModelReformulator)(nil)

// ReformulatorOptions configures a [ModelReformulator]. A nil
// *ReformulatorOptions means defaults.
type ReformulatorOptions struct {
	// Timeout bounds one rewrite, the model call included. Zero means 2s.
	Timeout time.Duration
	// MaxTokens caps the model's reply. Zero means 64.
	MaxTokens int
	// MaxWords bounds the rewrite's words. Zero means 16.
	MaxWords int
	// Mode is how the reply is constrained: [llm.ModeEnvelope] (the zero
	// value: structured output) or [llm.ModeGrammar] (GBNF, for llama.cpp
	// servers). ModeNative is refused: a rewrite is not a tool call.
	Mode llm.Mode
	// Logger receives each rewrite and failure. Nil means slog.Default().
	Logger *slog.Logger
	// Registerer receives toolgate_reformulations_total{outcome}. Nil
	// registers none.
	Registerer prometheus.Registerer
}

// ErrReformulation is wrapped by every error Reformulate returns.
var ErrReformulation = errors.New("runtime: reformulation failed")

// NewModelReformulator returns a reformulator calling backend (wrap it in
// [llm.Checked] first if it should repair malformed replies; the timeout
// bounds the repairs too).
func NewModelReformulator(backend llm.Backend, opts *ReformulatorOptions) (*ModelReformulator, error) {
	var o ReformulatorOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case backend == nil:
		return nil, errors.New("runtime: NewModelReformulator: nil backend")
	case o.Timeout < 0 || o.MaxTokens < 0 || o.MaxWords < 0:
		return nil, errors.New("runtime: ReformulatorOptions: Timeout, MaxTokens and MaxWords must not be negative")
	case o.Mode != llm.ModeEnvelope && o.Mode != llm.ModeGrammar:
		return nil, fmt.Errorf("runtime: ReformulatorOptions.Mode %v: want envelope or grammar", o.Mode)
	}
	r := &ModelReformulator{backend: backend, timeout: o.Timeout, maxWords: o.MaxWords, log: o.Logger}
	if r.timeout == 0 {
		r.timeout = 2 * time.Second
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = 64
	}
	if r.maxWords == 0 {
		r.maxWords = 16
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	r.con = llm.Constraint{Mode: o.Mode, EnvelopeSchema: []byte(reformulateSchema)}
	if o.Mode == llm.ModeGrammar {
		g, err := grammar.FromSchema([]byte(reformulateSchema), nil)
		if err != nil {
			return nil, fmt.Errorf("runtime: reformulation grammar: %w", err)
		}
		r.con.GBNF = g.GBNF
	}
	r.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolgate_reformulations_total",
		Help: "Model-backed discovery reformulations, by outcome (rewritten, timeout, error, empty).",
	}, []string{"outcome"})
	if o.Registerer != nil {
		if err := o.Registerer.Register(r.calls); err != nil {
			return nil, fmt.Errorf("runtime: register reformulation metrics: %w", err)
		}
	}
	r.maxTokens = o.MaxTokens
	return r, nil
}

// Reformulate asks the model for the request in tool words and returns
// them, or an error wrapping [ErrReformulation] (the context's error on
// timeout) so that discovery keeps its first shortlist.
func (r *ModelReformulator) Reformulate(ctx context.Context, query string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	zero := 0.0
	req := &llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: reformulatePrompt},
			{Role: llm.RoleUser, Content: query},
		},
		Constraint:   r.con,
		NoToolPrompt: true, // the prompt above says what to write; the turn envelope's instructions would not
		MaxTokens:    r.maxTokens,
		Temperature:  &zero,
	}
	start := time.Now()
	resp, err := r.backend.Chat(ctx, req)
	took := time.Since(start)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // a backend that answered after the deadline still timed out
	}
	if err != nil {
		outcome := "error"
		if errors.Is(err, context.DeadlineExceeded) {
			outcome = "timeout"
		}
		r.calls.WithLabelValues(outcome).Inc()
		r.log.WarnContext(ctx, "runtime: reformulation failed; the first shortlist stands", "outcome", outcome, "took", took, "err", err)
		return "", fmt.Errorf("%w: %w", ErrReformulation, err)
	}
	text := resp.Answer
	if resp.Action != llm.ActionAnswer {
		text = ""
	}
	rewrite := cleanRewrite(text, r.maxWords)
	if rewrite == "" {
		r.calls.WithLabelValues("empty").Inc()
		r.log.WarnContext(ctx, "runtime: reformulation was empty; the first shortlist stands", "action", resp.Action, "took", took)
		return "", fmt.Errorf("%w: the model's reply held no words", ErrReformulation)
	}
	r.calls.WithLabelValues("rewritten").Inc()
	r.log.InfoContext(ctx, "runtime: reformulated a low-confidence request", "query", query, "rewrite", rewrite, "took", took)
	return rewrite, nil
}

// cleanRewrite keeps the first line's first n words, each cut to letters,
// digits and the punctuation identifiers use, so that a rambling or
// hostile reply can add only a few search words.
func cleanRewrite(s string, n int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	var words []string
	for _, w := range strings.Fields(s) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		w = strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./#@", r) {
				return r
			}
			return -1
		}, w)
		if w == "" || len(w) > 64 {
			continue
		}
		words = append(words, w)
		if len(words) == n {
			break
		}
	}
	return strings.Join(words, " ")
}
