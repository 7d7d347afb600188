package pgstore_test

import (
	"context"
	"log"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/pgstore"
	"github.com/toolgate/toolgate/tools"
)

// Every replica opens the same database (and schema); Open applies the
// embedded migrations under an advisory lock, so replicas may start
// together. (Not run: it needs a PostgreSQL server.)
func Example() {
	ctx := context.Background()
	st, err := pgstore.Open(ctx, "postgres://toolgate@127.0.0.1:5432/app?sslmode=disable", &pgstore.Options{Schema: "toolgate"})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	gw, err := gateway.New(tools.NewRegistry(), st, nil)
	if err != nil {
		log.Fatal(err)
	}
	_ = gw // gw.Execute(ctx, call) from any replica: one execution per call
}
