// Package agent wires the transfer example's parts into one agent for the
// guided demo and the chat command: the SQLite ledger and the finance tools,
// the real MCP catalogs, the execution gateway on a SQLite store with the
// finance validators and approval policy, the discoverer, and the runtime
// over a given model.
//
// Everything lives in one data folder (ledger.db, gateway.db): reopening the
// folder keeps the balances and the gateway's idempotency records.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolgate/toolgate/examples/transfer/finance"
	"github.com/toolgate/toolgate/examples/transfer/ledger"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// Options configures Open. A nil *Options means defaults.
type Options struct {
	// Catalog are tools registered beside the finance tools (the real MCP
	// catalogs). Nil means none.
	Catalog []tools.Tool
	// Transform, when set, rewrites the finance tools and Catalog before
	// they are registered: card overlays (tools/cards' Overlay.Transform).
	// Nil means none.
	Transform func([]tools.Tool) []tools.Tool
	// Runtime configures the agent. Nil means the runtime's defaults with a
	// silent logger. Its Logger, when nil, is set to a silent one.
	Runtime *runtime.Options
	// Gateway configures the gateway. Nil means defaults with a silent
	// logger. Its Validators and NeedsApproval are always the finance ones.
	Gateway *gateway.Options
	// Discovery configures the agent's Discoverer: a Log (chat
	// --discovery-log), a Registerer. Nil means discovery's defaults.
	Discovery *discovery.Options
}

// Bank is the wired example: open it with Open, close it with Close. Its
// fields are ready for use and safe for concurrent use.
type Bank struct {
	Ledger   *ledger.Ledger
	Store    *sqlitestore.Store
	Registry *tools.Registry
	Gateway  *gateway.Gateway
	Agent    *runtime.Agent
	// Discovery is the agent's Discoverer.
	Discovery *discovery.Discoverer

	mu   sync.Mutex
	runs map[string]int      // handler executions per tool ID
	keys map[string][]string // idempotency keys the handlers received, per tool ID
}

// Open opens (creating when missing) the data folder dir and wires the
// agent over backend.
func Open(ctx context.Context, dir string, backend llm.Backend, opts *Options) (*Bank, error) {
	if backend == nil {
		return nil, errors.New("agent: backend is required")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("agent: data folder: %w", err)
	}
	l, err := ledger.Open(ctx, filepath.Join(dir, "ledger.db"), nil)
	if err != nil {
		return nil, err
	}
	st, err := sqlitestore.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		l.Close()
		return nil, err
	}
	b := &Bank{Ledger: l, Store: st, Registry: tools.NewRegistry(), runs: map[string]int{}, keys: map[string][]string{}}
	fail := func(err error) (*Bank, error) {
		b.Close()
		return nil, err
	}
	fin := finance.Tools(l)
	for i := range fin {
		fin[i].Handler = b.counted(fin[i].ID, fin[i].Handler)
	}
	catalog := o.Catalog
	if o.Transform != nil {
		fin, catalog = o.Transform(fin), o.Transform(catalog)
	}
	if err := b.Registry.Add(fin...); err != nil {
		return fail(fmt.Errorf("agent: register finance tools: %w", err))
	}
	if err := b.Registry.Add(catalog...); err != nil {
		return fail(fmt.Errorf("agent: register catalog: %w", err))
	}

	var gopts gateway.Options
	if o.Gateway != nil {
		gopts = *o.Gateway
	}
	if gopts.Logger == nil {
		gopts.Logger = quiet
	}
	gopts.Validators, gopts.NeedsApproval = finance.Validators(), finance.NeedsApproval
	if b.Gateway, err = gateway.New(b.Registry, st, &gopts); err != nil {
		return fail(err)
	}
	disc, err := discovery.New(o.Discovery)
	if err != nil {
		return fail(err)
	}
	b.Discovery = disc
	var ropts runtime.Options
	if o.Runtime != nil {
		ropts = *o.Runtime
	}
	if ropts.Logger == nil {
		ropts.Logger = quiet
	}
	if b.Agent, err = runtime.New(b.Registry, disc, b.Gateway, backend, &ropts); err != nil {
		return fail(err)
	}
	return b, nil
}

// counted wraps a finance handler to count its executions and record the
// idempotency key it received, so the demo can show that a replay did not
// run the handler.
func (b *Bank) counted(id string, h tools.Handler) tools.Handler {
	return func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		key, _ := tools.IdempotencyKey(ctx)
		b.mu.Lock()
		b.runs[id]++
		b.keys[id] = append(b.keys[id], key)
		b.mu.Unlock()
		return h(ctx, args)
	}
}

// Executions returns how many times the handler of the finance tool id ran.
func (b *Bank) Executions(id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runs[id]
}

// Keys returns the idempotency keys the finance tool id's handler ran
// with, in order.
func (b *Bank) Keys(id string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.keys[id]...)
}

// Balances returns the balances of accounts, in order, as "ACC-00001
// 750.00" strings.
func (b *Bank) Balances(ctx context.Context, accounts ...string) ([]string, error) {
	out := make([]string, 0, len(accounts))
	for _, acc := range accounts {
		bal, err := b.Ledger.Balance(ctx, acc)
		if err != nil {
			return nil, err
		}
		out = append(out, acc+" "+bal.String())
	}
	return out, nil
}

// Close closes the gateway's store and the ledger after their pending
// writes. It is safe to call on a partly opened Bank.
func (b *Bank) Close() error {
	var errs []error
	if b.Store != nil {
		errs = append(errs, b.Store.Close())
	}
	if b.Ledger != nil {
		errs = append(errs, b.Ledger.Close())
	}
	return errors.Join(errs...)
}
