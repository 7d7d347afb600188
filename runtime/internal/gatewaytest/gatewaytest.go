// Package gatewaytest builds the gateway the tests of [gateway] and of
// runtime/server stand on: a small bank catalog over an in-memory store,
// a clock the test moves by hand, and handlers that count their runs, so
// that each test states only what it changes.
package gatewaytest

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
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// Clock is a [gateway.Clock] the test moves by hand. It starts at
// 2026-11-29 12:00 UTC.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock at its start time.
func NewClock() *Clock {
	return &Clock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
}

// Now implements [gateway.Clock].
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TransferSchema is the input schema of bank/transfer_funds.
const TransferSchema = `{
  "type": "object",
  "properties": {
    "source_account": {"type": "string", "pattern": "^ACC-[0-9]{5}$"},
    "target_account": {"type": "string", "pattern": "^ACC-[0-9]{5}$"},
    "amount": {"type": "number", "exclusiveMinimum": 0},
    "memo": {"type": "string", "pattern": "^(?!.*(?:ignore|override)).*$"}
  },
  "required": ["source_account", "target_account", "amount"]
}`

// OKArgs are valid bank/transfer_funds arguments below the approval threshold.
const OKArgs = `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":250.50}`

// The principals of the tests: alice pays, bob grants approvals, mallory
// only reads, eve is another tenant's admin.
var (
	Alice   = tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"payments:write", "accounts:read"}}
	Bob     = tools.Principal{ID: "bob", Tenant: "acme", Scopes: []string{"approvals:grant"}}
	Mallory = tools.Principal{ID: "mallory", Tenant: "acme", Scopes: []string{"accounts:read"}}
	Eve     = tools.Principal{ID: "eve", Tenant: "globex", Scopes: []string{"payments:write", "approvals:grant", "billing:admin"}}
)

// Counter counts handler runs per idempotency key.
type Counter struct {
	mu sync.Mutex
	// Runs counts the runs per key; Args lists every run's arguments.
	// Read them once the calls are over.
	Runs map[string]int
	Args []string
	all  atomic.Int64
}

