package mcpserver_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/metricstest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/runtime/mcpserver"
)

// TestSessionMetrics: with Options.Registerer, toolgate_mcp_sessions is
// the number of open HTTP sessions and toolgate_mcp_session_refusals_total
// counts the 429s by the cap met; each refusal is logged at Info with the
// principal, never its token.
func TestSessionMetrics(t *testing.T) {
	f := newFixture(t)
	reg := prometheus.NewRegistry()
	var logs testenv.Buffer
	_, ts := f.serveWith(t, mcpserver.Options{Registerer: reg, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		MaxSessionsPerPrincipal: 2, MaxSessions: 3})

	teller := connect(t, ts.URL, "teller-token")
	connect(t, ts.URL, "teller-token")
	initialize(t, ts.Client(), ts.URL, "teller-token", 1) // per principal
	initialize(t, ts.Client(), ts.URL, "teller-token", 2) // per principal
	connect(t, ts.URL, "admin-token")                     // 3 of 3
	initialize(t, ts.Client(), ts.URL, "admin-token", 3)  // total
	if err := teller.Close(); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, reason string
		want         float64
	}{
		{"toolgate_mcp_sessions", "", 2},
		{"toolgate_mcp_session_refusals_total", "per_principal", 2},
		{"toolgate_mcp_session_refusals_total", "total", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := gathered(t, reg, c.name, c.reason); got != c.want {
				t.Errorf("%s{reason=%q} = %v, want %v", c.name, c.reason, got, c.want)
			}
		})
	}
	refusals := strings.Count(logs.String(), "msg=\"mcpserver: session refused\"")
	if refusals != 3 || !strings.Contains(logs.String(), "reason=per_principal") || !strings.Contains(logs.String(), "reason=total") {
		t.Errorf("log = %q, want 3 refusals at INFO with their reasons", logs.String())
	}
	if strings.Contains(logs.String(), "-token") {
		t.Errorf("log = %q, holds a bearer token", logs.String())
	}
}

// TestSessionMetricsRegisteredTwice: a second Server on the same
// Registerer is an error that names the field, not a panic.
func TestSessionMetricsRegisteredTwice(t *testing.T) {
	f := newFixture(t)
	reg := prometheus.NewRegistry()
	opts := &mcpserver.Options{Registerer: reg, Logger: quiet}
	if _, err := mcpserver.New(f.reg, f.disc, f.gw, opts); err != nil {
		t.Fatalf("New = %v, want a server", err)
	}
	if _, err := mcpserver.New(f.reg, f.disc, f.gw, opts); err == nil || !strings.Contains(err.Error(), "Options.Registerer") {
		t.Errorf("New on the same Registerer again = %v, want an error naming Options.Registerer", err)
	}
}

// gathered returns the value of the counter or gauge name (with label
// reason, when not empty) in reg; -1 when there is no such series.
func gathered(t *testing.T, reg prometheus.Gatherer, name, reason string) float64 {
	t.Helper()
	var labels []string
	if reason != "" {
		labels = []string{"reason", reason}
	}
	if v, ok := metricstest.Value(t, reg, name, labels...); ok {
		return v
	}
	return -1
}
