// Package batching is the queue behind toolgate's group commit: callers on
// many goroutines submit work, and one or a few consumers take it in
// batches, so that the writes that arrive while one batch is being
// committed share the next commit. sqliteutil.Writer runs each batch in one
// SQLite transaction (one fsync); the Redis store sends each as one
// pipeline (one round trip).
//
// A user makes a [Queue] with New, runs Consume on one goroutine per
// consumer with its own fill rule and batch handler, has callers Submit
// items that carry their own reply channel, and calls Close when done: the
// consumers then handle what was queued and return.
package batching

import (
	"context"
	"sync"
)

// Queue hands the items that callers submit to its consumers in batches.
// Submit, TryTake, Fill and Close may be called concurrently, and several
// goroutines may Consume one queue; each item goes to exactly one batch.
type Queue[T any] struct {
	items     chan T
	stop      chan struct{}
	closedErr error

	mu     sync.RWMutex // held for reading while sending on items
	closed bool
}

// New returns a queue that holds up to capacity items not yet taken (a
// Submit beyond that waits for a consumer). Submit returns closedErr once
// the queue is closed.
func New[T any](capacity int, closedErr error) *Queue[T] {
	return &Queue[T]{items: make(chan T, capacity), stop: make(chan struct{}), closedErr: closedErr}
}

// Submit queues v for a consumer. It returns the queue's closed error after
// Close, or ctx's error when ctx ends while the queue is full; in both cases
// v is never handed out.
func (q *Queue[T]) Submit(ctx context.Context, v T) error {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return q.closedErr
	}
	select {
	case q.items <- v:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TryTake returns a queued item without waiting, or false when none is
// queued.
func (q *Queue[T]) TryTake() (T, bool) {
	select {
	case v := <-q.items:
		return v, true
	default:
		var zero T
		return zero, false
	}
}

// Fill appends queued items to batch, without waiting, until batch holds
// max items or none is queued, and returns it.
func (q *Queue[T]) Fill(batch []T, max int) []T {
	for len(batch) < max {
		v, ok := q.TryTake()
		if !ok {
			break
		}
		batch = append(batch, v)
	}
	return batch
}

// Consume hands batches to handle until the queue is closed and empty:
// it waits for a first item, lets fill add more (with TryTake or Fill) and
// calls handle with the batch, which handle must not retain (its array is
// reused; max is its initial capacity). After Close, Consume handles every
// item still queued and then returns.
func (q *Queue[T]) Consume(max int, fill func(batch []T) []T, handle func(batch []T)) {
	batch := make([]T, 0, max)
	for {
		select {
		case v := <-q.items:
			batch = fill(append(batch[:0], v))
			handle(batch)
		case <-q.stop:
			// Close holds the lock while it closes stop, so nothing is
			// sent after it: what is queued now is all there will be.
			for {
				v, ok := q.TryTake()
				if !ok {
					return
				}
				handle([]T{v})
			}
		}
	}
}

// Len returns how many items are queued and not yet taken.
func (q *Queue[T]) Len() int { return len(q.items) }

// Close makes every later Submit fail; the consumers handle what was
// queued before it and return. It does not wait for them. Closing a closed
// queue does nothing.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.stop)
	}
}