// Add counts one run with args and returns its idempotency key.
func (c *Counter) Add(ctx context.Context, args json.RawMessage) string {
	key, _ := tools.IdempotencyKey(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Runs == nil {
		c.Runs = map[string]int{}
	}
	c.Runs[key]++
	c.Args = append(c.Args, string(args))
	c.all.Add(1)
	return key
}

// Total returns the number of runs.
func (c *Counter) Total() int64 { return c.all.Load() }

// Env is a gateway over a store ([memstore] unless [NewOn] names another)
// with the test catalog:
// bank/transfer_funds (payments:write; above 1000 it needs an approval),
// bank/get_balance (read-only), billing/issue_full_refund (irreversible),
// admin/delete_all (billing:admin), globex/export (tenant globex only) and
// catalog/only (no handler).
type Env struct {
	T        testing.TB
	Registry *tools.Registry
	Store    store.Store
	Clock    *Clock
	Gateway  *gateway.Gateway
	Runs     *Counter
	Prom     *prometheus.Registry
	// transfer is bank/transfer_funds' behaviour, swappable per test.
	transfer atomic.Pointer[tools.Handler]
}

// Echo is a handler that counts its run and answers its arguments.
func (e *Env) Echo(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	e.Runs.Add(ctx, args)
	return args, nil
}

// AddEcho registers a tool id, no scope needed, with the input schema
// schema and the Echo handler.
func (e *Env) AddEcho(id, schema string) {
	e.T.Helper()
	t := tools.Tool{ID: id, InputSchema: json.RawMessage(schema), Handler: e.Echo}
	t.Card.Name = t.Name()
	if err := e.Registry.Add(t); err != nil {
		e.T.Fatal(err)
	}
}

// SetTransfer replaces bank/transfer_funds' handler.
func (e *Env) SetTransfer(h tools.Handler) { e.transfer.Store(&h) }

// Transfer returns bank/transfer_funds' current handler.
func (e *Env) Transfer() tools.Handler { return *e.transfer.Load() }

// QuietLogger returns a logger that writes nowhere.
func QuietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// New builds an Env over a fresh [memstore]; opt, when not nil, changes the
// options before the gateway is built. An error fails t.
func New(t testing.TB, opt func(*gateway.Options)) *Env {
	t.Helper()
	return NewOn(t, memstore.New(), opt)
}

// NewOn builds an Env over st, as [New] does.
func NewOn(t testing.TB, st store.Store, opt func(*gateway.Options)) *Env {
	t.Helper()
	e := &Env{T: t, Registry: tools.NewRegistry(), Store: st, Clock: NewClock(), Runs: &Counter{}, Prom: prometheus.NewRegistry()}
	e.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		key := e.Runs.Add(ctx, args)
		return json.RawMessage(`{"transaction_id":"tx-` + key[:8] + `","args":` + string(args) + `}`), nil
	})
	transfer := func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return e.Transfer()(ctx, args)
	}
	err := e.Registry.Add(
		tools.Tool{ID: "bank/transfer_funds", Card: tools.Card{Name: "transfer_funds", Scopes: []string{"payments:write"}},
			InputSchema: json.RawMessage(TransferSchema), Handler: transfer, Timeout: time.Hour},
		tools.Tool{ID: "bank/get_balance", Card: tools.Card{Name: "get_balance", Scopes: []string{"accounts:read"}, ReadOnly: true},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"account":{"type":"string"}},"required":["account"]}`), Handler: e.Echo},
		tools.Tool{ID: "billing/issue_full_refund", Card: tools.Card{Name: "issue_full_refund", Scopes: []string{"payments:write"}, Irreversible: true},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"transaction_id":{"type":"string"}},"required":["transaction_id"]}`), Handler: e.Echo},
		tools.Tool{ID: "admin/delete_all", Card: tools.Card{Name: "delete_all", Scopes: []string{"billing:admin"}}, Handler: e.Echo},
		tools.Tool{ID: "globex/export", Card: tools.Card{Name: "export"}, Tenants: []string{"globex"}, Handler: e.Echo},
		tools.Tool{ID: "catalog/only", Card: tools.Card{Name: "only"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	o := &gateway.Options{Clock: e.Clock, Logger: QuietLogger(), Registerer: e.Prom, LeaseGrace: time.Minute,
		NeedsApproval: func(_ context.Context, call gateway.Call, args json.RawMessage) bool {
			if call.Tool != "bank/transfer_funds" {
				return false
			}
			var a struct{ Amount float64 }
			return json.Unmarshal(args, &a) == nil && a.Amount > 1000
		}}
	if opt != nil {
		opt(o)
	}
	e.Gateway, err = gateway.New(e.Registry, e.Store, o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TransferCall returns p's call of bank/transfer_funds with args.
func TransferCall(p tools.Principal, session string, step int, args string) gateway.Call {
	return gateway.Call{Principal: p, SessionID: session, Step: step, Tool: "bank/transfer_funds", Arguments: json.RawMessage(args)}
}

// AsError returns err as a [*gateway.Error], failing t if it is not one.
func AsError(t testing.TB, err error) *gateway.Error {
	t.Helper()
	var ge *gateway.Error
	if !errors.As(err, &ge) {
		t.Fatalf("error = %v (%T), want a *gateway.Error", err, err)
	}
	return ge
}

// WantType asserts that err is a [*gateway.Error] of type want and returns it.
func WantType(t testing.TB, what string, err error, want gateway.ErrorType) *gateway.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: error = nil, want %s", what, want)
	}
	ge := AsError(t, err)
	if ge.Type != want {
		t.Fatalf("%s: error type = %s (%s), want %s", what, ge.Type, ge.Message, want)
	}
	return ge
}

// PaySchema is the input schema of a bank/pay tool whose numbers need care.
const PaySchema = `{"type":"object","properties":{
	"amount":{"type":"number","multipleOf":0.01,"exclusiveMinimum":0},
	"id":{"type":"integer"},
	"meta":{"type":"object"}},"required":["amount"]}`

// NumberCases are arguments of bank/pay: each number is validated on the
// text sent, and what the handler would receive must be the same number.
var NumberCases = []struct {
	Args string
	Ptr  string // "" : valid, and the handler receives Want
	Want string
}{
	{`{"amount":1.0000000000000000001}`, "/amount", ""},
	{`{"amount":1.00000000000000000001}`, "/amount", ""},
	{`{"amount":1.001}`, "/amount", ""},
	{`{"amount":0.005}`, "/amount", ""},
	{`{"amount":10.10}`, "", `{"amount":10.1}`},
	{`{"amount":1e2}`, "", `{"amount":100}`},
	{`{"amount":0.1e1}`, "", `{"amount":1}`},
	{`{"amount":1.50,"id":9007199254740992}`, "", `{"amount":1.5,"id":9007199254740992}`},
	{`{"amount":1,"id":9007199254740993}`, "/id", ""},
	{`{"amount":1,"id":9007199254740993.0}`, "/id", ""},
	{`{"amount":1,"id":9.007199254740993e15}`, "/id", ""},
	{`{"amount":1,"id":90071992547409930e-1}`, "/id", ""},
	{`{"amount":1,"id":-9007199254740993E0}`, "/id", ""},
	{`{"amount":1,"id":9007199254740994}`, "/id", ""},
	{`{"amount":1,"id":1e20}`, "/id", ""},
	{`{"amount":1,"meta":{"list":[2,1.00000000000000000001]}}`, "/meta/list/1", ""},
	{`{"amount":1,"meta":{"big":12345678901234567890}}`, "/meta/big", ""},
}
