package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/examples/transfer/ledger"
	"github.com/toolgate/toolgate/tools"
)

func open(t *testing.T, path string) *ledger.Ledger {
	t.Helper()
	l, err := ledger.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func balance(t *testing.T, l *ledger.Ledger, acc string) ledger.Cents {
	t.Helper()
	b, err := l.Balance(context.Background(), acc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func domainCode(err error) string {
	var de *tools.DomainError
	if errors.As(err, &de) {
		return de.Code
	}
	return ""
}

func TestSeededOnFirstOpenOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		acc := fmt.Sprintf("ACC-%05d", i)
		if got := balance(t, l, acc); got != 100000 {
			t.Errorf("Balance(%s) = %s, want 1000.00", acc, got)
		}
	}
	if _, err := l.Balance(ctx, "ACC-00011"); domainCode(err) != ledger.CodeUnknownAccount {
		t.Errorf("Balance(ACC-00011) error = %v, want %s", err, ledger.CodeUnknownAccount)
	}
	if _, err := l.Transfer(ctx, "k1", "ACC-00001", "ACC-00002", 2550); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = open(t, path)
	if got := balance(t, l, "ACC-00001"); got != 100000-2550 {
		t.Errorf("after reopen Balance(ACC-00001) = %s, want 974.50 (reopening must not reseed)", got)
	}
}

func TestTransferOncePerKey(t *testing.T) {
	ctx := context.Background()
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"))
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
	if got := balance(t, l, "ACC-00001"); got != 100000-12345 {
		t.Errorf("Balance(ACC-00001) = %s, want 876.55", got)
	}
	if got := balance(t, l, "ACC-00002"); got != 100000+12345 {
		t.Errorf("Balance(ACC-00002) = %s, want 1123.45", got)
	}
	_, err = l.Transfer(ctx, "key-a", "ACC-00001", "ACC-00003", 12345)
	if !errors.Is(err, ledger.ErrKeyReuse) || !tools.IsNoEffect(err) {
		t.Errorf("same key, other request: error = %v, want ErrKeyReuse marked NoEffect", err)
	}
	if _, err := l.Transfer(ctx, "", "ACC-00001", "ACC-00002", 1); !errors.Is(err, ledger.ErrNoKey) {
		t.Errorf("empty key: error = %v, want ErrNoKey", err)
	}
}

func TestRefusalsAreDomainErrorsAndReplayed(t *testing.T) {
	ctx := context.Background()
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"))
	tests := []struct {
		key, src, dst string
		amount        ledger.Cents
		want          string
	}{
		{"r1", "ACC-00001", "ACC-00002", 100001, ledger.CodeInsufficientFunds},
		{"r2", "ACC-00001", "ACC-00099", 1, ledger.CodeUnknownAccount},
		{"r3", "ACC-00099", "ACC-00001", 1, ledger.CodeUnknownAccount},
		{"r4", "ACC-00001", "ACC-00001", 1, ledger.CodeSameAccount},
	}
	for _, tt := range tests {
		_, err := l.Transfer(ctx, tt.key, tt.src, tt.dst, tt.amount)
		if got := domainCode(err); got != tt.want {
			t.Errorf("Transfer(%s, %s, %s, %s) error = %v, want code %s", tt.key, tt.src, tt.dst, tt.amount, err, tt.want)
		}
	}
	// Money arrives on ACC-00001; the refused key still answers with its refusal.
	if _, err := l.Transfer(ctx, "fund", "ACC-00003", "ACC-00001", 50000); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Transfer(ctx, "r1", "ACC-00001", "ACC-00002", 100001); domainCode(err) != ledger.CodeInsufficientFunds {
		t.Errorf("retried refused key: error = %v, want the recorded %s", err, ledger.CodeInsufficientFunds)
	}
	if total, _ := l.Total(ctx); total != 1000000 {
		t.Errorf("Total() = %s, want 10000.00", total)
	}
}

func TestRefund(t *testing.T) {
	ctx := context.Background()
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"))
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
	if got := balance(t, l, "ACC-00004"); got != 100000 {
		t.Errorf("Balance(ACC-00004) after refund = %s, want 1000.00", got)
	}
	cases := []struct{ key, id, want string }{
		{"f2", tr.ID, ledger.CodeAlreadyRefunded},
		{"f3", rf.ID, ledger.CodeNotRefundable},
		{"f4", "TX-nope", ledger.CodeUnknownTx},
	}
	for _, c := range cases {
		if _, err := l.Refund(ctx, c.key, c.id); domainCode(err) != c.want {
			t.Errorf("Refund(%s, %s) error = %v, want code %s", c.key, c.id, err, c.want)
		}
	}
	list, err := l.ListTransactions(ctx, "ACC-00004", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != rf.ID || list[1].ID != tr.ID {
		t.Errorf("ListTransactions(ACC-00004) = %+v, want [refund, transfer]", list)
	}
}

// Concurrent transfers with distinct keys and retries of each key: every key
// applies once and the sum of balances is conserved.
func TestConcurrentTransfersConserveMoney(t *testing.T) {
	ctx := context.Background()
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"))
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				src := fmt.Sprintf("ACC-%05d", i%10+1)
				dst := fmt.Sprintf("ACC-%05d", (i+3)%10+1)
				if _, err := l.Transfer(ctx, fmt.Sprintf("c%d", i), src, dst, ledger.Cents(100+i)); err != nil {
					errs <- err
				}
			}()
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

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in   string
		want ledger.Cents
		ok   bool
	}{
		{"1", 100, true},
		{"0.01", 1, true},
		{"10.5", 1050, true},
		{"10.50", 1050, true},
		{"10.500", 1050, true},
		{"1000.00", 100000, true},
		{"1e2", 10000, true},
		{"1.5E1", 1500, true},
		{"0.29", 29, true},
		{"10.005", 0, false},
		{"0.001", 0, false},
		{"0", 0, false},
		{"0.00", 0, false},
		{"-5", 0, false},
		{"1/2", 0, false},
		{"0x10", 0, false},
		{"1e999999999", 0, false},
		{"1000000000001", 0, false},
		{"", 0, false},
		{"abc", 0, false},
	}
	for _, tt := range tests {
		got, err := ledger.ParseAmount(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseAmount(%q) = %v, %v, want %v (ok=%v)", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !errors.Is(err, ledger.ErrAmount) {
			t.Errorf("ParseAmount(%q) error %v does not wrap ErrAmount", tt.in, err)
		}
	}
}

func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"1", "0.01", "10.50", "1e2", "-1", "1.005", "99999999999.99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ledger.ParseAmount(s)
		if err != nil {
			return
		}
		if c <= 0 || c > ledger.MaxCents {
			t.Fatalf("ParseAmount(%q) = %d, outside (0, MaxCents]", s, c)
		}
		back, err := ledger.ParseAmount(c.String())
		if err != nil || back != c {
			t.Fatalf("ParseAmount(%q) = %d; its String %q parses to %d, %v", s, c, c.String(), back, err)
		}
	})
}
