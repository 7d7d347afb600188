package server_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/toolgate/toolgate/internal/golden"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/sqlitestore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/internal/gatewaytest"
	"github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/tools/discovery"
)

// transcriptHeaders are the response headers a transcript records: those
// the contract names. Date and Content-Length say nothing about it.
var transcriptHeaders = []string{"Allow", "Cache-Control", "Content-Type", "Retry-After", "WWW-Authenticate"}

// errorIDs are the one random part of an answer: the ID of a log entry.
var errorIDs = regexp.MustCompile(`err_[0-9a-f]{16}`)

// TestContractTranscripts replays each testdata/*.txtar against the real
// handler (over httptest, a SQLite store in a temporary folder, the
// gatewaytest bank on a fake clock with bank/get_balance limited to a
// burst of 3, the token file and discovery) and
// compares every answer byte for byte: status, the contract's headers and
// the body. An archive holds pairs of files NAME.request and
// NAME.response, replayed in order on one server, so a later request sees
// what the earlier ones did (an approval granted, a call recorded). A
// request is "METHOD PATH", header lines, a blank line and the body; a
// response is "STATUS", the headers, a blank line and the body. Error IDs
// read err_XXXXXXXXXXXXXXXX. go test -run TestContractTranscripts -update
// rewrites the responses.
func TestContractTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts in testdata (%v)", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			srv := transcriptServer(t)
			changed := false
			for i := 0; i < len(ar.Files); i++ {
				f := ar.Files[i]
				name, ok := strings.CutSuffix(f.Name, ".request")
				if !ok {
					t.Fatalf("%s: file %q: want NAME.request", file, f.Name)
				}
				if i+1 == len(ar.Files) || ar.Files[i+1].Name != name+".response" {
					t.Fatalf("%s: %s has no %s.response after it", file, f.Name, name)
				}
				got := replay(t, srv, f.Data)
				i++
				if want := ar.Files[i].Data; !bytes.Equal(got, want) {
					if golden.Update() {
						ar.Files[i].Data, changed = got, true
						continue
					}
					t.Errorf("%s: %s\n--- got\n%s--- want\n%s", file, name, got, want)
				}
			}
			if changed {
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// transcriptServer serves the gatewaytest bank over a SQLite store with
// the test token file and discovery.
func transcriptServer(t *testing.T) *httptest.Server {
	t.Helper()
	st, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := gatewaytest.NewOn(t, st, func(o *gateway.Options) {
		o.RateLimits = map[string]store.RateLimit{"bank/get_balance": {Rate: 0.1, Burst: 3}}
	})
	auth, err := server.ParseTokenFile([]byte(tokenFileJSON))
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := server.NewHandler(e.Gateway, auth, &server.HandlerOptions{Logger: quietLogger(), MaxBodyBytes: 512,
		Discover: server.Discover(disc, e.Registry, false)})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// replay sends one transcript request and returns the response as a
// transcript records it.
func replay(t *testing.T, srv *httptest.Server, request []byte) []byte {
	t.Helper()
	head, body, _ := bytes.Cut(request, []byte("\n\n"))
	lines := strings.Split(string(head), "\n")
	method, path, ok := strings.Cut(lines[0], " ")
	if !ok {
		t.Fatalf("request line %q: want METHOD PATH", lines[0])
	}
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(bytes.TrimSuffix(body, []byte("\n"))))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			t.Fatalf("header line %q: want Name: value", l)
		}
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	fmt.Fprintf(w, "%d\n", resp.StatusCode)
	for _, k := range transcriptHeaders {
		vs := slices.Clone(resp.Header.Values(k))
		slices.Sort(vs)
		for _, v := range vs {
			fmt.Fprintf(w, "%s: %s\n", k, v)
		}
	}
	fmt.Fprintf(w, "\n%s", errorIDs.ReplaceAll(data, []byte("err_XXXXXXXXXXXXXXXX")))
	if len(data) == 0 || data[len(data)-1] != '\n' {
		w.WriteString("\n")
	}
	w.Flush()
	return out.Bytes()
}
