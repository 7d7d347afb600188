package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/testservices"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/pgstore"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

func TestMain(m *testing.M) { os.Exit(testservices.Main(m)) }

var schemas atomic.Int64

// freshSchema returns the shared test server's URL and a schema name no
// other test uses; the schema is dropped when the test ends.
func freshSchema(tb testing.TB) (url, schema string) {
	url = testservices.PostgresURL(tb)
	schema = fmt.Sprintf("toolgate_test_%d_%d", os.Getpid(), schemas.Add(1))
	tb.Cleanup(func() { dropSchema(tb, url, schema) })
	return url, schema
}

// open returns a store in a fresh schema, closed when the test ends.
func open(t *testing.T) *pgstore.Store {
	t.Helper()
	url, schema := freshSchema(t)
	s, err := pgstore.Open(context.Background(), url, &pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// dropSchema removes a test's schema, so a shared server stays clean.
func dropSchema(t testing.TB, url, schema string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) gateway.Store { return open(t) })
}
