package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/tools"
)

// listingServer serves one tool, echo, over streamable HTTP until the test
// ends, calling onList before it answers each tools/list; it returns the
// URL.
func listingServer(t *testing.T, onList func(context.Context)) string {
	srv := sdk.NewServer(&sdk.Implementation{Name: "listing", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "tools/list" {
				onList(ctx)
			}
			return next(ctx, method, req)
		}
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestListChangedCoalesces: a server that sends notifications/tools/list_changed
// many times while a listing is under way costs one more listing, not a
// goroutine and a listing each. (Notifications before a listing starts
// are answered by it.)
func TestListChangedCoalesces(t *testing.T) {
	var lists atomic.Int32
	var gate atomic.Pointer[chan struct{}]
	entered := make(chan struct{}, 64)
	url := listingServer(t, func(context.Context) {
		lists.Add(1)
		entered <- struct{}{}
		if g := gate.Load(); g != nil {
			<-*g
		}
	})
	changed := make(chan struct{}, 64)
	opts := &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), KeepAlive: -1,
		OnChange: func(string, int) { changed <- struct{}{} }}
	up, err := Connect(t.Context(), tools.NewRegistry(), Server{Name: "spam", URL: url}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	<-entered
	<-changed

	block := make(chan struct{})
	gate.Store(&block)
	up.listChanged(t.Context())
	<-entered // the first refresh lists, and waits at the gate
	before := runtime.NumGoroutine()
	const notifications = 200
	for range notifications {
		up.listChanged(t.Context())
	}
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

// TestRelistBounded: a server that answers notifications/tools/list_changed's
// re-list never (it still answers everything else) is taken for hung once
// [Options.ConnectTimeout] has passed: its connection is closed, which is
// logged once with the reason, and it is reconnected and listed afresh.
// Before, the re-list waited forever, holding the old tools and the
// listing lock.
func TestRelistBounded(t *testing.T) {
	var lists atomic.Int32
	never := make(chan struct{})
	url := listingServer(t, func(ctx context.Context) {
		if lists.Add(1) == 2 {
			select { // the re-list: no answer
			case <-never:
			case <-ctx.Done():
			}
		}
	})
	var logs testenv.Buffer
	changed := make(chan int, 64)
	opts := &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), KeepAlive: -1, ConnectTimeout: 500 * time.Millisecond,
		MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond,
		OnChange: func(_ string, n int) { changed <- n }}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	up, err := Connect(ctx, tools.NewRegistry(), Server{Name: "mute", URL: url}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	defer close(never) // before Close, for a test that fails
	<-changed
	up.listChanged(ctx)
	for n := 0; n != 1; { // until the listing of the reconnection
		select {
		case n = <-changed:
		case <-ctx.Done():
			t.Fatalf("no reconnection after a re-list that got no answer: status %+v, log:\n%s", up.Status(), logs.String())
		}
	}
	st := up.Status()
	if !st.Connected || st.Reconnects != 1 || st.Tools != 1 || lists.Load() != 3 {
		t.Errorf("after the re-list timed out: status %+v, %d listings; want connected once more with its tool, 3 listings", st, lists.Load())
	}
	const why = "the re-list after notifications/tools/list_changed failed, so the connection was closed"
	if n := strings.Count(logs.String(), why); n != 1 || !strings.Contains(logs.String(), "no answer within 500ms") {
		t.Errorf("the log says %d times %q (want once, with the bound):\n%s", n, why, logs.String())
	}
}

// TestListChangedPaced: a server that sends notifications/tools/list_changed
// every millisecond, each after the last re-list ended, costs a listing
// per relistGap at most, not one per notification (hundreds a second).
func TestListChangedPaced(t *testing.T) {
	var lists atomic.Int32
	url := listingServer(t, func(context.Context) { lists.Add(1) })
	opts := &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), KeepAlive: -1}
	up, err := Connect(t.Context(), tools.NewRegistry(), Server{Name: "chatty", URL: url}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	connected := lists.Load()
	start := time.Now()
	var before int32
	for range 300 {
		before = lists.Load()
		up.listChanged(t.Context())
		time.Sleep(time.Millisecond)
	}
	// Every notification is followed by a listing: wait for the last's.
	for lists.Load() <= before && t.Context().Err() == nil {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	relists := lists.Load() - connected
	if most := int32(elapsed/relistGap) + 2; relists > most {
		t.Errorf("300 notifications over %v made %d listings, want at most %d (one per %v)", elapsed, relists, most, relistGap)
	}
}
