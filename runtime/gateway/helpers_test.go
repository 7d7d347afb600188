package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/tools"
)

// fakeClock is a Clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const transferSchema = `{
  "type": "object",
  "properties": {
    "source_account": {"type": "string", "pattern": "^ACC-[0-9]{5}$"},
    "target_account": {"type": "string", "pattern": "^ACC-[0-9]{5}$"},
    "amount": {"type": "number", "exclusiveMinimum": 0},
    "memo": {"type": "string", "pattern": "^(?!.*(?:ignore|override)).*$"}
  },
  "required": ["source_account", "target_account", "amount"]
}`

var (
	alice   = tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"payments:write", "accounts:read"}}
	bob     = tools.Principal{ID: "bob", Tenant: "acme", Scopes: []string{"approvals:grant"}}
	mallory = tools.Principal{ID: "mallory", Tenant: "acme", Scopes: []string{"accounts:read"}}
	eve     = tools.Principal{ID: "eve", Tenant: "globex", Scopes: []string{"payments:write", "approvals:grant", "billing:admin"}}
)

// counter counts handler runs per idempotency key.
type counter struct {
	mu   sync.Mutex
	runs map[string]int
	all  atomic.Int64
	args []string
}

func (c *counter) add(ctx context.Context, args json.RawMessage) string {
	key, _ := tools.IdempotencyKey(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = map[string]int{}
	}
	c.runs[key]++
	c.args = append(c.args, string(args))
	c.all.Add(1)
	return key
}

func (c *counter) total() int64 { return c.all.Load() }

type env struct {
	t     testing.TB
	reg   *tools.Registry
	store *memstore.Store
	clock *fakeClock
	gw    *gateway.Gateway
	runs  *counter
	prom  *prometheus.Registry
	// behaviour of bank/transfer_funds, swappable per test
	transfer atomic.Pointer[tools.Handler]
}

// echo is a handler that counts its run and answers its arguments.
func (e *env) echo(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	e.runs.add(ctx, args)
	return args, nil
}

// addEcho registers a tool id, no scope needed, with the input schema
// schema and the echo handler.
func (e *env) addEcho(id, schema string) {
	e.t.Helper()
	t := tools.Tool{ID: id, InputSchema: json.RawMessage(schema), Handler: e.echo}
	t.Card.Name = t.Name()
	if err := e.reg.Add(t); err != nil {
		e.t.Fatal(err)
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newEnv builds a gateway over memstore and a fake clock with the test
// tools; mutate opts before the gateway is built with the opt function.
func newEnv(t testing.TB, opt func(*gateway.Options)) *env {
	t.Helper()
	e := &env{t: t, reg: tools.NewRegistry(), store: memstore.New(), clock: newFakeClock(), runs: &counter{}, prom: prometheus.NewRegistry()}
	ok := tools.Handler(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		key := e.runs.add(ctx, args)
		return json.RawMessage(`{"transaction_id":"tx-` + key[:8] + `","args":` + string(args) + `}`), nil
	})
	e.transfer.Store(&ok)
	transfer := func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return (*e.transfer.Load())(ctx, args)
	}
	echo := e.echo
	err := e.reg.Add(
		tools.Tool{ID: "bank/transfer_funds", Card: tools.Card{Name: "transfer_funds", Scopes: []string{"payments:write"}},
			InputSchema: json.RawMessage(transferSchema), Handler: transfer, Timeout: time.Hour},
		tools.Tool{ID: "bank/get_balance", Card: tools.Card{Name: "get_balance", Scopes: []string{"accounts:read"}, ReadOnly: true},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"account":{"type":"string"}},"required":["account"]}`), Handler: echo},
		tools.Tool{ID: "billing/issue_full_refund", Card: tools.Card{Name: "issue_full_refund", Scopes: []string{"payments:write"}, Irreversible: true},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"transaction_id":{"type":"string"}},"required":["transaction_id"]}`), Handler: echo},
		tools.Tool{ID: "admin/delete_all", Card: tools.Card{Name: "delete_all", Scopes: []string{"billing:admin"}}, Handler: echo},
		tools.Tool{ID: "globex/export", Card: tools.Card{Name: "export"}, Tenants: []string{"globex"}, Handler: echo},
		tools.Tool{ID: "catalog/only", Card: tools.Card{Name: "only"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	o := &gateway.Options{Clock: e.clock, Logger: quietLogger(), Registerer: e.prom, LeaseGrace: time.Minute,
		NeedsApproval: func(call gateway.Call, args json.RawMessage) bool {
			if call.Tool != "bank/transfer_funds" {
				return false
			}
			var a struct{ Amount float64 }
			return json.Unmarshal(args, &a) == nil && a.Amount > 1000
		}}
	if opt != nil {
		opt(o)
	}
	e.gw, err = gateway.New(e.reg, e.store, o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) setTransfer(h tools.Handler) { e.transfer.Store(&h) }

func transferCall(p tools.Principal, session string, step int, args string) gateway.Call {
	return gateway.Call{Principal: p, SessionID: session, Step: step, Tool: "bank/transfer_funds", Arguments: json.RawMessage(args)}
}

const okArgs = `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":250.50}`

// gwError returns err as a *gateway.Error, failing the test if it is not one.
func gwError(t *testing.T, err error) *gateway.Error {
	t.Helper()
	var ge *gateway.Error
	if !errors.As(err, &ge) {
		t.Fatalf("error = %v (%T), want a *gateway.Error", err, err)
	}
	return ge
}

// wantType asserts that err is a *gateway.Error of type want.
func wantType(t *testing.T, what string, err error, want gateway.ErrorType) *gateway.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: error = nil, want %s", what, want)
	}
	ge := gwError(t, err)
	if ge.Type != want {
		t.Fatalf("%s: error type = %s (%s), want %s", what, ge.Type, ge.Message, want)
	}
	return ge
}
