//go:build !linux

package mask

import "time"

// threadCPU falls back to wall time where the thread clock is not read.
func threadCPU() int64 { return time.Now().UnixNano() }
