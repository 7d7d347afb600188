package backendtest

import (
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

// NewRecorder starts a [Recorder] that is closed when t ends. serve answers
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
