// Package heapcap bounds a process's memory with a soft limit while its
// live data leaves room under it, and steps aside when it does not.
//
// Go's memory limit (runtime/debug.SetMemoryLimit) makes the collector run
// more often as the heap nears the limit instead of letting it grow to
// GOGC's goal, which for a program that keeps most of what it allocates
// (a discovery index being built) is about half as much again as its live
// data. Past the limit the runtime spends up to half the CPU collecting;
// a program whose live data outgrows the limit would then run at about
// half speed for no memory saved. [Start] watches the live heap after every
// collection: when it passes [LiftAt] of the limit, the limit is lifted (to
// what it was before [Start]) and GOGC alone paces the collector; when it
// falls under [RestoreAt], the limit is set again.
//
// An operator's GOMEMLIMIT always wins: then [Start] does nothing.
package heapcap

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The fractions of the limit at which the live heap lifts it and sets it
// again. Between them the limit stays as it is, so that a live heap near
// one of them does not switch it at every collection.
const (
	LiftAt    = 7.0 / 8
	RestoreAt = 1.0 / 2
)

// liveMetric is the heap the last collection found reachable.
const liveMetric = "/gc/heap/live:bytes"

// Cap is a soft memory limit and its watch; see [Start].
type Cap struct {
	limit int64
	prev  int64

	mu      sync.Mutex
	stopped bool
	lifted  bool
	sample  []metrics.Sample
}

// Start sets a soft memory limit of limit bytes unless getenv("GOMEMLIMIT")
// is set (or limit ≤ 0), and watches it as the package doc says until
// [Cap.Stop]. It returns nil when it set nothing; a nil *Cap's Stop does
// nothing.
func Start(limit int64, getenv func(string) string) *Cap {
	if limit <= 0 || getenv("GOMEMLIMIT") != "" {
		return nil
	}
	c := &Cap{limit: limit, sample: []metrics.Sample{{Name: liveMetric}}}
	c.prev = debug.SetMemoryLimit(limit)
	c.arm()
	return c
}

// Lifted reports whether the live heap has lifted the limit.
func (c *Cap) Lifted() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lifted
}

// Stop puts back the limit the program had before Start and ends the
// watch.
func (c *Cap) Stop() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		c.stopped = true
		debug.SetMemoryLimit(c.prev)
	}
}

// sentinel is allocated to become garbage: its cleanup runs after the
// collection that finds it unreachable. It holds a pointer so that it is
// not a tiny allocation, which may share a block with live data and never
// be cleaned up.
type sentinel struct{ _ *Cap }

// arm makes the next collection call check.
func (c *Cap) arm() {
	runtime.AddCleanup(&sentinel{}, (*Cap).check, c)
}

// check runs after a collection: it lifts or sets the limit by the live
// heap, then waits for the next collection.
func (c *Cap) check() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	metrics.Read(c.sample)
	if v := c.sample[0].Value; v.Kind() == metrics.KindUint64 {
		live := float64(v.Uint64())
		switch {
		case !c.lifted && live > LiftAt*float64(c.limit):
			c.lifted = true
			debug.SetMemoryLimit(c.prev)
		case c.lifted && live < RestoreAt*float64(c.limit):
			c.lifted = false
			debug.SetMemoryLimit(c.limit)
		}
	}
	c.arm()
}
