// Package promreg registers collectors that several parts of one program
// share: the agents of a team, the backends wrapped by llm.Checked, the
// upstream MCP servers of a gateway each create the same series, and the
// first to register them defines them for all.
package promreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

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
