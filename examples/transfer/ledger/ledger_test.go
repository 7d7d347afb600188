package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/examples/transfer/ledger"
	"github.com/toolgate/toolgate/examples/transfer/ledger/ledgertest"
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

func TestSeededOnFirstOpenOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		acc := fmt.Sprintf("ACC-%05d", i)
		if got := ledgertest.Balance(t, l, acc); got != 100000 {
			t.Errorf("Balance(%s) = %s, want 1000.00", acc, got)
		}
	}
	if _, err := l.Balance(ctx, "ACC-00011"); ledgertest.Code(err) != ledger.CodeUnknownAccount {
		t.Errorf("Balance(ACC-00011) error = %v, want %s", err, ledger.CodeUnknownAccount)
	}
	if _, err := l.Transfer(ctx, "k1", "ACC-00001", "ACC-00002", 2550); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = open(t, path)
	if got := ledgertest.Balance(t, l, "ACC-00001"); got != 100000-2550 {
		t.Errorf("after reopen Balance(ACC-00001) = %s, want 974.50 (reopening must not reseed)", got)
	}
}

func TestConformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) ledgertest.Ledger { return open(t, filepath.Join(t.TempDir(), "ledger.db")) })
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
		t.Run(tt.in, func(t *testing.T) {
			got, err := ledger.ParseAmount(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("ParseAmount(%q) = %v, %v, want %v (ok=%v)", tt.in, got, err, tt.want, tt.ok)
			}
			if err != nil && !errors.Is(err, ledger.ErrAmount) {
				t.Errorf("ParseAmount(%q) error %v does not wrap ErrAmount", tt.in, err)
			}
		})
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
