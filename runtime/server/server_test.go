package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/tools"
)

func TestUncertainPolicies(t *testing.T) {
	reg := tools.NewRegistry()
	for _, id := range []string{"pay/send_payment", "bank/get_balance"} {
		t.Run(id, func(t *testing.T) {
			tl := tools.Tool{ID: id, InputSchema: json.RawMessage(`{"type":"object"}`)}
			tl.Card.Name = tl.Name()
			if err := reg.Add(tl); err != nil {
				t.Fatal(err)
			}
		})
	}
	snap := reg.Snapshot()
	type policies = map[string]gateway.UncertainPolicy
	tests := []struct {
		name    string
		def     string
		perTool []string
		want    gateway.UncertainPolicy
		wantPer policies
		wantErr bool
	}{
		{name: "defaults", want: gateway.UncertainRerun},
		{name: "reconcile by default", def: "reconcile", want: gateway.UncertainReconcile},
		{name: "one tool reconciles", def: "rerun", perTool: []string{"pay/send_payment=reconcile"},
			want: gateway.UncertainRerun, wantPer: policies{"pay/send_payment": gateway.UncertainReconcile}},
		{name: "one tool reruns under reconcile", def: "reconcile", perTool: []string{"bank/get_balance=rerun"},
			want: gateway.UncertainReconcile, wantPer: policies{"bank/get_balance": gateway.UncertainRerun}},
		{name: "unknown default", def: "retry", wantErr: true},
		{name: "unknown tool policy", perTool: []string{"pay/send_payment=maybe"}, wantErr: true},
		{name: "no policy", perTool: []string{"pay/send_payment"}, wantErr: true},
		{name: "unknown tool", perTool: []string{"pay/send_paymnet=reconcile"}, wantErr: true},
		{name: "bare name, not an ID", perTool: []string{"send_payment=reconcile"}, wantErr: true},
		{name: "tool given twice", perTool: []string{"pay/send_payment=reconcile", "pay/send_payment=rerun"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, per, err := server.UncertainPolicies(tc.def, tc.perTool, snap)
			if (err != nil) != tc.wantErr {
				t.Fatalf("UncertainPolicies(%q, %q) error = %v, want error %v", tc.def, tc.perTool, err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got != tc.want || !maps.Equal(per, tc.wantPer) {
				t.Errorf("UncertainPolicies(%q, %q) = %v, %v; want %v, %v", tc.def, tc.perTool, got, per, tc.want, tc.wantPer)
			}
		})
	}
}

// TestServeEndsEventStreamsOnShutdown: an event stream (a GET that accepts
// text/event-stream, such as an MCP client's stream of server
// notifications) never ends by itself, so Serve ends it when the shutdown
// starts, while a request in flight still finishes and is answered: the
// shutdown is clean, not cut off at its timeout as if a call were left
// running.
func TestServeEndsEventStreamsOnShutdown(t *testing.T) {
	streaming, posted, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(streaming)
			<-r.Context().Done() // as an SSE handler does: until the client leaves
			return
		}
		close(posted)
		<-release
		io.WriteString(w, "done")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	served := make(chan error, 1)
	go func() {
		served <- server.Serve(ctx, server.NewHTTPServer(ln.Addr().String(), h, 0), ln, nil, 10*time.Second, slog.New(slog.DiscardHandler))
	}()
	base := "http://" + ln.Addr().String()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/", nil)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	<-streaming
	answer := make(chan string, 1)
	go func() {
		resp, err := http.Post(base+"/", "text/plain", strings.NewReader("call"))
		if err != nil {
			answer <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answer <- string(b)
	}()
	<-posted
	stop()
	close(release)
	if got := <-answer; got != "done" {
		t.Errorf("the request in flight at shutdown = %q, want its answer", got)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve with an event stream open at shutdown = %v, want nil (the stream ended, no call was left)", err)
	}
}
