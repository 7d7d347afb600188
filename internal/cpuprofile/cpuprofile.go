// Package cpuprofile starts and stops the CPU profile that the
// measuring commands (bench, internal/bigcatalog/measure) write for a
// -cpuprofile flag:
//
//	stop, err := cpuprofile.Start(path) // "" profiles nothing
//	if err != nil {
//		return err
//	}
//	work()
//	if err := stop(); err != nil {
//		return err
//	}
package cpuprofile

import (
	"os"
	"runtime/pprof"
)

// Start starts a CPU profile written to the file at path and returns the
// function that ends it and closes the file; an empty path profiles
// nothing, and its stop does nothing. The error is the file's creation's
// or the profiler's (one profile at a time per process). Stop must be
// called once.
func Start(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
