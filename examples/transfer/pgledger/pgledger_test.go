package pgledger_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/examples/transfer/ledger"
	"github.com/toolgate/toolgate/examples/transfer/pgledger"
	"github.com/toolgate/toolgate/internal/testservices"
	"github.com/toolgate/toolgate/tools"
)

func TestMain(m *testing.M) { os.Exit(testservices.Main(m)) }

var schemas atomic.Int64

// open returns a ledger in a schema of its own, dropped when the test ends.
func open(t *testing.T) *pgledger.Ledger {
	t.Helper()
	ctx := context.Background()
	url := testservices.PostgresURL(t)
	schema := fmt.Sprintf("ledger_test_%d_%d", os.Getpid(), schemas.Add(1))
	l, err := pgledger.Open(ctx, url, &pgledger.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return l
}

func code(err error) string {
	var de *tools.DomainError
	if errors.As(err, &de) {
		return de.Code
	}
	return fmt.Sprint(err)
}

func balance(t *testing.T, l *pgledger.Ledger, acc string) ledger.Cents {
	t.Helper()
	b, err := l.Balance(context.Background(), acc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTransferOncePerKey(t *testing.T) {
	ctx := context.Background()
	l := open(t)
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
	if got := balance(t, l, "ACC-00001"); got != 100000-12345 {
		t.Errorf("Balance(ACC-00001) = %s after 16 attempts with one key, want 876.55", got)
	}
	if got := balance(t, l, "ACC-00002"); got != 100000+12345 {
		t.Errorf("Balance(ACC-00002) = %s, want 1123.45", got)
	}
	if _, err := l.Transfer(ctx, "k1", "ACC-00001", "ACC-00003", 12345); !errors.Is(err, ledger.ErrKeyReuse) || !tools.IsNoEffect(err) {
		t.Errorf("Transfer(k1, other target) = %v, want ErrKeyReuse marked NoEffect", err)
	}
	if _, err := l.Transfer(ctx, "", "ACC-00001", "ACC-00003", 1); !errors.Is(err, ledger.ErrNoKey) {
		t.Errorf("Transfer(no key) = %v, want ErrNoKey", err)
	}
	all, err := l.AllTransactions(ctx)
	if err != nil || len(all) != 1 || all[0].Key != "k1" || all[0].Amount != 12345 {
		t.Errorf("AllTransactions = %+v, %v; want the one k1 transfer", all, err)
	}
}

func TestRefusalsReplay(t *testing.T) {
	ctx := context.Background()
	l := open(t)
	cases := []struct {
		key, src, dst string
		amount        ledger.Cents
		want          string
	}{
		{"r1", "ACC-00001", "ACC-00002", 100001, ledger.CodeInsufficientFunds},
		{"r2", "ACC-00001", "ACC-00001", 1, ledger.CodeSameAccount},
		{"r3", "ACC-99999", "ACC-00001", 1, ledger.CodeUnknownAccount},
		{"r4", "ACC-00001", "ACC-99999", 1, ledger.CodeUnknownAccount},
	}
	for _, c := range cases {
		for range 2 { // the second answer is the recorded refusal
			if _, err := l.Transfer(ctx, c.key, c.src, c.dst, c.amount); code(err) != c.want {
				t.Errorf("Transfer(%s, %s→%s, %s) = %v, want %s", c.key, c.src, c.dst, c.amount, err, c.want)
			}
		}
	}
	// Funds arrive; the refused key still answers with its refusal.
	if _, err := l.Transfer(ctx, "in", "ACC-00002", "ACC-00001", 50000); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Transfer(ctx, "r1", "ACC-00001", "ACC-00002", 100001); code(err) != ledger.CodeInsufficientFunds {
		t.Errorf("replay of a refused key after a deposit = %v, want the recorded %s", err, ledger.CodeInsufficientFunds)
	}
	if total, err := l.Total(ctx); err != nil || total != 1000000 {
		t.Errorf("Total() = %s, %v; want 10000.00", total, err)
	}
}

func TestRefund(t *testing.T) {
	ctx := context.Background()
	l := open(t)
	tx, err := l.Transfer(ctx, "t1", "ACC-00001", "ACC-00002", 2500)
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Refund(ctx, "f1", tx.ID)
	if err != nil || r.RefundOf != tx.ID || r.Source != "ACC-00002" || r.Target != "ACC-00001" || r.Amount != 2500 {
		t.Fatalf("Refund = %+v, %v; want 25.00 back from ACC-00002 to ACC-00001", r, err)
	}
	if again, err := l.Refund(ctx, "f1", tx.ID); err != nil || again.ID != r.ID {
		t.Errorf("Refund with the same key = %+v, %v; want the original refund %s", again, err, r.ID)
	}
	for _, c := range []struct{ key, id, want string }{
		{"f2", tx.ID, ledger.CodeAlreadyRefunded},
		{"f3", r.ID, ledger.CodeNotRefundable},
		{"f4", "TX-unknown", ledger.CodeUnknownTx},
	} {
		if _, err := l.Refund(ctx, c.key, c.id); code(err) != c.want {
			t.Errorf("Refund(%s, %s) = %v, want %s", c.key, c.id, err, c.want)
		}
	}
	if got := balance(t, l, "ACC-00001"); got != 100000 {
		t.Errorf("Balance(ACC-00001) after transfer and refund = %s, want 1000.00", got)
	}
	list, err := l.ListTransactions(ctx, "ACC-00001", 0)
	if err != nil || len(list) != 2 || list[0].ID != r.ID {
		t.Errorf("ListTransactions(ACC-00001) = %+v, %v; want the refund, then the transfer", list, err)
	}
	if _, err := l.ListTransactions(ctx, "ACC-99999", 0); code(err) != ledger.CodeUnknownAccount {
		t.Errorf("ListTransactions(unknown) = %v, want %s", err, ledger.CodeUnknownAccount)
	}
}
