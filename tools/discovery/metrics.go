package discovery

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the discovery metrics. Labels are bounded; no request text,
// principal or session ever becomes a label.
type metrics struct {
	queries, reformulations, lowConfidence, logErrors prometheus.Counter
	linkedCalls, misses                               prometheus.Counter
	latency, size, confidence                         prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "toolgate", Subsystem: "discovery", Name: name, Help: help})
	}
	m := &metrics{
		queries:        counter("queries_total", "Discovery queries answered."),
		reformulations: counter("reformulations_total", "Queries answered from a reformulated request."),
		lowConfidence:  counter("low_confidence_total", "Queries whose final confidence stayed under the reformulation threshold."),
		logErrors:      counter("log_errors_total", "Discovery log records that failed."),
		linkedCalls:    counter("linked_calls_total", "Calls linked to the first shortlist of their session's current request."),
		misses:         counter("misses_total", "Linked calls whose tool the first shortlist of their request did not hold."),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "toolgate_discovery_shortlist_seconds", Help: "Time to answer a discovery query.",
			Buckets: []float64{10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 50e-3},
		}),
		size: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "toolgate_discovery_shortlist_size", Help: "Tools in a query's shortlist.",
			Buckets: []float64{0, 1, 2, 3, 4, 5, 8, 10, 20, 50},
		}),
		confidence: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "toolgate_discovery_confidence", Help: "A query's final confidence that its first candidate is right, in [0,1].",
			Buckets: prometheus.LinearBuckets(0.1, 0.1, 10),
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.queries, m.reformulations, m.lowConfidence, m.logErrors,
		m.linkedCalls, m.misses, m.latency, m.size, m.confidence} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, fmt.Errorf("%w: Registerer: discovery metrics already registered", ErrOptions)
			}
			return nil, fmt.Errorf("%w: Registerer: %v", ErrOptions, err)
		}
	}
	return m, nil
}

func (m *metrics) observe(sl *Shortlist, took time.Duration, threshold float64) {
	m.queries.Inc()
	if sl.Reformulated {
		m.reformulations.Inc()
	}
	if sl.Confidence < threshold {
		m.lowConfidence.Inc()
	}
	m.latency.Observe(took.Seconds())
	m.size.Observe(float64(len(sl.Candidates)))
	m.confidence.Observe(sl.Confidence)
}
