package main

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

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

// openStore opens the gateway store that serve's --store names: empty for
// the embedded SQLite file gateway.db in dir (one host), redis:// or
// rediss:// for Redis, postgres:// or postgresql:// for PostgreSQL (several
// processes, on several hosts, sharing claims, approvals, audit and rate
// limits), or "memory" for the in-memory reference store (benchmarks only:
// nothing survives the process, nothing is shared). The ledger stays in dir
// whatever the store (see the README).
func openStore(ctx context.Context, spec, dir string) (closingStore, error) {
	scheme, _, _ := strings.Cut(spec, "://")
	switch {
	case spec == "":
		return sqlitestore.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	case spec == "memory":
		return memoryStore{memstore.New()}, nil
	case scheme == "redis" || scheme == "rediss":
		return redisstore.Open(ctx, spec, nil)
	case scheme == "postgres" || scheme == "postgresql":
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
