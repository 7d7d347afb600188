package pgledger_test

import (
	"context"
	"os"
	"testing"

	"github.com/toolgate/toolgate/examples/transfer/ledger/ledgertest"
	"github.com/toolgate/toolgate/examples/transfer/pgledger"
	"github.com/toolgate/toolgate/internal/testservices"
)

func TestMain(m *testing.M) { os.Exit(testservices.Main(m)) }

// open returns a ledger in a schema of its own, dropped when the test ends.
func open(t *testing.T) *pgledger.Ledger {
	t.Helper()
	url, schema := testservices.PostgresSchema(t, "ledger_test")
	l, err := pgledger.Open(context.Background(), url, &pgledger.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestConformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) ledgertest.Ledger { return open(t) })
}
