package metricstest_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/metricstest"
)

func TestValue(t *testing.T) {
	reg := prometheus.NewRegistry()
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "calls_total"}, []string{"tool", "outcome"})
	open := prometheus.NewGauge(prometheus.GaugeOpts{Name: "open"})
	lat := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "latency_seconds"})
	reg.MustRegister(calls, open, lat)
	calls.WithLabelValues("a", "ok").Add(3)
	calls.WithLabelValues("b", "ok").Add(5)
	open.Set(2)
	lat.Observe(0.1)
	lat.Observe(0.2)

	tests := []struct {
		name   string
		metric string
		labels []string
		want   float64
		wantOK bool
	}{
		{"counter by both labels", "calls_total", []string{"tool", "b", "outcome", "ok"}, 5, true},
		{"counter by one label", "calls_total", []string{"tool", "a"}, 3, true},
		{"label value absent", "calls_total", []string{"tool", "c"}, 0, false},
		{"label name absent", "calls_total", []string{"reason", "x"}, 0, false},
		{"gauge", "open", nil, 2, true},
		{"histogram sample count", "latency_seconds", nil, 2, true},
		{"no such metric", "nothing", nil, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := metricstest.Value(t, reg, tc.metric, tc.labels...)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("Value(%s, %q) = %v, %v; want %v, %v", tc.metric, tc.labels, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestSum(t *testing.T) {
	reg := prometheus.NewRegistry()
	ends := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ends_total"}, []string{"end", "tool"})
	reg.MustRegister(ends)
	ends.WithLabelValues("recorded", "a").Add(3)
	ends.WithLabelValues("recorded", "b").Add(4)
	ends.WithLabelValues("abandoned", "a").Add(1)

	tests := []struct {
		name   string
		metric string
		labels []string
		want   float64
	}{
		{"every series", "ends_total", nil, 8},
		{"series with a label", "ends_total", []string{"end", "recorded"}, 7},
		{"one series", "ends_total", []string{"end", "abandoned", "tool", "a"}, 1},
		{"no series matches", "ends_total", []string{"end", "fenced"}, 0},
		{"no such metric", "nothing", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := metricstest.Sum(t, reg, tc.metric, tc.labels...); got != tc.want {
				t.Errorf("Sum(%s, %q) = %v, want %v", tc.metric, tc.labels, got, tc.want)
			}
		})
	}
}
