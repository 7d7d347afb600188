package agent_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/examples/transfer/finance"
	"github.com/toolgate/toolgate/examples/transfer/internal/agent"
	"github.com/toolgate/toolgate/internal/metricstest"
	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
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

// TestLoopingModelTransfersOnce is issue 28's loop on the real ledger: a
// model that answers every tool result with the same transfer, until the
// step budget ends, moves the money once and reads "already succeeded"
// with the transaction; the user's same request in the next turn moves it
// again.
func TestLoopingModelTransfersOnce(t *testing.T) {
	ctx := context.Background()
	call := scripted.Call("transfer_funds", `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":25}`)
	model := scripted.New(append(slices.Repeat([]scripted.Reply{call}, 8), call, scripted.Answer("Sent 25.00 again.")), nil)
	metrics := prometheus.NewRegistry()
	var repeats []runtime.Event
	b, err := agent.Open(ctx, t.TempDir(), model, &agent.Options{Runtime: &runtime.Options{
		Registerer: metrics,
		Observer: func(_ context.Context, e runtime.Event) {
			if e.Kind == runtime.EventRepeatedCall {
				repeats = append(repeats, e)
			}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sess := b.Agent.NewSession(alice, "s-loop", nil)

	tests := []struct {
		name, input   string
		wantErr       error
		wantRuns      int
		wantBalances  []string
		wantRefusals  int // repeated_call events so far
		wantToldAfter int // requests so far whose last message says the transfer already succeeded
	}{
		{"a model that repeats the transfer", "send 25 dollars from ACC-00001 to ACC-00002", runtime.ErrStepBudget,
			1, []string{"ACC-00001 975.00", "ACC-00002 1025.00"}, 7, 6},
		{"the user asks again in the next turn", "send 25 again", nil,
			2, []string{"ACC-00001 950.00", "ACC-00002 1050.00"}, 7, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := sess.Run(ctx, tc.input); !errors.Is(err, tc.wantErr) {
				t.Fatalf("Run(%q): err = %v, want %v", tc.input, err, tc.wantErr)
			}
			if got := b.Executions(finance.TransferFunds); got != tc.wantRuns {
				t.Errorf("transfer_funds ran %d times, want %d", got, tc.wantRuns)
			}
			got, err := b.Balances(ctx, "ACC-00001", "ACC-00002")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.wantBalances) {
				t.Errorf("Balances = %v, want %v", got, tc.wantBalances)
			}
			if len(repeats) != tc.wantRefusals {
				t.Errorf("%d repeated_call events, want %d", len(repeats), tc.wantRefusals)
			}
			if got := metricstest.Count(t, metrics, "toolgate_runtime_repeated_calls_total", "tool", finance.TransferFunds, "action", string(runtime.RepeatRefused)); got != float64(tc.wantRefusals) {
				t.Errorf("toolgate_runtime_repeated_calls_total{action=refused} = %v, want %d", got, tc.wantRefusals)
			}
			told := 0
			for _, req := range model.Requests() {
				last := req.Messages[len(req.Messages)-1].Content
				if strings.Contains(last, "already succeeded") && strings.Contains(last, `"transaction_id"`) {
					told++
				}
			}
			if told != tc.wantToldAfter {
				t.Errorf("%d requests told the model the transfer already succeeded, with its transaction; want %d", told, tc.wantToldAfter)
			}
		})
	}
}
