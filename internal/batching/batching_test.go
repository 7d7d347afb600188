package batching_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/batching"
)

var errClosed = errors.New("test: queue closed")

// Items queued while a batch is being handled go out together in the next
// batch, in the order they were queued, up to Fill's max.
func TestItemsQueuedDuringABatchShareTheNext(t *testing.T) {
	q := batching.New[int](16, errClosed)
	release := make(chan struct{})
	batches := make(chan []int, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.Consume(4, func(b []int) []int { return q.Fill(b, 4) }, func(b []int) {
			batches <- slices.Clone(b)
			if b[0] == 0 {
				<-release
			}
		})
	}()
	if err := q.Submit(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	first := <-batches // the consumer now waits in handle
	for i := 1; i <= 6; i++ {
		if err := q.Submit(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	if q.Len() != 6 {
		t.Errorf("Len() = %d while the first batch is handled, want 6", q.Len())
	}
	close(release)
	got := [][]int{first, <-batches, <-batches}
	q.Close()
	<-done
	if want := [][]int{{0}, {1, 2, 3, 4}, {5, 6}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches = %v, want %v", got, want)
	}
}

// After Close, Submit returns the queue's error and queues nothing; what was
// queued before is handled, and then Consume returns.
func TestCloseDrainsAndRefuses(t *testing.T) {
	q := batching.New[int](8, errClosed)
	for i := range 5 {
		if err := q.Submit(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	q.Close()
	q.Close() // a second Close does nothing
	if err := q.Submit(context.Background(), 99); !errors.Is(err, errClosed) {
		t.Errorf("Submit after Close = %v, want %v", err, errClosed)
	}
	var got []int
	q.Consume(8, func(b []int) []int { return q.Fill(b, 8) }, func(b []int) { got = append(got, b...) })
	if !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("handled after Close = %v, want 0..4", got)
	}
}

// A Submit that cannot queue (the queue is full) returns when its context
// ends, with the context's error, and its item is never handed out.
func TestSubmitOnAFullQueueEndsWithItsContext(t *testing.T) {
	q := batching.New[int](1, errClosed)
	if err := q.Submit(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Submit(ctx, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("Submit on a full queue with a cancelled context = %v, want context.Canceled", err)
	}
	if v, ok := q.TryTake(); !ok || v != 1 {
		t.Errorf("TryTake() = %d, %v; want 1, true", v, ok)
	}
	if v, ok := q.TryTake(); ok {
		t.Errorf("TryTake() = %d, true; want nothing (the refused item is not queued)", v)
	}
}

// Many submitters and several consumers: every item is handled exactly
// once, none after Consume returned.
func TestConcurrentSubmittersAndConsumers(t *testing.T) {
	q := batching.New[int](8, errClosed)
	var mu sync.Mutex
	seen := map[int]int{}
	var consumers sync.WaitGroup
	for range 3 {
		consumers.Go(func() {
			q.Consume(8, func(b []int) []int { return q.Fill(b, 8) }, func(b []int) {
				mu.Lock()
				defer mu.Unlock()
				for _, v := range b {
					seen[v]++
				}
			})
		})
	}
	const n = 1000
	var submitters sync.WaitGroup
	for i := range n {
		submitters.Go(func() {
			if err := q.Submit(context.Background(), i); err != nil {
				t.Errorf("Submit(%d) = %v", i, err)
			}
		})
	}
	submitters.Wait()
	q.Close()
	consumers.Wait()
	if len(seen) != n {
		t.Errorf("%d distinct items handled, want %d", len(seen), n)
	}
	for v, c := range seen {
		if c != 1 {
			t.Errorf("item %d handled %d times, want once", v, c)
		}
	}
}
