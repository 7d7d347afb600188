package sqlitestore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/tools"
)

// A gateway on the SQLite store: the second identical call is answered
// from the file, not executed again.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "sqlitestore-example-")
	defer os.RemoveAll(dir)

	st, err := sqlitestore.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	reg := tools.NewRegistry()
	runs := 0
	_ = reg.Add(tools.Tool{ID: "demo/greet", Card: tools.Card{Name: "greet"},
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			runs++
			return json.RawMessage(`{"hello":"world"}`), nil
		}})
	g, err := gateway.New(reg, st, &gateway.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Println(err)
		return
	}
	call := gateway.Call{Principal: tools.Principal{ID: "alice", Tenant: "acme"}, SessionID: "s1", Step: 1,
		Tool: "demo/greet", Arguments: json.RawMessage(`{}`)}
	for range 2 {
		res, err := g.Execute(ctx, call)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s cached=%v\n", res.Value, res.Cached)
	}
	fmt.Println("handler runs:", runs)
	// Output:
	// {"hello":"world"} cached=false
	// {"hello":"world"} cached=true
	// handler runs: 1
}
