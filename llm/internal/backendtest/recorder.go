package backendtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Recorder is the httptest server under every adapter's wire-level fake:
// it records each request's body and headers, then hands the request to
// the fake's own handler, which speaks the provider's wire format.
type Recorder struct {
	// URL is the server's base URL, http://127.0.0.1:port.
	URL string

	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
}

// NewRecorder starts a Recorder that is closed when t ends. serve answers
// the i-th request (counting from 0), whose body has already been read
// into data.
func NewRecorder(t testing.TB, serve func(i int, w http.ResponseWriter, r *http.Request, data []byte)) *Recorder {
	rec := &Recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		i := len(rec.bodies)
		rec.bodies = append(rec.bodies, data)
		rec.headers = append(rec.headers, r.Header.Clone())
		rec.mu.Unlock()
		serve(i, w, r, data)
	}))
	t.Cleanup(srv.Close)
	rec.URL = srv.URL
	return rec
}

// Requests returns a copy of the request bodies received so far, in order.
func (rec *Recorder) Requests() [][]byte {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([][]byte(nil), rec.bodies...)
}

// Headers returns a copy of the request headers received so far, in order.
func (rec *Recorder) Headers() []http.Header {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]http.Header(nil), rec.headers...)
}

// Fake is the provider-independent half of an adapter's wire-level fake:
// a Recorder whose request bodies are decoded as JSON and routed by path,
// the reply the model makes, and a hook with which a test answers a chat
// request itself.
type Fake struct {
	*Recorder
	// Reply is what the model says when Handle does not answer.
	Reply Reply
	// Handle, when set, answers the i-th request (counting from 0, all
	// paths together) to the chat path itself when it returns true. It is
	// set before the first request.
	Handle func(i int, w http.ResponseWriter, body map[string]any) bool

	wire Wire
}

// Wire is the provider-specific half of a fake: its paths, and how it
// writes a reply and an error.
type Wire struct {
	// ChatPath is the chat endpoint, e.g. "/api/chat".
	ChatPath string
	// Chat writes reply as the answer to the chat request body.
	Chat func(w http.ResponseWriter, body map[string]any, reply Reply)
	// Routes answers the other paths the provider serves (embeddings);
	// any other path is 404.
	Routes map[string]func(w http.ResponseWriter, body map[string]any)
	// Error writes an HTTP error with the provider's error body for msg.
	Error func(w http.ResponseWriter, status int, msg string)
	// BadJSON is the provider's error message for a body that is not JSON.
	BadJSON string
}

// NewFake starts a Fake speaking wire that replies with reply; it is
// closed when t ends.
func NewFake(t testing.TB, reply Reply, wire Wire) *Fake {
	f := &Fake{Reply: reply, wire: wire}
	f.Recorder = NewRecorder(t, func(i int, w http.ResponseWriter, r *http.Request, data []byte) {
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			wire.Error(w, http.StatusBadRequest, wire.BadJSON)
			return
		}
		if route, ok := wire.Routes[r.URL.Path]; ok {
			route(w, body)
			return
		}
		if r.URL.Path != wire.ChatPath {
			http.NotFound(w, r)
			return
		}
		if f.Handle != nil && f.Handle(i, w, body) {
			return
		}
		wire.Chat(w, body, f.Reply)
	})
	return f
}

// FailFirst makes the first n chat requests (all of them when n < 0) fail
// with status, the provider's error body for msg and, unless retryAfter is
// "", a Retry-After header; it sets Handle.
func (f *Fake) FailFirst(n, status int, retryAfter, msg string) {
	f.Handle = func(i int, w http.ResponseWriter, _ map[string]any) bool {
		if n >= 0 && i >= n {
			return false
		}
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		f.wire.Error(w, status, msg)
		return true
	}
}
