package promreg

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/metricstest"
)

// TestShared: a second collector of the same name and type is the first
// one; another type or another help under that name is an error.
func TestShared(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "toolgate_test_total", Help: "test"}
	first, err := Shared(reg, prometheus.NewCounterVec(opts, []string{"kind"}))
	if err != nil {
		t.Fatal(err)
	}
	second, err := Shared(reg, prometheus.NewCounterVec(opts, []string{"kind"}))
	if err != nil || second != first {
		t.Fatalf("Shared of the same series = %p, %v; want the first collector %p", second, err, first)
	}
	second.WithLabelValues("a").Inc()
	if got := metricstest.Count(t, reg, "toolgate_test_total", "kind", "a"); got != 1 {
		t.Errorf("the first collector counts %v, want the second's increment", got)
	}
	// The same name and labels as another type: the registry's
	// AlreadyRegisteredError, since the existing one is not a GaugeVec.
	var are prometheus.AlreadyRegisteredError
	if _, err := Shared(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts(opts), []string{"kind"})); !errors.As(err, &are) {
		t.Errorf("Shared(a GaugeVec under a CounterVec's name) = %v, want an AlreadyRegisteredError", err)
	}
	// Another help under the same name: the registry refuses it.
	other := prometheus.CounterOpts{Name: opts.Name, Help: "other"}
	if _, err := Shared(reg, prometheus.NewCounterVec(other, []string{"kind"})); err == nil {
		t.Error("Shared(another help under the same name) = nil error, want the registry's")
	}
}

// TestNewProcessRegistry: the registry a server serves holds the Go
// runtime's collector.
func TestNewProcessRegistry(t *testing.T) {
	reg := NewProcessRegistry()
	if _, ok := metricstest.Value(t, reg, "go_goroutines"); !ok {
		t.Error("NewProcessRegistry() has no go_goroutines series")
	}
}
