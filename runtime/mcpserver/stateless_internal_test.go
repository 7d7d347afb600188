package mcpserver

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/internal/runtimetest"
	"github.com/toolgate/toolgate/tools"
)

// TestPrincipalContextLifetime: a principal's context serves all its
// stateless requests while they come within the idle timeout of each
// other; one idle past it is closed (its slot freed, its watch ended) at
// the next request to the server, and the principal's next request opens
// a new one; a context with a request in flight (an open listen stream)
// is never closed.
func TestPrincipalContextLifetime(t *testing.T) {
	reg := tools.NewRegistry()
	gw, disc := runtimetest.Stack(t, reg, &gateway.Options{})
	const timeout = time.Minute
	s, err := New(reg, disc, gw, &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SessionTimeout: timeout,
		Authenticate: func(*http.Request) (tools.Principal, error) { return tools.Principal{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 7, 28, 9, 0, 0, 0, time.UTC)
	a, b := tools.Principal{ID: "a", Tenant: "t"}, tools.Principal{ID: "b", Tenant: "t"}
	serve := func(p tools.Principal, at time.Time) *session {
		t.Helper()
		ss, no := s.stateless.acquire(p, ownerKey(p), at)
		if no != nil {
			t.Fatalf("refused: %s", no.message)
		}
		s.stateless.release(ownerKey(p), at)
		return ss
	}
	first := serve(a, t0)
	if again := serve(a, t0.Add(timeout-time.Second)); again != first {
		t.Fatal("a request within the timeout got a new context")
	}
	if s.sessions.open() != 1 {
		t.Errorf("%d sessions counted, want 1 for one context", s.sessions.open())
	}
	serve(b, t0.Add(2*timeout)) // sweeps a's idle context
	select {
	case <-first.done:
	default:
		t.Error("the idle context was not closed")
	}
	if s.sessions.open() != 1 {
		t.Errorf("%d sessions counted after the sweep, want 1 (b's)", s.sessions.open())
	}
	if next := serve(a, t0.Add(2*timeout)); next == first || next.id == first.id {
		t.Error("a's request after the timeout reused the closed context")
	}

	// A request in flight keeps its context open past the timeout.
	held, _ := s.stateless.acquire(b, ownerKey(b), t0.Add(3*timeout))
	serve(a, t0.Add(10*timeout))
	if again := serve(b, t0.Add(10*timeout)); again != held {
		t.Error("a context with a request in flight was closed")
	}
}
