package backendtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolgate/toolgate/llm"
)

// Silence is a way a server goes silent on a streamed reply, for
// [RunStreamIdle].
type Silence struct {
	Name string
	// ContentType is sent with the headers; "" sends no headers at all.
	ContentType string
	// KeepAlive is written again and again until the client goes away
	// (an SSE comment such as ": ping\n\n"); "" writes nothing.
	KeepAlive string
}

// SSESilences are the silences of a server-sent event stream: nothing at
// all, headers and then nothing, and keep-alive comments only.
var SSESilences = []Silence{
	{Name: "nothing"},
	{Name: "headers only", ContentType: "text/event-stream"},
	{Name: "keep-alive comments", ContentType: "text/event-stream", KeepAlive: ": ping\n\n"},
}

// RunStreamIdle checks that a streamed chat (Request.OnDelta set) with a
// server that goes silent in each of silences fails with an
// *[llm.IdleError] (matching [llm.ErrStreamIdle], temporary) instead of
// waiting for the caller's context. newBackend returns the adapter at
// baseURL (its BaseURL option) with the given StreamIdleTimeout. The
// caller's context has no deadline: only the idle timeout can end the
// request.
func RunStreamIdle(t *testing.T, silences []Silence, newBackend func(t *testing.T, baseURL string, idle time.Duration) llm.Backend) {
	for _, s := range silences {
		t.Run(s.Name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if s.ContentType == "" {
					<-r.Context().Done()
					return
				}
				w.Header().Set("Content-Type", s.ContentType)
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				// Bounded, so that a client that took keep-alives for
				// events sees the stream end early rather than hang.
				for range 5000 {
					if s.KeepAlive != "" {
						io.WriteString(w, s.KeepAlive)
						w.(http.Flusher).Flush()
					}
					select {
					case <-r.Context().Done():
						return
					case <-time.After(time.Millisecond):
					}
				}
			}))
			t.Cleanup(srv.Close)
			req := Request(llm.ModeNative)
			req.OnDelta = func(string) {}
			resp, err := newBackend(t, srv.URL, 20*time.Millisecond).Chat(context.Background(), req)
			var ie *llm.IdleError
			if !errors.As(err, &ie) || !errors.Is(err, llm.ErrStreamIdle) || !ie.Temporary() {
				t.Fatalf("Chat(a server that sends %s) = %+v, %v; want an *llm.IdleError", s.Name, resp, err)
			}
		})
	}
}
