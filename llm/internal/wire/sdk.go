package wire

import (
	"context"
	"net/http"
)

// SDK holds an SDK-generated client's option constructors (the
// WithMaxRetries, WithBaseURL, WithAPIKey and WithHTTPClient of
// anthropic-sdk-go's and openai-go's option packages).
type SDK[O any] struct {
	WithMaxRetries func(int) O
	WithBaseURL    func(string) O
	WithAPIKey     func(string) O
	WithHTTPClient func(*http.Client) O
}

// ClientOptions are the options an adapter builds its SDK client with: no
// retries of the SDK's own (a 429 or 5xx goes back as an
// *llm.StatusError with its [RetryAfter], and the caller's policy decides),
// client ([http.DefaultClient] when nil) with its responses bounded by
// [MaxReplyBytes], and baseURL and apiKey where set (else the SDK's
// defaults, its environment variables included).
func (s SDK[O]) ClientOptions(baseURL, apiKey string, client *http.Client) []O {
	ropts := []O{s.WithMaxRetries(0), s.WithHTTPClient(LimitReplies(client, MaxReplyBytes))}
	if baseURL != "" {
		ropts = append(ropts, s.WithBaseURL(baseURL))
	}
	if apiKey != "" {
		ropts = append(ropts, s.WithAPIKey(apiKey))
	}
	return ropts
}

// Send makes one call of an SDK-generated client (anthropic-sdk-go,
// openai-go) with params and ropts: through stream when onDelta is set,
// else through plain, with the HTTP response captured by responseInto (the
// SDK's option.WithResponseInto) so that an error can read its headers.
// The response is nil when the request never got one.
func Send[P, R, O any](ctx context.Context, params P, ropts []O, onDelta func(string),
	responseInto func(**http.Response) O,
	plain func(context.Context, P, ...O) (R, error),
	stream func(context.Context, P, func(string), []O) (R, error),
) (R, *http.Response, error) {
	var httpResp *http.Response
	ropts = append(ropts, responseInto(&httpResp))
	var (
		r   R
		err error
	)
	if onDelta == nil {
		r, err = plain(ctx, params, ropts...)
	} else {
		r, err = stream(ctx, params, onDelta, ropts)
	}
	return r, httpResp, err
}

// Stream is the server-sent event stream of an SDK-generated client
// (its packages/ssestream.Stream[T]).
type Stream[T any] interface {
	Next() bool
	Current() T
	Err() error
	Close() error
}

// Drain passes every event of s to each, in order, noting each to idle
// (the watchdog s was opened under, see [WatchIdle]), and closes s. It
// returns the first error of each, else the stream's, or the
// *[llm.IdleError] when idle ended the stream.
func Drain[T any](s Stream[T], idle *Idle, each func(T) error) error {
	defer s.Close()
	for s.Next() {
		idle.Event()
		if err := each(s.Current()); err != nil {
			return err
		}
	}
	return idle.Err(s.Err())
}
