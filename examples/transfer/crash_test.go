package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/examples/transfer/ledger"
)

type crashTransfer struct {
	step     int
	src, dst string
	amount   ledger.Cents
	body     string
}

type crashAnswer struct {
	txID, key string
	cached    bool
}

// TestCrashExactlyOnce starts serve, sends many transfers concurrently,
// kills the process with SIGKILL mid-flight, restarts it on the same data
// and re-sends every request (same session, step and arguments) until each
// has a definitive answer. Then the ledger must show every transfer applied
// exactly once, to the cent: no transfer twice, none acknowledged and lost.
func TestCrashExactlyOnce(t *testing.T) {
	const (
		n       = 300
		workers = 32
		killAt  = n / 3 // acknowledged transfers before the kill
	)
	data := t.TempDir()
	tokens := writeTokens(t)
	// A short lease lets retries take over the calls the crash left in
	// progress within seconds instead of the default 35s.
	leaseFlags := []string{"--tool-timeout", "2s", "--lease-grace", "1s"}

	// Ring transfers of known amounts: no account can run dry (each sends at
	// most 30 transfers of at most 2.99), so every transfer must succeed.
	reqs := make([]crashTransfer, n)
	for i := range reqs {
		r := crashTransfer{step: i, src: fmt.Sprintf("ACC-%05d", i%10+1), dst: fmt.Sprintf("ACC-%05d", (i+1)%10+1),
			amount: ledger.Cents(100 + i%200)}
		r.body = callBody("crash", r.step, "bank/transfer_funds",
			fmt.Sprintf(`{"source_account":%q,"target_account":%q,"amount":%s}`, r.src, r.dst, r.amount))
		reqs[i] = r
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Phase 1: send everything once; SIGKILL after killAt acknowledgements.
	srv := startServe(t, data, tokens, leaseFlags...)
	acked := make([]*crashAnswer, n)
	var ackCount atomic.Int32
	var killOnce sync.Once
	killed := make(chan struct{})
	parallel(workers, n, func(i int) {
		select {
		case <-killed:
			return // the process is gone; phase 2 sends it
		default:
		}
		r, err := post(ctx, client, srv.base+"/v1/tools/call", "alice-token", reqs[i].body)
		if err != nil || r.status != http.StatusOK {
			return // unknown outcome (in flight at the kill) or refused before the kill
		}
		acked[i] = answerOf(t, r)
		if ackCount.Add(1) == killAt {
			killOnce.Do(func() {
				srv.Cmd.Process.Kill() // SIGKILL: no shutdown, no flush
				close(killed)
			})
		}
	})
	killOnce.Do(func() { srv.Cmd.Process.Kill(); close(killed) })
	srv.Wait()
	unacked := 0
	for _, a := range acked {
		if a == nil {
			unacked++
		}
	}
	// What the crash left: transfers the ledger committed whose answer never
	// reached the client are the ones a careless retry would apply twice.
	l, err := ledger.Open(ctx, filepath.Join(data, "ledger.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := l.AllTransactions(ctx)
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("at SIGKILL: %d acknowledged, %d committed in the ledger, %d unknown or unsent", n-unacked, len(committed), unacked)
	if unacked == 0 {
		t.Fatal("every transfer was acknowledged before the kill; the test did not crash mid-flight")
	}

	// Phase 2: restart on the same data and re-send every request until it
	// gets a definitive answer.
	srv = startServe(t, data, tokens, leaseFlags...)
	final := make([]*crashAnswer, n)
	var retries atomic.Int32
	parallel(workers, n, func(i int) {
		for ctx.Err() == nil {
			r, err := post(ctx, client, srv.base+"/v1/tools/call", "alice-token", reqs[i].body)
			if err == nil && r.status == http.StatusOK {
				final[i] = answerOf(t, r)
				return
			}
			if err == nil && !r.Retryable {
				t.Errorf("transfer %d: status %d %s %s: not retryable", i, r.status, r.ErrorType, r.Message)
				return
			}
			retries.Add(1)
			wait := 50 * time.Millisecond
			if err == nil && r.RetryAfterSec > 0 {
				wait = time.Duration(r.RetryAfterSec * float64(time.Second))
			}
			select { // honour the server's retry-after hint, as a client must
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		t.Errorf("transfer %d: no definitive answer before the deadline", i)
	})
	t.Logf("after restart: %d retries (IN_PROGRESS until the crashed leases expired)", retries.Load())
	for i := range n {
		a, f := acked[i], final[i]
		if f == nil {
			continue // reported above
		}
		if a != nil && (f.txID != a.txID || f.key != a.key || !f.cached) {
			t.Errorf("transfer %d was acknowledged as %+v before the crash but answered %+v after it", i, *a, *f)
		}
	}

	// Balances over HTTP, then the ledger file itself after a clean stop.
	for acc := 1; acc <= 10; acc++ {
		r, err := post(ctx, client, srv.base+"/v1/tools/call", "alice-token",
			callBody("crash-check", acc, "bank/get_balance", fmt.Sprintf(`{"account":"ACC-%05d"}`, acc)))
		if err != nil || r.status != http.StatusOK {
			t.Fatalf("get_balance ACC-%05d: %+v, %v", acc, r, err)
		}
	}
	srv.stop(t)

	all := make([]*mpTransfer, n)
	for i, r := range reqs {
		all[i] = &mpTransfer{src: r.src, dst: r.dst, amount: r.amount, body: r.body, answer: final[i]}
	}
	l, err = ledger.Open(ctx, filepath.Join(data, "ledger.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkLedger(ctx, t, l, all)
}

func answerOf(t *testing.T, r *reply) *crashAnswer {
	var res struct {
		ID     string      `json:"transaction_id"`
		Amount json.Number `json:"amount"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || res.ID == "" {
		t.Errorf("transfer result %s: %v", r.Result, err)
	}
	return &crashAnswer{txID: res.ID, key: r.IdempotencyKey, cached: r.Cached}
}

// parallel calls f(0..n-1) from workers goroutines and waits.
func parallel(workers, n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
