package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/tools"
)

// TestListChangedCoalesces: a server that sends notifications/tools/list_changed
// many times while a listing is under way costs one more listing, not a
// goroutine and a listing each.
func TestListChangedCoalesces(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "spam", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	var lists atomic.Int32
	var gate atomic.Pointer[chan struct{}]
	entered := make(chan struct{}, 64)
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "tools/list" {
				lists.Add(1)
				entered <- struct{}{}
				if g := gate.Load(); g != nil {
					<-*g
				}
			}
			return next(ctx, method, req)
		}
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	changed := make(chan struct{}, 64)
	opts := &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), KeepAlive: -1,
		OnChange: func(string, int) { changed <- struct{}{} }}
	up, err := Connect(t.Context(), tools.NewRegistry(), Server{Name: "spam", URL: hs.URL}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	<-entered
	<-changed

	block := make(chan struct{})
	gate.Store(&block)
	before := runtime.NumGoroutine()
	const notifications = 200
	for range notifications {
		up.listChanged(t.Context())
	}
	<-entered // the first refresh lists, and waits at the gate
	if extra := runtime.NumGoroutine() - before; extra > notifications/4 {
		t.Errorf("%d notifications during a listing left %d more goroutines, want a few", notifications, extra)
	}
	gate.Store(nil)
	close(block)
	<-changed // the listing under way
	<-entered // one more for the notifications that came meanwhile
	<-changed
	up.listChanged(t.Context()) // and one for a later notification
	<-entered
	<-changed
	if n := lists.Load(); n != 4 {
		t.Errorf("tools/list ran %d times (connect, the listing under way, one for %d notifications, one more), want 4", n, notifications)
	}
}
