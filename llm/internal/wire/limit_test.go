package wire

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLimitReplies: a body of at most max bytes reads whole; a longer one
// fails with an error naming the limit, after max bytes.
func TestLimitReplies(t *testing.T) {
	for _, size := range []int{0, 99, 100, 101, 5000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, strings.Repeat("x", size))
			}))
			defer srv.Close()
			res, err := LimitReplies(srv.Client(), 100).Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			data, err := io.ReadAll(res.Body)
			switch {
			case size <= 100 && (err != nil || len(data) != size):
				t.Errorf("body of %d bytes, limit 100: read %d bytes, %v; want all of it", size, len(data), err)
			case size > 100 && (err == nil || !strings.Contains(err.Error(), "exceeds 100 bytes") || len(data) > 100):
				t.Errorf("body of %d bytes, limit 100: read %d bytes, %v; want at most 100 and an error naming the limit", size, len(data), err)
			}
		})
	}
}
