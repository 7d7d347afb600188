// Package ledgertest is the conformance suite of the transfer example's
// ledgers: package ledger's SQLite ledger and package pgledger's PostgreSQL
// one answer every request alike (one transaction per key, refusals as
// [*tools.DomainError] values replayed per key, money conserved), and each
// backend's tests run Run.
//
//	func TestConformance(t *testing.T) {
//		ledgertest.Run(t, func(t *testing.T) ledgertest.Ledger { return open(t) })
//	}
package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/examples/transfer/ledger"
	"github.com/toolgate/toolgate/tools"
)

// Ledger is what the suite calls of a ledger. open must return a new
// ledger seeded with the defaults (ten accounts of 1000.00 USD), closed
// when the test ends.
type Ledger interface {
	Balance(ctx context.Context, account string) (ledger.Cents, error)
	Total(ctx context.Context) (ledger.Cents, error)
	ListTransactions(ctx context.Context, account string, limit int) ([]ledger.Transaction, error)
	AllTransactions(ctx context.Context) ([]ledger.Transaction, error)
	Transfer(ctx context.Context, key, src, dst string, amount ledger.Cents) (ledger.Transaction, error)
	Refund(ctx context.Context, key, txID string) (ledger.Transaction, error)
}

// Run runs the suite, each check on a ledger of its own from open.
func Run(t *testing.T, open func(t *testing.T) Ledger) {
	for _, c := range []struct {
		name  string
		check func(*testing.T, Ledger)
	}{
		{"TransferOncePerKey", testTransferOncePerKey},
		{"ConcurrentAttemptsOfOneKey", testConcurrentAttemptsOfOneKey},
		{"RefusalsAreDomainErrorsAndReplayed", testRefusals},
		{"Refund", testRefund},
		{"ConcurrentTransfersConserveMoney", testConcurrentTransfers},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, open(t)) })
	}
}

// Code is err's [*tools.DomainError] code, or "" when err is not one.
func Code(err error) string {
	var de *tools.DomainError
	if errors.As(err, &de) {
		return de.Code
	}
	return ""
}

