//go:build !unix

package cputime

import "time"

// Process returns 0: the CPU time of the process is unknown on this
// platform.
func Process() time.Duration { return 0 }
