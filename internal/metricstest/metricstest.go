// Package metricstest reads one series out of a Prometheus registry for
// tests: the one definition of "gather, find the metric, match its labels"
// that the packages' metric tests share.
package metricstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Value returns the value of the first series of the metric name in g
// whose labels include every pair of labels, given as alternating label
// names and values ("tool", "bank/transfer_funds", "action", "refused"):
// a counter's or gauge's value, or a histogram's sample count. ok is false
// when no series matches. A Gather error or an odd number of labels fails
// the test.
func Value(tb testing.TB, g prometheus.Gatherer, name string, labels ...string) (v float64, ok bool) {
	tb.Helper()
	if len(labels)%2 != 0 {
		tb.Fatalf("metricstest.Value(%s): labels %q are not name, value pairs", name, labels)
	}
	mfs, err := g.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for i := 0; i < len(labels); i += 2 {
				if !hasLabel(m.GetLabel(), labels[i], labels[i+1]) {
					continue series
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue(), true
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue(), true
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount()), true
			}
		}
	}
	return 0, false
}

// Count is [Value] with 0 for a series that does not exist, as a counter
// that never counted reads.
func Count(tb testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	tb.Helper()
	v, _ := Value(tb, g, name, labels...)
	return v
}

func hasLabel[L interface {
	GetName() string
	GetValue() string
}](ls []L, name, value string) bool {
	for _, l := range ls {
		if l.GetName() == name {
			return l.GetValue() == value
		}
	}
	return false
}
