package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Log records discovery queries so that misses can be found later. Record
// may be called concurrently; an error is counted in the metrics and does
// not fail the query.
type Log interface {
	Record(ctx context.Context, e Entry) error
}

// Entry is one logged discovery query.
type Entry struct {
	Time              time.Time         `json:"time"`
	Principal         string            `json:"principal"`
	Tenant            string            `json:"tenant"`
	Query             string            `json:"query"`
	Context           []string          `json:"context,omitempty"`
	Lang              string            `json:"lang,omitempty"`
	Candidates        []LoggedCandidate `json:"candidates"`
	Confidence        float64           `json:"confidence"`
	Reformulated      bool              `json:"reformulated"`
	ReformulatedQuery string            `json:"reformulated_query,omitempty"`
	Authorized        int               `json:"authorized"`
}

// LoggedCandidate is a shortlisted tool in a log entry.
type LoggedCandidate struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
}

// JSONLog writes one JSON object per line to an io.Writer. It is safe for
// concurrent use; lines are never interleaved.
type JSONLog struct {
	mu sync.Mutex
	w  io.Writer
}

var _ Log = (*JSONLog)(nil)

// NewJSONLog returns a log writing JSON Lines to w. The caller owns w (and
// closes it after the last Record).
func NewJSONLog(w io.Writer) *JSONLog { return &JSONLog{w: w} }

// Record writes e as one line.
func (l *JSONLog) Record(_ context.Context, e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("discovery: log: %w", err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("discovery: log: %w", err)
	}
	return nil
}
