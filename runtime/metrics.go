package runtime

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/promreg"
)

type metrics struct {
	misses      *prometheus.CounterVec
	repeats     *prometheus.CounterVec
	promptBytes prometheus.Counter
	prefixBytes prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		misses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_runtime_discovery_misses_total",
			Help: "Steps where the shortlist did not hold what the model needed, by kind (find_tools, unknown_tool).",
		}, []string{"kind"}),
	}
	m.repeats = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolgate_runtime_repeated_calls_total",
		Help: "Calls a model repeated with the same arguments after they succeeded (or ran without an outcome) earlier in the turn, by tool and action (refused, same_key, read_only, allowed).",
	}, []string{"tool", "action"})
	m.promptBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "toolgate_runtime_prompt_bytes_total",
		Help: "Bytes of the prompts sent to the model (tool definitions and messages, as rendered for the prefix comparison).",
	})
	m.prefixBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "toolgate_runtime_prompt_shared_prefix_bytes_total",
		Help: "Leading prompt bytes equal to the previous request of the same session (what a prompt cache can reuse).",
	})
	if reg != nil {
		if err := register(reg, &m.misses); err != nil {
			return nil, err
		}
		if err := register(reg, &m.repeats); err != nil {
			return nil, err
		}
		if err := register(reg, &m.promptBytes); err != nil {
			return nil, err
		}
		if err := register(reg, &m.prefixBytes); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// register registers *c, or replaces it with the collector already
// registered under its name (several agents share one registry).
func register[C prometheus.Collector](reg prometheus.Registerer, c *C) (err error) {
	*c, err = promreg.Shared(reg, *c)
	return err
}
