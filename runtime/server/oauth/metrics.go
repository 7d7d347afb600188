package oauth

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are a Verifier's counters; nil counts nothing.
type metrics struct {
	tokens  *prometheus.CounterVec
	fetches *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_oauth_tokens_total",
			Help: "Bearer tokens verified, by outcome: accepted, or the Reason of the refusal.",
		}, []string{"outcome"}),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_oauth_key_set_fetches_total",
			Help: "Fetches of the issuer's key set, by result (ok, error).",
		}, []string{"result"}),
	}
	for _, c := range []prometheus.Collector{m.tokens, m.fetches} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("oauth: Options.Registerer: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) token(outcome string) {
	if m != nil {
		m.tokens.WithLabelValues(outcome).Inc()
	}
}

func (m *metrics) fetch(err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.fetches.WithLabelValues(result).Inc()
}
