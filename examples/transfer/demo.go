package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"strings"

	"github.com/toolgate/toolgate/examples/transfer/finance"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

// catalogFS holds the real MCP servers' tools/list results copied into the
// example, so a clone of the repository runs the demo without ../shared.
//
//go:embed catalog/*.json
var catalogFS embed.FS

func init() { commands[""] = runDemo }

// runDemo is the guided demo on embedded defaults: the finance tools and the
// real MCP catalogs in one registry, the authorized view of one principal,
// a transfer through the gateway with a SQLite store in a temporary folder,
// the same step retried (replayed, not re-executed), and an injected admin
// call refused. The runtime issue extends it with discovery, the compiled
// grammar and a scripted model.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "transfer: the demo takes no arguments, got %q\n", args[0])
		return exitUsage
	}
	if err := demo(ctx, stdout); err != nil {
		fmt.Fprintf(stderr, "transfer: demo: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func demo(ctx context.Context, w io.Writer) error {
	dir, err := os.MkdirTemp("", "toolgate-transfer-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := openBank(ctx, dir, &gateway.Options{Logger: quiet})
	if err != nil {
		return err
	}
	defer b.Close()

	catalog, err := loadEmbeddedCatalogs()
	if err != nil {
		return err
	}
	if err := b.reg.Add(catalog...); err != nil {
		return err
	}
	alice := tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{finance.ScopeAccountsRead, finance.ScopePaymentsWrite}}
	view := b.reg.Snapshot().Authorize(alice)
	if _, visible := view.Get(finance.IssueFullRefund); visible {
		return errors.New("issue_full_refund is in alice's authorized view")
	}
	fmt.Fprintf(w, "1. Registry: %d tools (4 finance tools + %d from 8 real MCP servers).\n", b.reg.Snapshot().Len(), len(catalog))
	fmt.Fprintf(w, "   alice (scopes %s) is authorized for %d of them; %s is not among them.\n",
		strings.Join(alice.Scopes, ","), view.Len(), finance.IssueFullRefund)

	call := gateway.Call{Principal: alice, SessionID: "demo-session", Step: 1, Tool: finance.TransferFunds,
		Arguments: json.RawMessage(`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":250.00}`)}
	fmt.Fprintf(w, "2. Model step 1 calls %s %s\n", call.Tool, call.Arguments)
	res, err := b.gw.Execute(ctx, call)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   executed: %s cached=%v key=%s…\n", res.Value, res.Cached, res.IdempotencyKey[:16])

	fmt.Fprintln(w, "3. The network drops the answer; the agent retries the same step with the same arguments.")
	again, err := b.gw.Execute(ctx, call)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   replayed: %s cached=%v (same key: %v)\n", again.Value, again.Cached, again.IdempotencyKey == res.IdempotencyKey)

	fmt.Fprintln(w, "4. A prompt injection makes the model call issue_full_refund, which alice may not use.")
	var txn struct {
		ID string `json:"transaction_id"`
	}
	if err := json.Unmarshal(res.Value, &txn); err != nil {
		return err
	}
	_, err = b.gw.Execute(ctx, gateway.Call{Principal: alice, SessionID: "demo-session", Step: 2, Tool: finance.IssueFullRefund,
		Arguments: json.RawMessage(fmt.Sprintf(`{"transaction_id":%q}`, txn.ID))})
	var gerr *gateway.Error
	if !errors.As(err, &gerr) || gerr.Type != gateway.PermissionDenied {
		return fmt.Errorf("the injected refund was not denied: %v", err)
	}
	fmt.Fprintf(w, "   denied: %s (HTTP %d): %s\n", gerr.Type, gerr.HTTPStatus(), gerr.Message)

	var bals []string
	for _, acc := range []string{"ACC-00001", "ACC-00002"} {
		bal, err := b.ledger.Balance(ctx, acc)
		if err != nil {
			return err
		}
		bals = append(bals, fmt.Sprintf("%s %s USD", acc, bal))
	}
	fmt.Fprintf(w, "5. Balances: %s.\n", strings.Join(bals, ", "))
	fmt.Fprintln(w, "The transfer ran once, the retry was replayed, the admin call never ran.")
	return nil
}

// loadEmbeddedCatalogs parses every embedded catalog; each file's stem is
// its namespace, as with --tools FILE.
func loadEmbeddedCatalogs() ([]tools.Tool, error) {
	files, err := fs.Glob(catalogFS, "catalog/*.json")
	if err != nil {
		return nil, err
	}
	var out []tools.Tool
	for _, name := range files {
		f, err := catalogFS.Open(name)
		if err != nil {
			return nil, err
		}
		ts, err := tools.ParseCatalog(f, name, strings.TrimSuffix(path.Base(name), ".json"))
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}
