// Command load measures `transfer serve` on loopback: it sends fresh
// transfer_funds calls (each its own session step, 0.01 USD around a ring
// of the ten seeded accounts, so none runs dry) from concurrent clients and
// prints requests/s, latency percentiles and the status counts.
//
//	go run ./examples/transfer serve --addr 127.0.0.1:8080 --data /tmp/bank --tokens examples/transfer/testdata/tokens.json &
//	go run ./examples/transfer/internal/load --url http://127.0.0.1:8080 --token alice-token --n 5000 --c 32
//
// It is bounded (at most 100,000 requests and 5 minutes) and refuses any
// host but loopback, so it cannot be pointed at someone else's server.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	target := flag.String("url", "http://127.0.0.1:8080", "base URL of transfer serve (loopback only)")
	token := flag.String("token", "alice-token", "bearer token of a principal with payments:write")
	n := flag.Int("n", 5000, "requests to send (at most 100000)")
	c := flag.Int("c", 32, "concurrent clients")
	limit := flag.Duration("duration", time.Minute, "stop after this long (at most 5m)")
	session := flag.String("session", fmt.Sprintf("load-%d", time.Now().UnixNano()), "session id (steps 0..n-1 are used)")
	flag.Parse()
	if err := run(*target, *token, *session, *n, *c, *limit); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}
}

func run(target, token, session string, n, c int, limit time.Duration) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--url host %q is not loopback", u.Hostname())
	}
	if n < 1 || n > 100000 || c < 1 || c > 1024 || limit <= 0 || limit > 5*time.Minute {
		return fmt.Errorf("want 1 <= n <= 100000, 1 <= c <= 1024, 0 < duration <= 5m")
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: c}}
	endpoint := strings.TrimSuffix(target, "/") + "/v1/tools/call"

	var next atomic.Int64
	lat := make([][]time.Duration, c)
	var mu sync.Mutex
	status := map[string]int{}
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				body := fmt.Sprintf(`{"session_id":%q,"step":%d,"tool":"bank/transfer_funds","arguments":`+
					`{"source_account":"ACC-%05d","target_account":"ACC-%05d","amount":0.01}}`, session, i, i%10+1, (i+1)%10+1)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				resp, err := client.Do(req)
				key := "error"
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					key = resp.Status
				}
				lat[w] = append(lat[w], time.Since(t0))
				mu.Lock()
				status[key]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return fmt.Errorf("no requests completed")
	}
	pct := func(p int) time.Duration { return all[min(len(all)-1, len(all)*p/100)] }
	fmt.Printf("requests %d in %.2fs: %.0f req/s, p50 %v, p90 %v, p99 %v, max %v, concurrency %d\n",
		len(all), elapsed.Seconds(), float64(len(all))/elapsed.Seconds(),
		pct(50).Round(time.Microsecond), pct(90).Round(time.Microsecond), pct(99).Round(time.Microsecond),
		all[len(all)-1].Round(time.Microsecond), c)
	keys := make([]string, 0, len(status))
	for k := range status {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Printf("  %s: %d\n", k, status[k])
	}
	return nil
}
