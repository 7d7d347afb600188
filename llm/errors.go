package llm

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrConstraintRejected marks a backend that refused the request's output
// constraint (an Ollama too old for a `format` schema, a server without
// `grammar` or `strict` support). Every *[ConstraintError] matches it.
var ErrConstraintRejected = errors.New("llm: backend rejected the output constraint")

// StatusError is an HTTP failure of a backend.
type StatusError struct {
	Backend    string // "ollama", "openai", ...
	StatusCode int
	// RetryAfter is the server's Retry-After, 0 when it sent none.
	RetryAfter time.Duration
	Message    string
	Err        error // the client library's error
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("llm: %s: HTTP %d", e.Backend, e.StatusCode)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Unwrap returns the client library's error.
func (e *StatusError) Unwrap() error { return e.Err }

// Temporary reports whether the failure is worth retrying: 429 and 5xx.
func (e *StatusError) Temporary() bool {
	return e.StatusCode == 429 || e.StatusCode >= 500
}

// DefaultStreamIdleTimeout is how long a streamed reply may stay silent
// (no event before its first, or between two) when an adapter's
// StreamIdleTimeout option is 0. It is long enough for a CPU server to
// read a long prompt before its first token, or to load a model, and
// bounds a stream that sends nothing, or only keep-alive comments.
const DefaultStreamIdleTimeout = 5 * time.Minute

// ErrStreamIdle is matched by every *[IdleError].
var ErrStreamIdle = errors.New("llm: the stream was silent for too long")

// IdleError is a streamed reply that sent no event for Timeout: before
// its first event, or between two (a keep-alive comment is no event). It
// is [Temporary]: [Checked] retries it like a 5xx.
//
// [Temporary]: [IdleError.Temporary]
type IdleError struct {
	Backend string
	Timeout time.Duration
}

func (e *IdleError) Error() string {
	return fmt.Sprintf("llm: %s: the stream sent no event for %v (the stream idle timeout)", e.Backend, e.Timeout)
}

// Is reports whether target is [ErrStreamIdle].
func (e *IdleError) Is(target error) bool { return target == ErrStreamIdle }

// Temporary reports true: a server that went silent may answer again.
func (e *IdleError) Temporary() bool { return true }

// ConstraintError is a backend's refusal of the request's constraint.
type ConstraintError struct {
	Backend string
	Mode    Mode
	// Message is the server's explanation, or the adapter's when the
	// backend cannot take the mode at all.
	Message string
	Err     error
	// Deferred reports that the server refused deferred loading
	// ([Request.Deferred]: a model or API version without tool search or
	// tool references), not the output constraint: the same request
	// without Deferred, its shortlist as plain native tools, can succeed.
	Deferred bool
}

func (e *ConstraintError) Error() string {
	if e.Deferred {
		return fmt.Sprintf("llm: %s rejected deferred tool loading: %s", e.Backend, e.Message)
	}
	return fmt.Sprintf("llm: %s rejected the %s constraint: %s", e.Backend, e.Mode, e.Message)
}

// Unwrap returns [ErrConstraintRejected] and the underlying error.
func (e *ConstraintError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrConstraintRejected}
	}
	return []error{ErrConstraintRejected, e.Err}
}

// Attempt is one rejected reply of a repair loop.
type Attempt struct {
	Raw     string
	Problem OutputProblem
	Reason  string
	Err     error
}

// RepairError says that the model kept replying with output that could
// not be acted on until the repair budget ran out. It matches
// [ErrInvalidOutput], and [errors.As] finds the first attempt's *[OutputError].
type RepairError struct {
	Attempts []Attempt // every attempt, in order
	// Usage sums the attempts' token usage (the tokens were spent).
	Usage Usage
}

func (e *RepairError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm: no usable reply after %d attempts", len(e.Attempts))
	for i, a := range e.Attempts {
		fmt.Fprintf(&b, "; %d: %s: %s", i+1, a.Problem, a.Reason)
	}
	return b.String()
}

// Unwrap returns [ErrInvalidOutput] and each attempt's error, in order.
func (e *RepairError) Unwrap() []error {
	errs := []error{ErrInvalidOutput}
	for _, a := range e.Attempts {
		if a.Err != nil {
			errs = append(errs, a.Err)
		}
	}
	return errs
}

// ParseRetryAfter reads an HTTP Retry-After value, delay-seconds or an
// HTTP-date (relative to now), as a duration; 0 when absent, malformed or
// in the past.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 || math.IsNaN(secs) || secs > maxRetryAfter.Seconds() {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}

// maxRetryAfter bounds parsed values so that durations cannot overflow.
const maxRetryAfter = 24 * time.Hour
