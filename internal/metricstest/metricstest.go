// Package metricstest reads series out of a Prometheus registry for
// tests, one ([Value], [Count]) or all that match ([Sum]): the one
// definition of "gather, find the metric, match its labels" that the
// packages' metric tests share.
package metricstest

import (
	"iter"
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
	for v := range series(tb, g, name, labels) {
		return v, true
	}
	return 0, false
}

// Sum is the sum of [Value] over every series of the metric name in g
// whose labels include every pair of labels: a vector's total over the
// labels left out. It is 0 when no series matches.
func Sum(tb testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	tb.Helper()
	sum := 0.0
	for v := range series(tb, g, name, labels) {
		sum += v
	}
	return sum
}

// series gathers g and yields the value of each series of name whose
// labels include every pair of labels, in the order Gather gives them.
func series(tb testing.TB, g prometheus.Gatherer, name string, labels []string) iter.Seq[float64] {
	tb.Helper()
	if len(labels)%2 != 0 {
		tb.Fatalf("metricstest: %s: labels %q are not name, value pairs", name, labels)
	}
	mfs, err := g.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	return func(yield func(float64) bool) {
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
		next:
			for _, m := range mf.GetMetric() {
				for i := 0; i < len(labels); i += 2 {
					if !hasLabel(m.GetLabel(), labels[i], labels[i+1]) {
						continue next
					}
				}
				var v float64
				switch {
				case m.GetCounter() != nil:
					v = m.GetCounter().GetValue()
				case m.GetGauge() != nil:
					v = m.GetGauge().GetValue()
				case m.GetHistogram() != nil:
					v = float64(m.GetHistogram().GetSampleCount())
				default:
					continue
				}
				if !yield(v) {
					return
				}
			}
		}
	}
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
