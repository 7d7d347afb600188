package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.BuildMain(m)) }

const testTokens = `{"tokens":{
 "alice-token":{"principal":"alice","tenant":"acme","scopes":["accounts:read","payments:write"]},
 "bob-token":{"principal":"bob","tenant":"acme","scopes":["accounts:read"]},
 "carol-token":{"principal":"carol","tenant":"acme","scopes":["accounts:read","billing:admin","approvals:grant"]},
 "dave-token":{"principal":"dave","tenant":"acme","scopes":["approvals:grant"]}}}`

// server is one `transfer serve` subprocess.
type server struct {
	*testenv.Process
	base string
}

// startServe starts serve on a free loopback port over dataDir and waits,
// within a deadline, until it says where it listens and /healthz answers.
func startServe(t testing.TB, dataDir, tokensFile string, extra ...string) *server {
	t.Helper()
	bin := testenv.Build(t, "transfer", ".")
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dataDir, "--tokens", tokensFile}, extra...)
	s := &server{}
	t.Cleanup(func() { // after the process is killed (cleanups run last first)
		if t.Failed() && s.Process != nil {
			t.Logf("serve stderr (last 4 KiB):\n%s", tail(s.Stderr.String(), 4096))
		}
	})
	s.Process, s.base = testenv.StartProcess(t, exec.Command(bin, args...), "listening on ", 60*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("serve at %s never became healthy: %v", s.base, err)
		}
	}
}

// stop sends SIGINT ([os.Interrupt]) and waits for a clean exit.
func (s *server) stop(t testing.TB) {
	t.Helper()
	if err := s.Cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); err != nil {
		t.Fatalf("serve after SIGINT: %v\n%s", err, s.Stderr.String())
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// reply is the union of the success and error bodies of the HTTP contract.
type reply struct {
	status         int
	retryAfter     string
	Success        bool            `json:"success"`
	Result         json.RawMessage `json:"result"`
	Cached         bool            `json:"cached"`
	IdempotencyKey string          `json:"idempotency_key"`
	ErrorType      string          `json:"error_type"`
	Message        string          `json:"message"`
	Retryable      bool            `json:"retryable"`
	RetryAfterSec  float64         `json:"retry_after"`
	ApprovalID     string          `json:"approval_id"`
	Code           string          `json:"code"`
	Details        json.RawMessage `json:"details"`
}

func post(ctx context.Context, client *http.Client, url, token, body string) (*reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	r := &reply{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("status %d, body %q: %w", resp.StatusCode, data, err)
	}
	return r, nil
}

func callBody(session string, step int, tool, args string) string {
	return fmt.Sprintf(`{"session_id":%q,"step":%d,"tool":%q,"arguments":%s}`, session, step, tool, args)
}

func writeTokens(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(path, []byte(testTokens), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