// Balance is l.Balance of acc; an error fails the test.
func Balance(t *testing.T, l Ledger, acc string) ledger.Cents {
	t.Helper()
	b, err := l.Balance(context.Background(), acc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testTransferOncePerKey(t *testing.T, l Ledger) {
	ctx := context.Background()
	first, err := l.Transfer(ctx, "key-a", "ACC-00001", "ACC-00002", 12345)
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.Transfer(ctx, "key-a", "ACC-00001", "ACC-00002", 12345)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || !again.Created.Equal(first.Created) {
		t.Errorf("repeated key = %+v, want the original %+v", again, first)
	}
	if got := Balance(t, l, "ACC-00001"); got != 100000-12345 {
		t.Errorf("Balance(ACC-00001) = %s, want 876.55", got)
	}
	if got := Balance(t, l, "ACC-00002"); got != 100000+12345 {
		t.Errorf("Balance(ACC-00002) = %s, want 1123.45", got)
	}
	_, err = l.Transfer(ctx, "key-a", "ACC-00001", "ACC-00003", 12345)
	if !errors.Is(err, ledger.ErrKeyReuse) || !tools.IsNoEffect(err) {
		t.Errorf("same key, other request: error = %v, want ErrKeyReuse marked NoEffect", err)
	}
	if _, err := l.Transfer(ctx, "", "ACC-00001", "ACC-00002", 1); !errors.Is(err, ledger.ErrNoKey) {
		t.Errorf("empty key: error = %v, want ErrNoKey", err)
	}
	all, err := l.AllTransactions(ctx)
	if err != nil || len(all) != 1 || all[0].Key != "key-a" || all[0].Amount != 12345 {
		t.Errorf("AllTransactions = %+v, %v; want the one key-a transfer", all, err)
	}
}

// Sixteen attempts of one key at once commit one transaction.
func testConcurrentAttemptsOfOneKey(t *testing.T, l Ledger) {
	ctx := context.Background()
	var wg sync.WaitGroup
	ids := make([]string, 16)
	for i := range ids {
		wg.Go(func() {
			tx, err := l.Transfer(ctx, "k1", "ACC-00001", "ACC-00002", 12345)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = tx.ID
		})
	}
	wg.Wait()
	for i, id := range ids {
		if id != ids[0] || id == "" {
			t.Errorf("attempt %d got transaction %q, attempt 0 %q; want one transaction", i, id, ids[0])
		}
	}
	if got := Balance(t, l, "ACC-00001"); got != 100000-12345 {
		t.Errorf("Balance(ACC-00001) = %s after 16 attempts with one key, want 876.55", got)
	}
	if got := Balance(t, l, "ACC-00002"); got != 100000+12345 {
		t.Errorf("Balance(ACC-00002) = %s, want 1123.45", got)
	}
}

func testRefusals(t *testing.T, l Ledger) {
	ctx := context.Background()
	tests := []struct {
		key, src, dst string
		amount        ledger.Cents
		want          string
	}{
		{"r1", "ACC-00001", "ACC-00002", 100001, ledger.CodeInsufficientFunds},
		{"r2", "ACC-00001", "ACC-00099", 1, ledger.CodeUnknownAccount},
		{"r3", "ACC-00099", "ACC-00001", 1, ledger.CodeUnknownAccount},
		{"r4", "ACC-00001", "ACC-00001", 1, ledger.CodeSameAccount},
		{"r5", "ACC-99999", "ACC-00001", 1, ledger.CodeUnknownAccount},
		{"r6", "ACC-00001", "ACC-99999", 1, ledger.CodeUnknownAccount},
	}
	for _, tt := range tests {
		for range 2 { // the second answer is the recorded refusal
			_, err := l.Transfer(ctx, tt.key, tt.src, tt.dst, tt.amount)
			if got := Code(err); got != tt.want {
				t.Errorf("Transfer(%s, %s, %s, %s) error = %v, want code %s", tt.key, tt.src, tt.dst, tt.amount, err, tt.want)
			}
		}
	}
	// Money arrives on ACC-00001; the refused key still answers with its refusal.
	if _, err := l.Transfer(ctx, "fund", "ACC-00003", "ACC-00001", 50000); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Transfer(ctx, "r1", "ACC-00001", "ACC-00002", 100001); Code(err) != ledger.CodeInsufficientFunds {
		t.Errorf("retried refused key: error = %v, want the recorded %s", err, ledger.CodeInsufficientFunds)
	}
	if total, err := l.Total(ctx); err != nil || total != 1000000 {
		t.Errorf("Total() = %s, %v; want 10000.00", total, err)
	}
}

func testRefund(t *testing.T, l Ledger) {
	ctx := context.Background()
	tr, err := l.Transfer(ctx, "t1", "ACC-00004", "ACC-00005", 30000)
	if err != nil {
		t.Fatal(err)
	}
	rf, err := l.Refund(ctx, "f1", tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rf.Source != "ACC-00005" || rf.Target != "ACC-00004" || rf.Amount != 30000 || rf.RefundOf != tr.ID {
		t.Errorf("Refund = %+v, want 300.00 from ACC-00005 to ACC-00004 refunding %s", rf, tr.ID)
	}
	if again, err := l.Refund(ctx, "f1", tr.ID); err != nil || again.ID != rf.ID {
		t.Errorf("repeated refund key = %+v, %v, want the original %s", again, err, rf.ID)
	}
	for _, acc := range []string{"ACC-00004", "ACC-00005"} {
		if got := Balance(t, l, acc); got != 100000 {
			t.Errorf("Balance(%s) after transfer and refund = %s, want 1000.00", acc, got)
		}
	}
	cases := []struct{ key, id, want string }{
		{"f2", tr.ID, ledger.CodeAlreadyRefunded},
		{"f3", rf.ID, ledger.CodeNotRefundable},
		{"f4", "TX-nope", ledger.CodeUnknownTx},
	}
	for _, c := range cases {
		if _, err := l.Refund(ctx, c.key, c.id); Code(err) != c.want {
			t.Errorf("Refund(%s, %s) error = %v, want code %s", c.key, c.id, err, c.want)
		}
	}
	for _, limit := range []int{10, 0} {
		list, err := l.ListTransactions(ctx, "ACC-00004", limit)
		if err != nil || len(list) != 2 || list[0].ID != rf.ID || list[1].ID != tr.ID {
			t.Errorf("ListTransactions(ACC-00004, %d) = %+v, %v; want [refund, transfer]", limit, list, err)
		}
	}
	if _, err := l.ListTransactions(ctx, "ACC-99999", 0); Code(err) != ledger.CodeUnknownAccount {
		t.Errorf("ListTransactions(unknown) = %v, want %s", err, ledger.CodeUnknownAccount)
	}
}

// Concurrent transfers with distinct keys and retries of each key: every key
// applies once and the sum of balances is conserved.
func testConcurrentTransfers(t *testing.T, l Ledger) {
	ctx := context.Background()
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		for range 2 {
			wg.Go(func() {
				src := fmt.Sprintf("ACC-%05d", i%10+1)
				dst := fmt.Sprintf("ACC-%05d", (i+3)%10+1)
				if _, err := l.Transfer(ctx, fmt.Sprintf("c%d", i), src, dst, ledger.Cents(100+i)); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all, err := l.AllTransactions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Errorf("len(AllTransactions()) = %d, want %d (one per key)", len(all), n)
	}
	if total, _ := l.Total(ctx); total != 1000000 {
		t.Errorf("Total() = %s, want 10000.00", total)
	}
}
