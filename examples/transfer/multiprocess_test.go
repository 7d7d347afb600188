package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/examples/transfer/ledger"
	"github.com/toolgate/toolgate/examples/transfer/pgledger"
	"github.com/toolgate/toolgate/internal/testservices"
)

// The multi-process tests run three `transfer serve` processes sharing one
// gateway store (a private Redis or PostgreSQL server on loopback, which the
// test may kill) and one ledger (with Redis, ledger.db in a shared --data
// folder; with PostgreSQL, pgledger in the store's database), and
// check that the exactly-once guarantee holds across processes: duplicates
// spread over the processes execute once, a process SIGKILLed mid-flight
// leaves nothing applied twice or lost, and a store outage fails calls
// closed (retryable, nothing executed) until the store is back.

func TestMultiProcessRedis(t *testing.T) {
	testMultiProcess(t, testservices.NewRedis(t), false)
}

func TestMultiProcessPostgres(t *testing.T) {
	testMultiProcess(t, testservices.NewPostgres(t), true)
}

// cluster is the three serve processes; a slot is replaced when its
// process is restarted.
type cluster struct {
	procs [3]atomic.Pointer[server]
}

func (c *cluster) base(i int) string { return c.procs[i%3].Load().base }

// mpTransfer is one transfer the tests send, and its definitive answer.
type mpTransfer struct {
	src, dst string
	amount   ledger.Cents
	body     string
	answer   *crashAnswer
}

func mpTransfers(session string, n int) []*mpTransfer {
	out := make([]*mpTransfer, n)
	for i := range out {
		r := &mpTransfer{src: fmt.Sprintf("ACC-%05d", i%10+1), dst: fmt.Sprintf("ACC-%05d", (i+3)%10+1), amount: ledger.Cents(101 + i%97)}
		r.body = callBody(session, i, "bank/transfer_funds",
			fmt.Sprintf(`{"source_account":%q,"target_account":%q,"amount":%s}`, r.src, r.dst, r.amount))
		out[i] = r
	}
	return out
}

