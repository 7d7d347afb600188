package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/toolgate/toolgate/examples/transfer/finance"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

// bank is the example's back end in one data folder: the ledger
// (ledger.db), the gateway's store (gateway.db), the finance tools in a
// registry, and the gateway with the example's approval policy.
type bank struct {
	ledger closingLedger
	store  closingStore
	reg    *tools.Registry
	gw     *gateway.Gateway
}

// openBank opens the bank in dir with the gateway store storeSpec names
// (see openStore; empty is gateway.db in dir). opts are the gateway's
// options; the finance validators and approval policy are added to them.
func openBank(ctx context.Context, dir, storeSpec string, opts *gateway.Options) (*bank, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	l, err := openLedger(ctx, storeSpec, dir)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, storeSpec, dir)
	if err != nil {
		l.Close()
		return nil, err
	}
	b := &bank{ledger: l, store: st, reg: tools.NewRegistry()}
	if err := b.reg.Add(finance.Tools(l)...); err != nil {
		b.Close()
		return nil, fmt.Errorf("register finance tools: %w", err)
	}
	o := gateway.Options{}
	if opts != nil {
		o = *opts
	}
	o.Validators, o.NeedsApproval = finance.Validators(), finance.NeedsApproval
	b.gw, err = gateway.New(b.reg, st, &o)
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Close closes the store and the ledger after their pending writes.
func (b *bank) Close() error {
	return errors.Join(b.store.Close(), b.ledger.Close())
}
