package mcp

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/promreg"
)

// pinMetrics are the pinning metrics, shared by every [Upstream] of one
// Registerer. Labels are bounded: the configured server's name and the
// Reason (three values); never a tool name, which the upstream chooses.
type pinMetrics struct {
	quarantined *prometheus.GaugeVec
	mismatches  *prometheus.CounterVec
}

// newPinMetrics registers the pin metrics with reg, or takes the ones an
// earlier [Upstream] registered there. Nil reg means no metrics (a nil
// *pinMetrics, whose methods do nothing).
func newPinMetrics(reg prometheus.Registerer) (*pinMetrics, error) {
	if reg == nil {
		return nil, nil
	}
	q := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "toolgate_mcp_quarantined_tools",
		Help: "Upstream MCP tools kept out of the catalog because their definition does not match the pin lock, by server and reason (changed, unpinned, invalid).",
	}, []string{"server", "reason"})
	m := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolgate_mcp_pin_mismatches_total",
		Help: "Upstream MCP tool definitions newly quarantined (a changed definition, an unpinned tool), by server and reason.",
	}, []string{"server", "reason"})
	var err error
	if q, err = registerOrExisting(reg, q); err != nil {
		return nil, err
	}
	if m, err = registerOrExisting(reg, m); err != nil {
		return nil, err
	}
	return &pinMetrics{quarantined: q, mismatches: m}, nil
}

// registerOrExisting registers c, or returns the equal collector already
// registered: every [Upstream] of a program shares one set of metrics.
func registerOrExisting[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	c, err := promreg.Shared(reg, c)
	if err != nil {
		return c, fmt.Errorf("mcp: Options.Registerer: %w", err)
	}
	return c, nil
}

// set publishes the server's current quarantine counts.
func (m *pinMetrics) set(server string, qs []Quarantined) {
	if m == nil {
		return
	}
	n := map[Reason]int{}
	for _, q := range qs {
		n[q.Reason]++
	}
	for _, r := range []Reason{ReasonChanged, ReasonUnpinned, ReasonInvalid} {
		m.quarantined.WithLabelValues(server, string(r)).Set(float64(n[r]))
	}
}

func (m *pinMetrics) mismatch(server string, r Reason) {
	if m != nil {
		m.mismatches.WithLabelValues(server, string(r)).Inc()
	}
}
