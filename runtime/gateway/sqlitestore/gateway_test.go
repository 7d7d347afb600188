package sqlitestore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

// Through the gateway on a real SQLite file: 64 goroutines send the same
// call; the handler runs once and every caller ends with the same result
// (after IN_PROGRESS refusals, retried).
func TestGatewaySameCallConcurrently(t *testing.T) {
	ctx := context.Background()
	st := open(t, filepath.Join(t.TempDir(), "gateway.db"))
	var runs atomic.Int32
	reg := tools.NewRegistry()
	release := make(chan struct{})
	if err := reg.Add(tools.Tool{ID: "bank/pay", Card: tools.Card{Name: "pay", Scopes: []string{"payments:write"}},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
		Handler: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			n := runs.Add(1)
			<-release
			key, _ := tools.IdempotencyKey(ctx)
			return json.RawMessage(fmt.Sprintf(`{"run":%d,"key":%q}`, n, key)), nil
		}}); err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(reg, st, &gateway.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	call := gateway.Call{Principal: tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"payments:write"}},
		SessionID: "s", Step: 7, Tool: "bank/pay", Arguments: json.RawMessage(`{"n":1}`)}
	const callers = 64
	results := make([]string, callers)
	var inProgress atomic.Int32
	var wg sync.WaitGroup
	var once sync.Once
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				res, err := g.Execute(ctx, call)
				var ge *gateway.Error
				if errors.As(err, &ge) && ge.Type == gateway.InProgress {
					// Someone holds the claim: let the handler finish, then retry.
					inProgress.Add(1)
					once.Do(func() { close(release) })
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				results[i] = string(res.Value)
				return
			}
		}()
	}
	wg.Wait()
	if runs.Load() != 1 {
		t.Errorf("handler ran %d times, want 1", runs.Load())
	}
	for i, r := range results {
		if r != results[0] {
			t.Errorf("caller %d got %s, caller 0 got %s", i, r, results[0])
		}
	}
	if inProgress.Load() == 0 {
		t.Error("no caller saw IN_PROGRESS; the callers did not overlap")
	}
}
