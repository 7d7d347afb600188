package wire

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// events is a Stream of fixed events that fails with err at its end.
type events struct {
	evs    []int
	next   int
	err    error
	closed bool
}

func (s *events) Next() bool   { s.next++; return s.next <= len(s.evs) }
func (s *events) Current() int { return s.evs[s.next-1] }
func (s *events) Err() error   { return s.err }
func (s *events) Close() error { s.closed = true; return nil }

func TestDrain(t *testing.T) {
	errStream, errStop := errors.New("stream broke"), errors.New("bad event")
	for _, tc := range []struct {
		name      string
		streamErr error
		stopAt    int // the event each refuses; 0: none
		want      []int
		wantErr   error
	}{
		{"every event, in order", nil, 0, []int{1, 2, 3}, nil},
		{"the stream's error", errStream, 0, []int{1, 2, 3}, errStream},
		{"each's error stops it", errStream, 2, []int{1, 2}, errStop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &events{evs: []int{1, 2, 3}, err: tc.streamErr}
			var got []int
			_, idle := WatchIdle(context.Background(), "test", -1)
			err := Drain(s, idle, func(ev int) error {
				got = append(got, ev)
				if ev == tc.stopAt {
					return errStop
				}
				return nil
			})
			if !slices.Equal(got, tc.want) || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("Drain = events %v, %v; want %v, %v", got, err, tc.want, tc.wantErr)
			}
			if !s.closed {
				t.Error("Drain left the stream open")
			}
		})
	}
}

// TestClientOptions: the SDK never retries on its own, its client (the
// one given, else the default) reads at most [MaxReplyBytes] of a response,
// and only the other settings given become options.
func TestClientOptions(t *testing.T) {
	s := SDK[string]{
		WithMaxRetries: func(n int) string { return fmt.Sprintf("retries=%d", n) },
		WithBaseURL:    func(u string) string { return "base=" + u },
		WithAPIKey:     func(k string) string { return "key=" + k },
		WithHTTPClient: func(c *http.Client) string {
			if lt, ok := c.Transport.(limitTransport); ok && lt.max == MaxReplyBytes {
				return "limited-client"
			}
			return "client"
		},
	}
	for _, tc := range []struct {
		name         string
		baseURL, key string
		client       *http.Client
		want         string
	}{
		{"defaults", "", "", nil, "retries=0 limited-client"},
		{"all", "http://127.0.0.1:8080/v1", "sk", http.DefaultClient, "retries=0 limited-client base=http://127.0.0.1:8080/v1 key=sk"},
		{"key only", "", "sk", nil, "retries=0 limited-client key=sk"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(s.ClientOptions(tc.baseURL, tc.key, tc.client), " "); got != tc.want {
				t.Errorf("ClientOptions(%q, %q, %v) = %q, want %q", tc.baseURL, tc.key, tc.client, got, tc.want)
			}
		})
	}
}
