package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/tools"
)

// BenchmarkHTTPRoundTrip is one fresh call through NewHandler over
// loopback with a keep-alive client.
func BenchmarkHTTPRoundTrip(b *testing.B) {
	e := newEnv(b, nil)
	auth := server.AuthenticatorFunc(func(context.Context, string) (tools.Principal, error) { return alice, nil })
	srv := httptest.NewServer(server.NewHandler(e.Gateway, auth, &server.HandlerOptions{Logger: quietLogger()}))
	defer srv.Close()
	client := srv.Client()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		body := fmt.Sprintf(`{"session_id":"bench","step":%d,"tool":"bank/get_balance","arguments":%s}`, i, `{"account":"ACC-00001"}`)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/tools/call", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer t")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var out struct{ Success bool }
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || !out.Success {
			b.Fatal(resp.StatusCode, err)
		}
		resp.Body.Close()
	}
}
