package wire

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/llm"
)

// Idle bounds the silence of one streamed response: the time to its first
// event and between two events. A server that sends nothing, or only
// keep-alive comments (which are no events), would otherwise hold the
// request for as long as the caller's context allows.
type Idle struct {
	backend string
	d       time.Duration
	timer   *time.Timer // nil when d is negative: no bound
	fired   atomic.Bool
	cancel  context.CancelFunc
}

// WatchIdle returns a context derived from ctx for the stream of backend,
// and its watchdog: the context ends when d passes without a call of
// [Idle.Event]. d 0 means [llm.DefaultStreamIdleTimeout]; a negative d
// means no bound. The caller must call [Idle.Stop].
func WatchIdle(ctx context.Context, backend string, d time.Duration) (context.Context, *Idle) {
	if d == 0 {
		d = llm.DefaultStreamIdleTimeout
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Idle{backend: backend, d: d, cancel: cancel}
	if d > 0 {
		w.timer = time.AfterFunc(d, func() {
			w.fired.Store(true)
			cancel()
		})
	}
	return ctx, w
}

// Event notes that the stream sent an event: the silence starts again.
func (w *Idle) Event() {
	if w.timer != nil && !w.fired.Load() {
		w.timer.Reset(w.d)
	}
}

// Stop releases the watchdog and its context.
func (w *Idle) Stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.cancel()
}

// Err returns an *[llm.IdleError] when the watchdog ended the stream, else
// err.
func (w *Idle) Err(err error) error {
	if w.fired.Load() {
		return &llm.IdleError{Backend: w.backend, Timeout: w.d}
	}
	return err
}
