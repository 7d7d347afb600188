package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/testservices"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/redisstore"
	"github.com/toolgate/toolgate/tools"
)

// Three gateways, each with its own connection pool to one Redis (as three
// processes would have), receive 64 copies of one call: the handler runs
// once and every caller gets its result.
func TestGatewaysShareOneStore(t *testing.T) {
	ctx := context.Background()
	url := testservices.RedisURL(t)
	prefix := fmt.Sprintf("toolgate-test:shared:%d:", prefixes.Add(1))
	var runs atomic.Int32
	release := make(chan struct{})
	reg := tools.NewRegistry()
	if err := reg.Add(tools.Tool{ID: "bank/pay", Card: tools.Card{Name: "pay", Scopes: []string{"payments:write"}},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
		Handler: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			n := runs.Add(1)
			<-release
			return json.RawMessage(fmt.Sprintf(`{"run":%d}`, n)), nil
		}}); err != nil {
		t.Fatal(err)
	}
	var gws []*gateway.Gateway
	for range 3 {
		st, err := redisstore.Open(ctx, url, &redisstore.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		g, err := gateway.New(reg, st, &gateway.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		gws = append(gws, g)
	}
	call := gateway.Call{Principal: tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"payments:write"}},
		SessionID: "s", Step: 7, Tool: "bank/pay", Arguments: json.RawMessage(`{"n":1}`)}
	results := make([]string, 64)
	var inProgress atomic.Int32
	var once sync.Once
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			for {
				res, err := gws[i%3].Execute(ctx, call)
				var ge *gateway.Error
				if errors.As(err, &ge) && ge.Type == gateway.InProgress {
					// Another gateway holds the claim: let the handler finish, then retry.
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
		})
	}
	wg.Wait()
	if runs.Load() != 1 {
		t.Errorf("handler ran %d times over three gateways, want 1", runs.Load())
	}
	for i, r := range results {
		if r != `{"run":1}` {
			t.Errorf("caller %d got %s, want {\"run\":1}", i, r)
		}
	}
	if inProgress.Load() == 0 {
		t.Error("no caller saw IN_PROGRESS; the callers did not overlap")
	}
}
