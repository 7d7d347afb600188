package testenv

import (
	"bytes"
	"sync"
)

// Buffer collects what goroutines or a child process write (a logger's
// output, a command's stderr) while the test reads it: Write and String may
// be called concurrently. The zero value is an empty buffer ready for use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer. It never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
