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
