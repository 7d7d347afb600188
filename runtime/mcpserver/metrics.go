package mcpserver

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// refusalReason is the cap a refused session met: the label of
// toolgate_mcp_session_refusals_total.
type refusalReason string

const (
	refusedPerPrincipal refusalReason = "per_principal" // Options.MaxSessionsPerPrincipal
	refusedTotal        refusalReason = "total"         // Options.MaxSessions
)

// metrics are a Server's session metrics; nil counts nothing.
type metrics struct {
	refusals *prometheus.CounterVec
}

// newMetrics registers the session metrics with reg: the gauge reads open
// when scraped. Nil reg means no metrics (a nil *metrics).
func newMetrics(reg prometheus.Registerer, open func() int) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	sessions := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "toolgate_mcp_sessions",
		Help: "Streamable HTTP sessions open (or being opened), all principals together.",
	}, func() float64 { return float64(open()) })
	m := &metrics{refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolgate_mcp_session_refusals_total",
		Help: "Streamable HTTP sessions refused with 429, by the cap met: per_principal or total.",
	}, []string{"reason"})}
	// Both series exist from the start, so a rate over them is defined.
	for _, r := range []refusalReason{refusedPerPrincipal, refusedTotal} {
		m.refusals.WithLabelValues(string(r))
	}
	for _, c := range []prometheus.Collector{sessions, m.refusals} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("mcpserver: Options.Registerer: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) refused(r refusalReason) {
	if m != nil {
		m.refusals.WithLabelValues(string(r)).Inc()
	}
}
