//go:build !unix

package storetest

import "time"

// cpuTime is unknown on this platform.
func cpuTime() time.Duration { return 0 }
