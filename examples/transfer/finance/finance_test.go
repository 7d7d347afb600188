package finance_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/examples/transfer/finance"
	"github.com/toolgate/toolgate/examples/transfer/ledger"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

func TestValidateTransfer(t *testing.T) {
	v := finance.Validators()[finance.TransferFunds]
	tests := []struct {
		args     string
		pointers []string
	}{
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":10.5}`, nil},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1000.00}`, nil},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1e2}`, nil},
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":10.005}`, []string{"/amount"}},
		// Canonical JSON would round this to 1; the caller's text has 19 decimals.
		{`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1.0000000000000000001}`, []string{"/amount"}},
		{`{"source_account":"ACC-00001","target_account":"ACC-00001","amount":5}`, []string{"/target_account"}},
		{`{"source_account":"ACC-00001","target_account":"ACC-00001","amount":0.001}`, []string{"/target_account", "/amount"}},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			err := v(context.Background(), gateway.Call{Tool: finance.TransferFunds, Arguments: json.RawMessage(tt.args)}, nil)
			var got []string
			var ge *gateway.Error
			if errors.As(err, &ge) {
				for _, vi := range ge.Details.([]gateway.Violation) {
					got = append(got, vi.Pointer)
				}
			} else if err != nil {
				t.Errorf("validate(%s) = %v, want a *gateway.Error", tt.args, err)
			}
			if len(got) != len(tt.pointers) || (len(got) > 0 && got[0] != tt.pointers[0]) || (len(got) > 1 && got[1] != tt.pointers[1]) {
				t.Errorf("validate(%s) pointers = %v, want %v", tt.args, got, tt.pointers)
			}
		})
	}
}

func TestNeedsApproval(t *testing.T) {
	tests := []struct {
		tool, args string
		want       bool
	}{
		{finance.TransferFunds, `{"amount":1000,"source_account":"ACC-00001","target_account":"ACC-00002"}`, false},
		{finance.TransferFunds, `{"amount":1000.01,"source_account":"ACC-00001","target_account":"ACC-00002"}`, true},
		{finance.IssueFullRefund, `{"transaction_id":"TX-0123456789abcdef"}`, true},
		{finance.GetBalance, `{"account":"ACC-00001"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			if got := finance.NeedsApproval(context.Background(), gateway.Call{Tool: tt.tool}, json.RawMessage(tt.args)); got != tt.want {
				t.Errorf("NeedsApproval(%s, %s) = %v, want %v", tt.tool, tt.args, got, tt.want)
			}
		})
	}
}

// The write handlers refuse to run without the gateway's key, before any effect.
func TestHandlersNeedTheKey(t *testing.T) {
	ctx := context.Background()
	l, err := ledger.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	byID := map[string]tools.Tool{}
	for _, tl := range finance.Tools(l) {
		if err := tl.Validate(); err != nil {
			t.Fatal(err)
		}
		byID[tl.ID] = tl
	}
	args := json.RawMessage(`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5}`)
	_, err = byID[finance.TransferFunds].Handler(ctx, args)
	if !errors.Is(err, finance.ErrNoKey) || !tools.IsNoEffect(err) {
		t.Errorf("transfer without key: error = %v, want ErrNoKey marked NoEffect", err)
	}
	out, err := byID[finance.TransferFunds].Handler(tools.WithIdempotencyKey(ctx, "k1"), args)
	if err != nil {
		t.Fatal(err)
	}
	again, err := byID[finance.TransferFunds].Handler(tools.WithIdempotencyKey(ctx, "k1"), args)
	if err != nil || string(again) != string(out) {
		t.Errorf("same key again = %s, %v, want %s", again, err, out)
	}
	bal, err := byID[finance.GetBalance].Handler(ctx, json.RawMessage(`{"account":"ACC-00001"}`))
	if err != nil || string(bal) != `{"account":"ACC-00001","balance":995.00}` {
		t.Errorf("get_balance = %s, %v, want 995.00 (one transfer of 5.00)", bal, err)
	}
	_, err = byID[finance.GetBalance].Handler(ctx, json.RawMessage(`{"account":"ACC-00001","x":1}`))
	if !errors.Is(err, tools.ErrInvalidArguments) || !tools.IsNoEffect(err) {
		t.Errorf("get_balance with an undeclared property: error = %v, want ErrInvalidArguments, NoEffect", err)
	}
}