// settle sends the call to the processes in turn, starting at first, until
// one gives a definitive answer (200), honouring retry-after hints. Every
// refusal on the way must be retryable (store outage, IN_PROGRESS while a
// dead process's lease runs out); a connection error means that process is
// down, so the next one is tried. It returns the answer, or nil with the
// failure reported.
func settle(ctx context.Context, t *testing.T, c *cluster, client *http.Client, first int, body string, refusals *atomic.Int32) *crashAnswer {
	for attempt := first; ctx.Err() == nil; attempt++ {
		r, err := post(ctx, client, c.base(attempt)+"/v1/tools/call", "alice-token", body)
		if err == nil && r.status == http.StatusOK {
			return answerOf(t, r)
		}
		wait := 20 * time.Millisecond
		if err == nil {
			if !r.Retryable {
				t.Errorf("call %s: status %d %s %q: not retryable", body, r.status, r.ErrorType, r.Message)
				return nil
			}
			if r.RetryAfterSec > 0 {
				wait = time.Duration(r.RetryAfterSec * float64(time.Second))
			}
			if refusals != nil {
				refusals.Add(1)
			}
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
	t.Errorf("call %s: no definitive answer before the deadline", body)
	return nil
}

// testLedger is what the checks read of either ledger.
type testLedger interface {
	AllTransactions(context.Context) ([]ledger.Transaction, error)
	Balance(context.Context, string) (ledger.Cents, error)
	Total(context.Context) (ledger.Cents, error)
	Close() error
}

func testMultiProcess(t *testing.T, store *testservices.Server, pg bool) {
	data := t.TempDir()
	openLedger := func(ctx context.Context) testLedger {
		t.Helper()
		var l testLedger
		var err error
		if pg {
			l, err = pgledger.Open(ctx, store.URL, nil)
		} else {
			l, err = ledger.Open(ctx, filepath.Join(data, "ledger.db"), nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	transactions := func(ctx context.Context) []ledger.Transaction {
		t.Helper()
		l := openLedger(ctx)
		defer l.Close()
		all, err := l.AllTransactions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return all
	}
	tokens := writeTokens(t)
	// A short lease lets the survivors take over the killed process's calls
	// within seconds.
	flags := []string{"--store", store.URL, "--tool-timeout", "2s", "--lease-grace", "1s"}
	var c cluster
	for i := range c.procs {
		c.procs[i].Store(startServe(t, data, tokens, flags...))
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var all []*mpTransfer

	// 1. 64 concurrent duplicates of one transfer, spread over the three
	// processes: one execution, one uncached answer, the same transaction
	// for all.
	dup := mpTransfers("mp-dup", 1)[0]
	answers := make([]*crashAnswer, 64)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = settle(ctx, t, &c, client, i, dup.body, nil) })
	}
	wg.Wait()
	uncached := 0
	for i, a := range answers {
		if a == nil {
			t.FailNow()
		}
		if !a.cached {
			uncached++
		}
		if a.txID != answers[0].txID || a.key != answers[0].key {
			t.Errorf("duplicate %d answered %+v, duplicate 0 %+v; want one transaction", i, *a, *answers[0])
		}
	}
	if uncached != 1 {
		t.Errorf("%d of 64 duplicates were executed (uncached), want exactly 1", uncached)
	}
	dup.answer = answers[0]
	all = append(all, dup)

	// 2. Load over the three processes; SIGKILL one mid-flight, restart it;
	// every transfer ends with one definitive answer.
	const n, workers = 150, 32
	kill := mpTransfers("mp-kill", n)
	var acked atomic.Int32
	killed := make(chan struct{})
	var refusals atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		parallel(workers, n, func(i int) {
			kill[i].answer = settle(ctx, t, &c, client, i, kill[i].body, &refusals)
			if acked.Add(1) == n/3 {
				c.procs[1].Load().Cmd.Process.Kill() // SIGKILL: no shutdown, no flush
				close(killed)
			}
		})
	}()
	select {
	case <-killed:
	case <-done:
		t.Fatal("the load finished without the kill")
	}
	victim := c.procs[1].Load()
	victim.Wait()
	c.procs[1].Store(startServe(t, data, tokens, flags...))
	<-done
	t.Logf("kill: %d transfers, %d retryable refusals on the way (IN_PROGRESS until the dead process's leases expired)", n, refusals.Load())
	all = append(all, kill...)
	// Every answer replays from any process: the store is shared.
	for i, r := range kill {
		if r.answer == nil {
			t.FailNow()
		}
		if a := settle(ctx, t, &c, client, i+1, r.body, nil); a == nil || a.txID != r.answer.txID || !a.cached {
			t.Errorf("replay of transfer %d from another process = %+v, want cached %s", i, a, r.answer.txID)
		}
	}

	// 3. Store outage under load: calls fail closed with a retryable error,
	// nothing executes without a claim, and service resumes once the store
	// is back.
	before := transactions(ctx)
	load := mpTransfers("mp-outage", 60)
	refusals.Store(0)
	acked.Store(0)
	stopped := make(chan struct{})
	done = make(chan struct{})
	go func() {
		defer close(done)
		parallel(16, len(load), func(i int) {
			load[i].answer = settle(ctx, t, &c, client, i, load[i].body, &refusals)
			if acked.Add(1) == 20 {
				close(stopped)
			}
		})
	}()
	select {
	case <-stopped:
	case <-done:
		t.Fatal("the load finished before the outage")
	}
	if err := store.Stop(); err != nil {
		t.Fatal(err)
	}
	// Probes sent once each while the store is down: every one refused,
	// retryable, and none reaches the ledger.
	probes := mpTransfers("mp-probe", 8)
	probeKeys := map[string]bool{}
	for i, p := range probes {
		r, err := post(ctx, client, c.base(i)+"/v1/tools/call", "alice-token", p.body)
		if err != nil {
			t.Fatalf("probe %d during the outage: %v", i, err)
		}
		if r.status == http.StatusOK || !r.Retryable || (r.ErrorType != "INTERNAL_ERROR" && r.ErrorType != "DOWNSTREAM_FAILURE") {
			t.Errorf("probe %d during the outage = %d %s retryable=%v %q; want a retryable INTERNAL_ERROR or DOWNSTREAM_FAILURE",
				i, r.status, r.ErrorType, r.Retryable, r.Message)
		}
		if r.IdempotencyKey != "" {
			probeKeys[r.IdempotencyKey] = true
		}
	}
	if err := store.Start(); err != nil {
		t.Fatal(err)
	}
	// The probes have not been sent again yet: none may be in the ledger
	// (read after the restart, as a PostgreSQL ledger was down too).
	for _, tx := range transactions(ctx) {
		if probeKeys[tx.Key] {
			t.Errorf("transfer %s (key %s) ran while the store was down", tx.ID, tx.Key)
		}
	}
	<-done
	for i, p := range probes {
		p.answer = settle(ctx, t, &c, client, i, p.body, nil)
	}
	t.Logf("outage: %d ledger transactions before, %d refusals during the outage, %d probe keys checked", len(before), refusals.Load(), len(probeKeys))
	all = append(append(all, load...), probes...)

	for i := range c.procs {
		c.procs[i].Load().stop(t)
	}
	l := openLedger(ctx)
	defer l.Close()
	checkLedger(ctx, t, l, all)
}

// checkLedger checks that the ledger holds every transfer exactly once, as
// answered, and balances exact to the cent.
func checkLedger(ctx context.Context, t *testing.T, l testLedger, all []*mpTransfer) {
	t.Helper()
	txs, err := l.AllTransactions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]ledger.Transaction{}
	for _, tx := range txs {
		if _, dup := byKey[tx.Key]; dup {
			t.Errorf("key %s applied twice", tx.Key)
		}
		byKey[tx.Key] = tx
	}
	if len(txs) != len(all) {
		t.Errorf("ledger holds %d transactions, want %d (one per transfer)", len(txs), len(all))
	}
	want := map[string]ledger.Cents{}
	for i := 1; i <= 10; i++ {
		want[fmt.Sprintf("ACC-%05d", i)] = 100000
	}
	for i, r := range all {
		want[r.src] -= r.amount
		want[r.dst] += r.amount
		if r.answer == nil {
			continue // reported
		}
		tx, ok := byKey[r.answer.key]
		if !ok || tx.ID != r.answer.txID || tx.Amount != r.amount || tx.Source != r.src || tx.Target != r.dst {
			t.Errorf("transfer %d answered %s (key %s) but the ledger has %+v (found %v)", i, r.answer.txID, r.answer.key, tx, ok)
		}
	}
	for acc, w := range want {
		t.Run(acc, func(t *testing.T) {
			got, err := l.Balance(ctx, acc)
			if err != nil {
				t.Fatal(err)
			}
			if got != w {
				t.Errorf("Balance(%s) = %s, want %s (every transfer exactly once)", acc, got, w)
			}
		})
	}
	if total, err := l.Total(ctx); err != nil || total != 1000000 {
		t.Errorf("Total() = %s, %v; want 10000.00", total, err)
	}
}
