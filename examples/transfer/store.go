package main

import (
	"context"
	"path/filepath"

	"github.com/toolgate/toolgate/examples/transfer/finance"
	"github.com/toolgate/toolgate/examples/transfer/ledger"
	"github.com/toolgate/toolgate/examples/transfer/pgledger"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storeurl"
)

// closingStore is a gateway store the bank closes with itself.
type closingStore interface {
	store.Store
	Close() error
}

// closingLedger is a ledger the bank closes with itself.
type closingLedger interface {
	finance.Ledger
	Close() error
}

// openLedger opens the ledger that goes with the store spec names: with
// PostgreSQL, in the same database (pgledger, schema transfer_ledger), so
// every serve process on any host shares it; otherwise the SQLite file
// ledger.db in dir (processes sharing it must share dir, i.e. one host).
func openLedger(ctx context.Context, spec, dir string) (closingLedger, error) {
	if storeurl.IsPostgres(spec) {
		return pgledger.Open(ctx, spec, nil)
	}
	return ledger.Open(ctx, filepath.Join(dir, "ledger.db"), nil)
}

// openStore opens the gateway store that serve's --store names
// ([storeurl.Open]: SQLite gateway.db in dir by default, redis://,
// postgres://, or "memory"); openLedger picks the ledger to match.
func openStore(ctx context.Context, spec, dir string) (closingStore, error) {
	return storeurl.Open(ctx, spec, dir)
}
