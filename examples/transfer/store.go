package main

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/examples/transfer/finance"
	"github.com/toolgate/toolgate/examples/transfer/ledger"
	"github.com/toolgate/toolgate/examples/transfer/pgledger"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/pgstore"
	"github.com/toolgate/toolgate/runtime/gateway/redisstore"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
)

// closingStore is a gateway store the bank closes with itself.
type closingStore interface {
	gateway.Store
	Close() error
}

// closingLedger is a ledger the bank closes with itself.
type closingLedger interface {
	finance.Ledger
	Close() error
}

// isPostgres reports whether a --store spec names PostgreSQL.
func isPostgres(spec string) bool {
	scheme, _, _ := strings.Cut(spec, "://")
	return scheme == "postgres" || scheme == "postgresql"
}

// openLedger opens the ledger that goes with the store spec names: with
// PostgreSQL, in the same database (pgledger, schema transfer_ledger), so
// every serve process on any host shares it; otherwise the SQLite file
// ledger.db in dir (processes sharing it must share dir, i.e. one host).
func openLedger(ctx context.Context, spec, dir string) (closingLedger, error) {
	if isPostgres(spec) {
		return pgledger.Open(ctx, spec, nil)
	}
	return ledger.Open(ctx, filepath.Join(dir, "ledger.db"), nil)
}

// openStore opens the gateway store that serve's --store names: empty for
// the embedded SQLite file gateway.db in dir (one host), redis:// or
// rediss:// for Redis, postgres:// or postgresql:// for PostgreSQL (several
// processes, on several hosts, sharing claims, approvals, audit and rate
// limits), or "memory" for the in-memory reference store (benchmarks only:
// nothing survives the process, nothing is shared). openLedger picks the
// ledger to match.
func openStore(ctx context.Context, spec, dir string) (closingStore, error) {
	scheme, _, _ := strings.Cut(spec, "://")
	switch {
	case spec == "":
		return sqlitestore.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	case spec == "memory":
		return memoryStore{memstore.New()}, nil
	case scheme == "redis" || scheme == "rediss":
		return redisstore.Open(ctx, spec, nil)
	case isPostgres(spec):
		return pgstore.Open(ctx, spec, nil)
	}
	return nil, fmt.Errorf("--store %q: want redis://…, rediss://…, postgres://… or postgresql://… (or nothing for SQLite in --data)", redact(spec))
}

// memoryStore gives the memory store the Close the bank calls.
type memoryStore struct{ *memstore.Store }

func (memoryStore) Close() error { return nil }

// redact hides a URL's password, for logs and messages.
func redact(spec string) string {
	u, err := url.Parse(spec)
	if err != nil || u.Scheme == "" {
		if strings.Contains(spec, "@") {
			return "(unparsable URL)"
		}
		return spec
	}
	return u.Redacted()
}

// storeName says which store serve uses, for its log.
func storeName(spec string) string {
	if spec == "" {
		return "sqlite (gateway.db in --data)"
	}
	return redact(spec)
}
