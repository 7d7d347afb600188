package heapcap

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func noEnv(string) string { return "" }

// currentLimit reads the memory limit without changing it.
func currentLimit() int64 { return debug.SetMemoryLimit(-1) }

func TestStartRespectsGOMEMLIMIT(t *testing.T) {
	before := currentLimit()
	env := func(k string) string {
		if k == "GOMEMLIMIT" {
			return "1GiB"
		}
		return ""
	}
	c := Start(64<<20, env)
	if c != nil {
		c.Stop()
		t.Fatal("Start set a limit although GOMEMLIMIT is set")
	}
	if got := currentLimit(); got != before {
		t.Fatalf("limit %d after Start with GOMEMLIMIT set, want %d", got, before)
	}
	c.Stop() // a nil *Cap's Stop does nothing
	if Start(0, noEnv) != nil {
		t.Fatal("Start(0) returned a Cap")
	}
}

func TestStartStop(t *testing.T) {
	before := currentLimit()
	c := Start(3<<30, noEnv)
	if got := currentLimit(); got != 3<<30 {
		t.Fatalf("limit %d after Start, want %d", got, int64(3<<30))
	}
	c.Stop()
	c.Stop()
	if got := currentLimit(); got != before {
		t.Fatalf("limit %d after Stop, want %d as before Start", got, before)
	}
	runtime.GC() // a check after Stop must not set the limit again
	runtime.GC()
	if got := currentLimit(); got != before {
		t.Fatalf("limit %d after Stop and a collection, want %d", got, before)
	}
}

// waitFor runs collections until cond holds, for at most a few seconds:
// the check runs on the cleanup goroutine after a collection.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no collection made %s", what)
}

func TestLiveHeapLiftsAndRestores(t *testing.T) {
	// The watch lifts the limit to the one before Start: none.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	const limit = 64 << 20
	c := Start(limit, noEnv)
	defer c.Stop()
	if c.Lifted() {
		t.Fatal("lifted before any live data")
	}

	// Live data past [LiftAt] of the limit lifts it.
	keep := make([][]byte, 0, 64)
	for range 60 {
		b := make([]byte, 1<<20)
		b[0] = 1
		keep = append(keep, b)
	}
	waitFor(t, "the limit lifted", c.Lifted)
	if got := currentLimit(); got != math.MaxInt64 {
		t.Fatalf("limit %d while lifted, want the one before Start (%d)", got, int64(math.MaxInt64))
	}
	runtime.KeepAlive(keep)

	// Live data under [RestoreAt] sets it again.
	keep = nil
	waitFor(t, "the limit set again", func() bool { return !c.Lifted() })
	if got := currentLimit(); got != limit {
		t.Fatalf("limit %d after the live heap fell, want %d", got, limit)
	}
}
