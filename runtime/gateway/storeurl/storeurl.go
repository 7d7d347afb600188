// Package storeurl opens a gateway store named by a URL: the embedded
// SQLite file by default, redis:// or rediss:// for Redis, postgres:// or
// postgresql:// for PostgreSQL, "memory" for the in-memory reference store.
//
// It is the one package that links all four store drivers, so that only
// a program that lets its user choose the store at run time (`toolgate
// serve --store`, `examples/transfer serve`) carries them; the HTTP API
// (runtime/server) and the MCP server (runtime/mcpserver) take a
// [store.Store] and link none.
//
//	st, err := storeurl.Open(ctx, spec, dataDir) // "" → SQLite gateway.db in dataDir
//	if err != nil { ... }
//	defer st.Close()
//	g, err := gateway.New(reg, st, nil)
package storeurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/pgstore"
	"github.com/toolgate/toolgate/runtime/gateway/redisstore"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
)

// Store is a gateway store a program closes when it stops.
type Store interface {
	store.Store
	Close() error
}

// Open opens the store spec names: "" for the embedded SQLite file
// gateway.db in dir (one host; processes on it may share the file),
// redis:// or rediss:// for Redis, postgres:// or postgresql:// for
// PostgreSQL (replicas on several hosts share claims, approvals, audit and
// rate limits), or "memory" for the in-memory reference store (nothing
// survives the process or is shared: tests and benchmarks only). An
// unknown spec is an error that names it with its password hidden.
func Open(ctx context.Context, spec, dir string) (Store, error) {
	scheme, _, _ := strings.Cut(spec, "://")
	switch {
	case spec == "":
		if dir == "" {
			return nil, errors.New("storeurl: the SQLite store needs a data folder")
		}
		return sqlitestore.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	case spec == "memory":
		return memoryStore{memstore.New()}, nil
	case scheme == "redis" || scheme == "rediss":
		return redisstore.Open(ctx, spec, nil)
	case IsPostgres(spec):
		return pgstore.Open(ctx, spec, nil)
	}
	return nil, fmt.Errorf("store %q: want redis://…, rediss://…, postgres://… or postgresql://… (or nothing for SQLite in the data folder)", Redact(spec))
}

// IsPostgres reports whether a store spec names PostgreSQL.
func IsPostgres(spec string) bool {
	scheme, _, _ := strings.Cut(spec, "://")
	return scheme == "postgres" || scheme == "postgresql"
}

type memoryStore struct{ *memstore.Store }

func (memoryStore) Close() error { return nil }

// Redact hides a store URL's password, for logs and messages.
func Redact(spec string) string {
	u, err := url.Parse(spec)
	if err != nil || u.Scheme == "" {
		if strings.Contains(spec, "@") {
			return "(unparsable URL)"
		}
		return spec
	}
	return u.Redacted()
}

// Name says which store spec names, for a log line.
func Name(spec string) string {
	if spec == "" {
		return "sqlite (gateway.db in the data folder)"
	}
	return Redact(spec)
}

// QuietDriverLogs turns off the Redis client's own log, a process-wide
// setting of go-redis that writes each failed dial of its pool to
// os.Stderr in its own format. The store's errors carry the same cause:
// a start that cannot reach Redis says it in the one line of Open's
// error, a call that fails says it through the gateway's log. A program
// (a main, not a library) calls it once before Open.
func QuietDriverLogs() {
	redis.SetLogger(discardLog{})
}

// discardLog is a go-redis logger that writes nothing.
type discardLog struct{}

func (discardLog) Printf(context.Context, string, ...any) {}
