package testenv

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Post sends body to url as toolgate's HTTP clients do: with the bearer
// token (no Authorization header when it is empty) and the header pairs
// (name, value, …). It returns the response, whose body it has read and
// closed, and that body; a request that gets no response fails the test.
func Post(tb testing.TB, ctx context.Context, url, token, body string, header ...string) (*http.Response, []byte) {
	tb.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(tb, req)
}

// Get fetches url (a server's /metrics, /healthz, metadata) and returns
// the response, whose body it has read and closed, and that body; a
// request that gets no response fails the test.
func Get(tb testing.TB, url string) (*http.Response, []byte) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return do(tb, req)
}

// do sends req and reads the whole answer.
func do(tb testing.TB, req *http.Request) (*http.Response, []byte) {
	tb.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: reading the answer: %v", req.Method, req.URL, err)
	}
	return resp, data
}
