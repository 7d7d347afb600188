// Package promreg registers collectors that several parts of one program
// share: the agents of a team, the backends wrapped by llm.Checked, the
// upstream MCP servers of a gateway each create the same series, and the
// first to register them defines them for all. [NewProcessRegistry] is
// the registry such a program serves.
package promreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// NewProcessRegistry returns a registry that holds the Go runtime's and
// the process's collectors (go_*, process_*): the one a server program
// serves at GET /metrics, to which its parts (the gateway, discovery, the
// upstreams) add their own series.
func NewProcessRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Shared registers c with reg and returns it, or returns the collector
// already registered under c's name when it has c's type (as
// prometheus.AlreadyRegisteredError reports it), so that every user
// updates the same series. Any other error of reg is returned with c.
func Shared[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}
