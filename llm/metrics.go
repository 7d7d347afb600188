package llm

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/promreg"
)

// metrics are the collectors of [Checked] backends. Several Checked backends
// may share one Registerer: the second finds the first's collectors.
type metrics struct {
	requests       *prometheus.CounterVec   // backend, outcome
	repairs        *prometheus.CounterVec   // backend, problem
	retries        *prometheus.CounterVec   // backend
	toolDefTokens  *prometheus.HistogramVec // backend
	catalogTokens  *prometheus.CounterVec   // backend
	toolDefTotal   *prometheus.CounterVec   // backend
	promptTokens   *prometheus.CounterVec   // backend
	completionToks *prometheus.CounterVec   // backend
}

// Outcomes of a [Checked] Chat call (the outcome label).
const (
	outcomeOK         = "ok"
	outcomeRepaired   = "repaired"
	outcomeExhausted  = "repair_exhausted"
	outcomeDowngraded = "downgraded"
	outcomeConstraint = "constraint_rejected"
	outcomeCanceled   = "canceled"
	outcomeError      = "error"
	outcomeBadRequest = "invalid_request"
)

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	var err error
	m := &metrics{
		requests: counter(reg, &err, "toolgate_llm_requests_total",
			"Chat calls through llm.Checked, by backend and outcome (ok, repaired, repair_exhausted, downgraded, constraint_rejected, canceled, error, invalid_request).",
			"backend", "outcome"),
		repairs: counter(reg, &err, "toolgate_llm_rejected_replies_total",
			"Model replies rejected (then sent back for repair, or given up on at the end of the repair budget), by problem.",
			"backend", "problem"),
		retries: counter(reg, &err, "toolgate_llm_retries_total",
			"HTTP retries after 429 or 5xx.", "backend"),
		toolDefTokens: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolgate_llm_tool_definition_tokens",
			Help:    "o200k_base tokens of tool definitions (tools, format/response_format schema, grammar, system-prompt tool list) per backend request.",
			Buckets: []float64{0, 100, 250, 500, 1000, 2000, 4000, 8000, 16000, 32000},
		}, []string{"backend"}), &err),
		toolDefTotal: counter(reg, &err, "toolgate_llm_tool_definition_tokens_total",
			"o200k_base tokens of tool definitions sent, summed over backend requests.", "backend"),
		catalogTokens: counter(reg, &err, "toolgate_llm_catalog_tokens_total",
			"Tokens the whole authorized catalog's definitions would have taken (caller-supplied), summed over backend requests: compare with toolgate_llm_tool_definition_tokens_total.",
			"backend"),
		promptTokens: counter(reg, &err, "toolgate_llm_prompt_tokens_total",
			"Prompt tokens as reported by the backend.", "backend"),
		completionToks: counter(reg, &err, "toolgate_llm_completion_tokens_total",
			"Completion tokens as reported by the backend.", "backend"),
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// counter registers the counter vector name with labels, or returns the
// one already registered under that name.
func counter(reg prometheus.Registerer, errp *error, name, help string, labels ...string) *prometheus.CounterVec {
	return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels), errp)
}

// register registers c, or returns the collector already registered under
// its name.
func register[C prometheus.Collector](reg prometheus.Registerer, c C, errp *error) C {
	c, err := promreg.Shared(reg, c)
	if err != nil && *errp == nil {
		*errp = fmt.Errorf("llm: register metrics: %w", err)
	}
	return c
}

func (m *metrics) outcome(backend, outcome string) {
	if m != nil {
		m.requests.WithLabelValues(backend, outcome).Inc()
	}
}

func (m *metrics) repair(backend string, p OutputProblem) {
	if m != nil {
		m.repairs.WithLabelValues(backend, string(p)).Inc()
	}
}

func (m *metrics) retry(backend string) {
	if m != nil {
		m.retries.WithLabelValues(backend).Inc()
	}
}

func (m *metrics) usage(backend string, u Usage) {
	if m == nil {
		return
	}
	m.toolDefTokens.WithLabelValues(backend).Observe(float64(u.ToolDefinitionTokens))
	m.toolDefTotal.WithLabelValues(backend).Add(float64(u.ToolDefinitionTokens))
	m.catalogTokens.WithLabelValues(backend).Add(float64(u.CatalogTokens))
	m.promptTokens.WithLabelValues(backend).Add(float64(u.PromptTokens))
	m.completionToks.WithLabelValues(backend).Add(float64(u.CompletionTokens))
}
