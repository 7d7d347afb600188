package gateway

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// metrics are the gateway's Prometheus collectors. Labels are bounded: a
// tool label is a registered tool's ID or "unknown", never user input.
type metrics struct {
	calls     *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	replays   *prometheus.CounterVec
	denials   *prometheus.CounterVec
	auditFail prometheus.Counter
	// The held outcomes (held.go).
	heldCount, heldSize prometheus.GaugeFunc
	heldEnds            *prometheus.CounterVec
	recordRetries       prometheus.Counter
	heldRefusals        prometheus.Counter
	// lateClaims: claims given back because the lease no longer covered
	// the handler's timeout (decide's actCheckLease).
	lateClaims prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, h *holder) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		calls: counterVec("toolgate_gateway_calls_total",
			"Tool calls through the gateway, by tool and outcome.", "tool", "outcome"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolgate_gateway_call_duration_seconds",
			Help:    "Time from a call's arrival to its answer, by tool.",
			Buckets: prometheus.ExponentialBuckets(0.00001, 4, 12),
		}, []string{"tool"}),
		replays: counterVec("toolgate_gateway_replays_total",
			"Calls answered from a recorded outcome (cached: true), by tool.", "tool"),
		denials: counterVec("toolgate_gateway_denials_total",
			"Calls refused by authorization, by tool and reason.", "tool", "reason"),
		auditFail: counter("toolgate_gateway_audit_failures_total",
			"Audit entries the store failed to append."),
		heldCount: gauge("toolgate_gateway_held_outcomes",
			"Outcomes of calls that ran which the store has not recorded yet; the gateway holds them and retries.",
			func() float64 { return float64(h.count.Load()) }),
		heldSize: gauge("toolgate_gateway_held_outcome_bytes",
			"Memory the held outcomes take, estimated.",
			func() float64 { return float64(h.bytes.Load()) }),
		heldEnds: counterVec("toolgate_gateway_held_outcomes_ended_total",
			"Held outcomes that left the gateway, by end: recorded, fenced (recorded already or taken over), abandoned (the gateway closed first).", "end"),
		recordRetries: counter("toolgate_gateway_record_retries_total",
			"Background attempts to record a held outcome."),
		heldRefusals: counter("toolgate_gateway_held_refusals_total",
			"Calls refused before their handler ran because the gateway held as many outcomes as it may, or was closed."),
		lateClaims: counter("toolgate_gateway_late_claims_total",
			"Calls refused before their handler ran because the store granted the claim too late for the handler's timeout to fit in the lease."),
	}
	for _, c := range []prometheus.Collector{m.calls, m.duration, m.replays, m.denials, m.auditFail,
		m.heldCount, m.heldSize, m.heldEnds, m.recordRetries, m.heldRefusals, m.lateClaims} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, errors.Join(ErrInvalidOptions, err)
			}
			return nil, err
		}
	}
	return m, nil
}

// counter, counterVec and gauge build the gateway's collectors from a
// name, its help text and (for a vector) its label names.
func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func gauge(name, help string, value func() float64) prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, value)
}

func (m *metrics) call(tool string, outcome store.Outcome, d time.Duration) {
	if m == nil {
		return
	}
	m.calls.WithLabelValues(tool, string(outcome)).Inc()
	m.duration.WithLabelValues(tool).Observe(d.Seconds())
}

func (m *metrics) replay(tool string) {
	if m != nil {
		m.replays.WithLabelValues(tool).Inc()
	}
}

func (m *metrics) denied(tool, reason string) {
	if m == nil {
		return
	}
	if tool == "" {
		tool = "unknown"
	}
	m.denials.WithLabelValues(tool, reason).Inc()
}

func (m *metrics) auditFailure() {
	if m != nil {
		m.auditFail.Inc()
	}
}

func (m *metrics) heldEnded(end string) {
	if m != nil {
		m.heldEnds.WithLabelValues(end).Inc()
	}
}

func (m *metrics) recordRetry() {
	if m != nil {
		m.recordRetries.Inc()
	}
}

func (m *metrics) heldRefusal() {
	if m != nil {
		m.heldRefusals.Inc()
	}
}

func (m *metrics) lateClaim() {
	if m != nil {
		m.lateClaims.Inc()
	}
}
