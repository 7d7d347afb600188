package runtime

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	misses *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		misses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_runtime_discovery_misses_total",
			Help: "Steps where the shortlist did not hold what the model needed, by kind (find_tools, unknown_tool).",
		}, []string{"kind"}),
	}
	if reg != nil {
		if err := reg.Register(m.misses); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
			m.misses = are.ExistingCollector.(*prometheus.CounterVec)
		}
	}
	return m, nil
}
