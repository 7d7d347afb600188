package testenv

import (
	"bytes"
	"sync"
)

// Buffer collects what goroutines or a child process write (a logger's
// output, a command's stderr) while the test reads it: Write, String and
// Await may be called concurrently. The zero value is an empty buffer
// ready for use.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	waiters []waiter
}

// waiter is an Await call still waiting for its text.
type waiter struct {
	text  []byte
	found chan struct{}
}

// Write appends p to the buffer. It never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.b.Write(p)
	waiting := b.waiters[:0]
	for _, w := range b.waiters {
		if bytes.Contains(b.b.Bytes(), w.text) {
			close(w.found)
		} else {
			waiting = append(waiting, w)
		}
	}
	b.waiters = waiting
	return n, err
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Await returns a channel that is closed once what has been written
// contains text (at once if it does already): a test waits on it for a
// line a child process logs, such as a server saying it shuts down.
func (b *Buffer) Await(text string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	found := make(chan struct{})
	if bytes.Contains(b.b.Bytes(), []byte(text)) {
		close(found)
	} else {
		b.waiters = append(b.waiters, waiter{[]byte(text), found})
	}
	return found
}
