package agent_test

import (
	"context"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/examples/transfer/finance"
	"github.com/toolgate/toolgate/examples/transfer/internal/agent"
	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/tools"
)

var alice = tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{finance.ScopeAccountsRead, finance.ScopePaymentsWrite}}

// TestOpenRunReopen runs a transfer through the wired agent, re-sends the
// step after reopening the folder (replayed: the handler does not run),
// and checks the balances persisted.
func TestOpenRunReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	call := scripted.Call("transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":10}`)
	b, err := agent.Open(ctx, dir, scripted.New([]scripted.Reply{call, scripted.Answer("ok")}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := b.Agent.NewSession(alice, "s-1", nil).Run(ctx, "send 10 from ACC-00001 to ACC-00002")
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Calls) != 1 || turn.Calls[0].Err != nil || b.Executions(finance.TransferFunds) != 1 || len(b.Keys(finance.TransferFunds)) != 1 {
		t.Fatalf("calls %+v, executions %d", turn.Calls, b.Executions(finance.TransferFunds))
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b, err = agent.Open(ctx, dir, scripted.New([]scripted.Reply{call, scripted.Answer("ok")}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	turn, err = b.Agent.NewSession(alice, "s-1", nil).Run(ctx, "send 10 from ACC-00001 to ACC-00002")
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Calls) != 1 || !turn.Calls[0].Cached || b.Executions(finance.TransferFunds) != 0 {
		t.Errorf("after reopening: calls %+v, executions %d; want one cached replay, no execution", turn.Calls, b.Executions(finance.TransferFunds))
	}
	got, err := b.Balances(ctx, "ACC-00001", "ACC-00002")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ACC-00001 990.00", "ACC-00002 1010.00"}; !slices.Equal(got, want) {
		t.Errorf("Balances = %v, want %v", got, want)
	}
}

func TestOpenNeedsBackend(t *testing.T) {
	if _, err := agent.Open(context.Background(), t.TempDir(), nil, nil); err == nil {
		t.Error("Open with a nil backend succeeded")
	}
}
