// Package clock holds the real-time default behind the injectable Sleep
// options of toolgate's retry loops (llm.Options.Sleep and
// runtime.Options.Sleep): both must wait the same way, so that a test's
// fake and production differ only in the clock.
package clock

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends, returning ctx's error then and nil
// after d. Its timer is released either way.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
