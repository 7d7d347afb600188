package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// flakyServerEnv makes the test binary, run by
// [TestCallWhileReconnecting], a stdio server of the tool echo that
// writes its pid to the file pid in the folder the variable names, or,
// while a file down is there, exits at once (a server that cannot start).
// While a file block is there, a call of echo says "flaky: blocking" on
// stderr and never returns.
const flakyServerEnv = "TOOLGATE_TEST_FLAKY_SERVER"

// serveFlaky is the server of [flakyServerEnv].
func serveFlaky() error {
	dir := os.Getenv(flakyServerEnv)
	if _, err := os.Stat(filepath.Join(dir, "down")); err == nil {
		return errors.New("flaky: down")
	}
	if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return err
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "flaky", Version: "1"}, nil)
	addEcho(srv, "echo")
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if _, err := os.Stat(filepath.Join(dir, "block")); err == nil && method == "tools/call" {
				fmt.Fprintln(os.Stderr, "flaky: blocking")
				select {}
			}
			return next(ctx, method, req)
		}
	})
	return srv.Run(context.Background(), &sdk.StdioTransport{})
}

// awaitLog waits until logs holds text.
func awaitLog(t *testing.T, ctx context.Context, logs *testenv.Buffer, text string) {
	t.Helper()
	select {
	case <-logs.Await(text):
	case <-ctx.Done():
		t.Fatalf("the log never said %q:\n%s", text, logs.String())
	}
}

// TestCallWhileReconnecting: while a server is being reconnected its
// tools stay known, with their scopes, through a gateway over SQLite: a
// retry of a call whose outcome is recorded gets that outcome, a new
// call is refused as retryable (503 DOWNSTREAM_FAILURE, code
// SERVER_RECONNECTING, with a retry-after hint) without running, a
// caller without the tool's scope is still refused, a retry of a call
// whose outcome is unknown (it was running when the server died) keeps
// the outcome uncertain, and once the server is back the refused calls
// run; after Close, a call is refused as closed, not reconnecting.
// Before, the tools left the catalog: a retry, even of a recorded
// call, was UNKNOWN_TOOL, final.
func TestCallWhileReconnecting(t *testing.T) {
	ctx := testContext(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	reg := tools.NewRegistry()
	var logs testenv.Buffer
	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "flaky", Command: []string{exe},
		Env: map[string]string{flakyServerEnv: dir}, Scopes: []string{"flaky:use"}},
		&mcp.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), KeepAlive: -1,
			MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	st, err := sqlitestore.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	gw, err := gateway.New(reg, st, &gateway.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	alice := tools.Principal{ID: "alice", Tenant: "acme", Scopes: []string{"flaky:use"}}
	call := func(p tools.Principal, step int) gateway.Call {
		return gateway.Call{Principal: p, SessionID: "s", Step: step, Tool: "flaky/echo", Arguments: json.RawMessage(`{"text":"hi"}`)}
	}
	first, err := gw.Execute(ctx, call(alice, 1))
	if err != nil {
		t.Fatalf("call while connected: %v", err)
	}

	// A call runs when the server dies: its outcome is unknown.
	if err := os.WriteFile(filepath.Join(dir, "block"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	running := make(chan error, 1)
	go func() { _, err := gw.Execute(ctx, call(alice, 3)); running <- err }()
	awaitLog(t, ctx, &logs, "flaky: blocking")
	if err := os.Remove(filepath.Join(dir, "block")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "down"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pid, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(string(pid))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(n, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	awaitLog(t, ctx, &logs, "mcp: reconnect failed")
	var unknown *gateway.Error
	if err := <-running; !errors.As(err, &unknown) || unknown.Type != gateway.DownstreamFailure || unknown.Attempts != 1 {
		t.Fatalf("the call the server died under = %v; want DOWNSTREAM_FAILURE, its outcome unknown", err)
	}

	t.Run("recorded outcome", func(t *testing.T) {
		res, err := gw.Execute(ctx, call(alice, 1))
		if err != nil || !res.Cached || !bytes.Equal(res.Value, first.Value) {
			t.Errorf("retry of a recorded call while reconnecting = %+v, %v; want the recorded %s, cached", res, err, first.Value)
		}
	})
	t.Run("new call", func(t *testing.T) {
		_, err := gw.Execute(ctx, call(alice, 2))
		var ge *gateway.Error
		if !errors.As(err, &ge) || ge.Type != gateway.DownstreamFailure || !ge.Retryable || ge.RetryAfter <= 0 ||
			ge.Code != "SERVER_RECONNECTING" || !strings.Contains(ge.Message, "reconnect") {
			t.Errorf("call while reconnecting = %v (%+v); want a retryable DOWNSTREAM_FAILURE, code SERVER_RECONNECTING, with a retry-after, saying the server is reconnecting", err, ge)
		}
	})
	t.Run("uncertain call", func(t *testing.T) {
		_, err := gw.Execute(ctx, call(alice, 3))
		var ge *gateway.Error
		if !errors.As(err, &ge) || ge.Code != "SERVER_RECONNECTING" {
			t.Errorf("retry of an uncertain call while reconnecting = %v, want SERVER_RECONNECTING", err)
		}
		if r, err := st.Get(ctx, unknown.IdempotencyKey); err != nil || r.State != store.StateUncertain {
			t.Errorf("the record after that retry = %+v, %v; want it still uncertain", r, err)
		}
	})
	t.Run("caller without the scope", func(t *testing.T) {
		_, err := gw.Execute(ctx, call(tools.Principal{ID: "bob", Tenant: "acme"}, 1))
		var ge *gateway.Error
		if !errors.As(err, &ge) || ge.Type != gateway.PermissionDenied {
			t.Errorf("call without flaky:use while reconnecting = %v; want PERMISSION_DENIED", err)
		}
	})

	if err := os.Remove(filepath.Join(dir, "down")); err != nil {
		t.Fatal(err)
	}
	awaitLog(t, ctx, &logs, "mcp: reconnected")
	res, err := gw.Execute(ctx, call(alice, 2))
	if err != nil || res.Cached {
		t.Errorf("the refused call once the server is back = %+v, %v; want it run", res, err)
	}
	res, err = gw.Execute(ctx, call(alice, 3))
	if err != nil || res.Cached || !res.PreviousUncertain {
		t.Errorf("the uncertain call once the server is back = %+v, %v; want it re-run, saying an earlier attempt was uncertain", res, err)
	}

	// A server closed for good is not reconnecting: a call through a
	// snapshot taken before says it is closed.
	stale := reg.Snapshot()
	up.Close()
	i, _ := stale.Lookup("flaky/echo")
	_, err = stale.Tool(i).Handler(ctx, json.RawMessage(`{"text":"hi"}`))
	if _, reconnecting := tools.UnavailableFor(err); !errors.Is(err, mcp.ErrClosed) || !tools.IsNoEffect(err) || reconnecting {
		t.Errorf("a call after Close = %v; want ErrClosed, no effect, not reconnecting", err)
	}
}
